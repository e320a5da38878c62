package io.sluice.capture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.sluice.Sluice;
import io.sluice.capture.CaptureRecord.CommandRecord;
import io.sluice.capture.CaptureRecord.Outcome;
import io.sluice.capture.CaptureRecord.SessionBegin;
import io.sluice.capture.CaptureRecord.SessionEnd;
import io.sluice.protocol.Command;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.SluiceExtension;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Capture through a running Sluice with real clients: what is recorded for each command, sessions that were open
 * before the capture, and captures that stop by themselves (vanished directory, size limit) while clients carry on
 * without an error.
 */
@Tag("server")
class TrafficCaptureTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults()
            .sluiceOnly("captures what crosses Sluice")
            .database("capture", "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))");

    @TempDir
    Path tmp;

    private static Sluice sluice() {
        return proxy.sluice();
    }

    @AfterEach
    void stopCapture() {
        if (sluice().captureStatus().running()) {
            sluice().stopCapture();
        }
    }

    private static Connection connect(String params) throws SQLException {
        String url = JdbcDriver.MARIADB.url("127.0.0.1", sluice().port(), proxy.db(), params);
        return JdbcDriver.MARIADB.connect(url, ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    private static List<CommandRecord> commands(List<CaptureRecord> records) {
        return records.stream().filter(CommandRecord.class::isInstance).map(CommandRecord.class::cast).toList();
    }

    private static String text(CommandRecord r) {
        return new String(r.payload(), StandardCharsets.UTF_8);
    }

    private static CommandRecord query(List<CaptureRecord> records, String sql) {
        return commands(records).stream().filter(r -> r.command() == Command.COM_QUERY && text(r).equals(sql))
                .findFirst().orElseThrow(() -> new AssertionError("not captured: " + sql));
    }

    @Test
    void recordsEveryCommandWithItsOutcomeAndNeverThePassword() throws Exception {
        Path dir = tmp.resolve("capture");
        sluice().startCapture(CaptureOptions.of(dir).withCompress(false).withMinFreeSpace(0));
        long threadId;
        try (Connection c = connect("useServerPrepStmts=true"); Statement s = c.createStatement()) {
            threadId = c.unwrap(org.mariadb.jdbc.Connection.class).getThreadId(); // Sluice's id, from its greeting
            s.executeUpdate("DELETE FROM t");
            assertThat(s.executeUpdate("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")).isEqualTo(3);
            try (ResultSet rs = s.executeQuery("SELECT * FROM t")) {
                while (rs.next()) {
                    rs.getInt(1);
                }
            }
            assertThatThrownBy(() -> s.executeQuery("SELECT * FROM nope")).isInstanceOf(SQLException.class);
            try (PreparedStatement ps = c.prepareStatement("SELECT v FROM t WHERE id = ?")) {
                ps.setInt(1, 2);
                ps.executeQuery().close();
                ps.setInt(1, 9);
                ps.executeQuery().close();
            }
            assertThat(s.executeUpdate("UPDATE t SET v = 'z' WHERE id <= 2")).isEqualTo(2);
        }
        awaitSessionEnd(dir);

        CaptureStatus status = sluice().stopCapture();

        assertThat(status.dropped()).isZero();
        List<CaptureRecord> records = CaptureReader.readAll(dir, null);
        assertThat(records).extracting(CaptureRecord::sessionId).containsOnly((int) threadId);
        assertThat(records.get(0)).isInstanceOfSatisfying(SessionBegin.class, begin -> {
            assertThat(begin.user()).isEqualTo(ProxyUnderTest.USER);
            assertThat(begin.schema()).isEqualTo(proxy.db());
            assertThat(begin.openBefore()).isFalse();
        });
        assertThat(records.get(records.size() - 1)).isInstanceOf(SessionEnd.class);
        assertThat(query(records, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')"))
                .satisfies(r -> assertThat(r.affectedRows()).isEqualTo(3))
                .satisfies(r -> assertThat(r.outcome()).isEqualTo(Outcome.OK));
        assertThat(query(records, "SELECT * FROM t").rows()).isEqualTo(3);
        assertThat(query(records, "SELECT * FROM nope")).satisfies(r -> {
            assertThat(r.outcome()).isEqualTo(Outcome.ERROR);
            assertThat(r.errorCode()).isEqualTo(1146);
        });
        assertThat(query(records, "UPDATE t SET v = 'z' WHERE id <= 2").affectedRows()).isEqualTo(2);
        CommandRecord prepare = commands(records).stream().filter(r -> r.command() == Command.COM_STMT_PREPARE)
                .filter(r -> text(r).equals("SELECT v FROM t WHERE id = ?")).findFirst().orElseThrow();
        assertThat(prepare.statementId()).isPositive();
        List<CommandRecord> executes = commands(records).stream()
                .filter(r -> r.command() == Command.COM_STMT_EXECUTE).toList();
        assertThat(executes).hasSize(2).allSatisfy(e -> assertThat(
                ByteBuffer.wrap(e.payload()).order(ByteOrder.LITTLE_ENDIAN).getInt(0)).isEqualTo(
                (int) prepare.statementId()));
        assertThat(executes).extracting(CommandRecord::rows).containsExactly(1L, 0L);
        List<CommandRecord> answered = commands(records).stream().filter(r -> r.outcome() != Outcome.NO_RESPONSE)
                .toList();
        assertThat(answered).allSatisfy(r -> assertThat(r.durationNanos()).isPositive());
        assertThat(answered).extracting(CommandRecord::timeNanos).isSorted();
        for (Path file : CaptureFormat.files(dir)) {
            assertThat(new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1))
                    .contains("SELECT * FROM nope").doesNotContain(ProxyUnderTest.PASSWORD);
        }
    }

    @Test
    void aSessionOpenBeforeTheCaptureJoinsAtItsNextCommand() throws Exception {
        Path dir = tmp.resolve("late");
        try (Connection c = connect(""); Statement s = c.createStatement()) {
            s.executeQuery("SELECT 1").close();
            sluice().startCapture(CaptureOptions.of(dir).withMinFreeSpace(0));
            s.executeQuery("SELECT 'after the start'").close();
            sluice().stopCapture();
            s.executeQuery("SELECT 'after the stop'").close();
        }

        List<CaptureRecord> records = CaptureReader.readAll(dir, null);

        assertThat(records).filteredOn(SessionBegin.class::isInstance).singleElement()
                .satisfies(r -> assertThat(((SessionBegin) r).openBefore()).isTrue());
        assertThat(commands(records)).extracting(TrafficCaptureTest::text).containsExactly("SELECT 'after the start'");
        assertThat(records).filteredOn(SessionEnd.class::isInstance).isEmpty(); // it ended after the capture did
    }

    @Test
    void aVanishedDirectoryStopsTheCaptureWithALoggedReasonWhileClientsCarryOn() throws Exception {
        Path dir = tmp.resolve("doomed");
        ListAppender<ILoggingEvent> logged = listen();
        try (Traffic traffic = new Traffic(3)) {
            sluice().startCapture(CaptureOptions.of(dir).withMinFreeSpace(0));
            traffic.awaitQueries(200);
            deleteRecursively(dir);

            CaptureStatus status = awaitStopped();
            long queriesAtStop = traffic.queries.get();
            traffic.awaitQueries(queriesAtStop + 200);

            assertThat(status.stopReason()).isEqualTo("output directory " + dir + " disappeared");
            assertThat(traffic.failure.get()).isNull();
            assertThat(logged.list).anySatisfy(e -> {
                assertThat(e.getLevel()).isEqualTo(Level.WARN);
                assertThat(e.getFormattedMessage()).contains("stopped: output directory " + dir + " disappeared");
            });
        } finally {
            unlisten(logged);
        }
        assertThat(dir).doesNotExist(); // nothing was written after the directory went
    }

    @Test
    void theSizeLimitStopsTheCaptureWhileClientsCarryOn() throws Exception {
        Path dir = tmp.resolve("bounded");
        try (Traffic traffic = new Traffic(3)) {
            sluice().startCapture(CaptureOptions.of(dir).withCompress(false).withMaxSize(64 * 1024)
                    .withMinFreeSpace(0));

            CaptureStatus status = awaitStopped();
            long queriesAtStop = traffic.queries.get();
            traffic.awaitQueries(queriesAtStop + 200);

            assertThat(status.stopReason()).isEqualTo("maxSize 65536 bytes reached");
            assertThat(status.bytes()).isLessThanOrEqualTo(64 * 1024);
            assertThat(traffic.failure.get()).isNull();
            assertThat(commands(CaptureReader.readAll(dir, null))).isNotEmpty();
        }
    }

    private static CaptureStatus awaitStopped() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (sluice().captureStatus().running()) {
            assertThat(System.nanoTime()).as("capture still running").isLessThan(deadline);
            Thread.sleep(20);
        }
        return sluice().captureStatus();
    }

    /** The session end is recorded when the proxy sees the close, a moment after the client's close returns. */
    private static void awaitSessionEnd(Path dir) throws InterruptedException {
        Thread.sleep(200);
    }

    private static ListAppender<ILoggingEvent> listen() {
        ListAppender<ILoggingEvent> appender = new ListAppender<>();
        appender.start();
        ((Logger) LoggerFactory.getLogger("io.sluice.capture")).addAppender(appender);
        return appender;
    }

    private static void unlisten(ListAppender<ILoggingEvent> appender) {
        ((Logger) LoggerFactory.getLogger("io.sluice.capture")).detachAppender(appender);
    }

    private static void deleteRecursively(Path dir) throws IOException {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /** Clients running queries until closed; the first failure any of them meets is kept. */
    private static final class Traffic implements AutoCloseable {
        final AtomicLong queries = new AtomicLong();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final List<Thread> threads = new ArrayList<>();

        Traffic(int clients) {
            for (int i = 0; i < clients; i++) {
                int client = i;
                Thread thread = new Thread(() -> run(client), "traffic-" + i);
                thread.start();
                threads.add(thread);
            }
        }

        private void run(int client) {
            try (Connection c = connect("useServerPrepStmts=true");
                 PreparedStatement select = c.prepareStatement("SELECT v FROM t WHERE id = ?");
                 Statement s = c.createStatement()) {
                int id = 1000 + client;
                while (running.get()) {
                    select.setInt(1, ThreadLocalRandom.current().nextInt(1, 4));
                    select.executeQuery().close();
                    s.executeUpdate("REPLACE INTO t VALUES (" + id + ", 'x" + queries.get() % 1000 + "')");
                    queries.addAndGet(2);
                }
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        }

        void awaitQueries(long count) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (queries.get() < count && failure.get() == null) {
                assertThat(System.nanoTime()).as("queries: " + queries.get()).isLessThan(deadline);
                Thread.sleep(10);
            }
        }

        @Override
        public void close() throws InterruptedException {
            running.set(false);
            for (Thread thread : threads) {
                thread.join(10_000);
            }
        }
    }
}
