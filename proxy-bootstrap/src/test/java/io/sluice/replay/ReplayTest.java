package io.sluice.replay;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.capture.CaptureOptions;
import io.sluice.capture.CaptureReader;
import io.sluice.capture.CaptureRecord;
import io.sluice.capture.CaptureRecord.CommandRecord;
import io.sluice.capture.CaptureRecord.Outcome;
import io.sluice.json.Json;
import io.sluice.protocol.Command;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Capture a read-write workload through Sluice in front of one MariaDB, replay it against a second MariaDB loaded with
 * the same initial data, and compare: the round trip, with the speed and read-only modes.
 *
 * <p>The workload is sysbench's oltp_read_write shape driven over JDBC (the machine running the tests need not have
 * sysbench): per transaction, point selects, four kinds of range select, an index and a non-index update, a delete
 * and an insert of the same row, half of the sessions with server-side prepared statements. Each session writes only
 * its own rows, so the replay's result does not depend on how sessions interleave.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class ReplayTest {
    private static final int ROWS = 400;
    private static final int SESSIONS = 4;
    private static final int TRANSACTIONS = 15;

    private static TestMariaDb source;
    private static ExtraMariaDb target;
    private static String db;
    private static Sluice sluice;
    /** The read-write capture, made once and replayed by several tests. */
    private static Path readWrite;

    @TempDir
    static Path tmp;

    @BeforeAll
    static void captureReadWriteWorkload() throws Exception {
        source = TestMariaDb.get();
        db = source.createDatabase("replay");
        target = ExtraMariaDb.start("replay-target");
        target.execute("CREATE DATABASE `" + db + "`");
        load(source::execute);
        load(target::execute);
        sluice = Sluice.start(ProxyUnderTest.builder().config());

        readWrite = tmp.resolve("read-write");
        sluice.startCapture(CaptureOptions.of(readWrite).withMinFreeSpace(0));
        runSessions(SESSIONS, ReplayTest::readWriteSession);
        Thread.sleep(200); // the session ends reach the proxy a moment after the clients' close returns
        assertThat(sluice.stopCapture().dropped()).isZero();
    }

    @AfterAll
    static void stop() {
        if (sluice != null) {
            sluice.close();
        }
        if (target != null) {
            target.close();
        }
        source.dropDatabase(db);
    }

    private interface Executor {
        void execute(String... sql);
    }

    /** sysbench's sbtest1 with deterministic contents, the same on both servers. */
    private static void load(Executor server) {
        StringBuilder insert = new StringBuilder("INSERT INTO `" + db + "`.sbtest1 (id, k, c, pad) VALUES ");
        for (int id = 1; id <= ROWS; id++) {
            insert.append(id == 1 ? "" : ",").append("(").append(id).append(",").append(id * 7 % ROWS).append(",'c")
                    .append(id).append("','pad").append(id).append("')");
        }
        server.execute("CREATE TABLE `" + db + "`.sbtest1 (id INT NOT NULL PRIMARY KEY, k INT NOT NULL DEFAULT 0,"
                + " c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)) ENGINE=InnoDB",
                insert.toString());
    }

    private static Connection connectThroughSluice(boolean serverPrepared) throws SQLException {
        String url = JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), db,
                serverPrepared ? "useServerPrepStmts=true" : "");
        return JdbcDriver.MARIADB.connect(url, ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    private interface SessionWork {
        void run(int session) throws Exception;
    }

    private static void runSessions(int sessions, SessionWork work) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(sessions);
        try {
            List<Future<Object>> done = new ArrayList<>();
            for (int i = 0; i < sessions; i++) {
                int session = i;
                done.add(pool.submit((Callable<Object>) () -> {
                    work.run(session);
                    return null;
                }));
            }
            for (Future<Object> f : done) {
                f.get();
            }
        } finally {
            pool.shutdown();
        }
    }

    /** One session of the oltp_read_write-like workload; even sessions use server-side prepared statements. */
    private static void readWriteSession(int session) throws Exception {
        Random random = new Random(session);
        try (Connection c = connectThroughSluice(session % 2 == 0)) {
            c.setAutoCommit(false);
            try (PreparedStatement point = c.prepareStatement("SELECT c FROM sbtest1 WHERE id = ?");
                 PreparedStatement range = c.prepareStatement("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?");
                 PreparedStatement sum = c.prepareStatement("SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?");
                 PreparedStatement order = c.prepareStatement(
                         "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c");
                 PreparedStatement distinct = c.prepareStatement(
                         "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c");
                 PreparedStatement updateIndex = c.prepareStatement("UPDATE sbtest1 SET k = k + 1 WHERE id = ?");
                 PreparedStatement updateNonIndex = c.prepareStatement("UPDATE sbtest1 SET c = ? WHERE id = ?");
                 PreparedStatement delete = c.prepareStatement("DELETE FROM sbtest1 WHERE id = ?");
                 PreparedStatement insert = c.prepareStatement(
                         "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)");
                 Statement statement = c.createStatement()) {
                for (int t = 0; t < TRANSACTIONS; t++) {
                    for (int i = 0; i < 4; i++) {
                        point.setInt(1, 1 + random.nextInt(ROWS));
                        drain(point);
                    }
                    for (PreparedStatement r : List.of(range, sum, order, distinct)) {
                        int from = 1 + random.nextInt(ROWS - 20);
                        r.setInt(1, from);
                        r.setInt(2, from + 9);
                        drain(r);
                    }
                    // Writes touch only this session's rows (id % SESSIONS == session).
                    int own = session + 1 + SESSIONS * random.nextInt(ROWS / SESSIONS - 1);
                    updateIndex.setInt(1, own);
                    assertThat(updateIndex.executeUpdate()).isEqualTo(1);
                    updateNonIndex.setString(1, "s" + session + "-" + t + "-" + random.nextInt(1_000_000));
                    updateNonIndex.setInt(2, own);
                    assertThat(updateNonIndex.executeUpdate()).isEqualTo(1);
                    delete.setInt(1, own);
                    assertThat(delete.executeUpdate()).isEqualTo(1);
                    insert.setInt(1, own);
                    insert.setInt(2, random.nextInt(ROWS));
                    insert.setString(3, "i" + session + "-" + t);
                    insert.setString(4, "pad");
                    assertThat(insert.executeUpdate()).isEqualTo(1);
                    if (t % 5 == 0) {
                        // A text-protocol statement and an error the replay must reproduce, not report as new.
                        statement.executeUpdate("UPDATE sbtest1 SET pad = 'text " + t + "' WHERE id = " + own);
                        try {
                            statement.executeQuery("SELECT * FROM no_such_table").close();
                        } catch (SQLException expected) {
                            assertThat(expected.getErrorCode()).isEqualTo(1146);
                        }
                    }
                    c.commit();
                }
            }
        }
    }

    private static void drain(PreparedStatement select) throws SQLException {
        try (ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
                rs.getString(1);
            }
        }
    }

    private static String checksum(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("CHECKSUM TABLE `" + db + "`.sbtest1 EXTENDED")) {
            rs.next();
            return rs.getString(2);
        }
    }

    private static long status(Connection c, String variable) throws SQLException {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE '" + variable + "'")) {
            rs.next();
            return rs.getLong(2);
        }
    }

    private static ReplayOptions options(Path input, double speed, boolean readOnly, Path report) {
        return new ReplayOptions(input, "127.0.0.1", target.port(), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD,
                speed, readOnly, report, null, 0);
    }

    @Test
    void roundTripReproducesTheWorkloadWithoutNewErrorsOrMismatches() throws Exception {
        List<CaptureRecord> captured = CaptureReader.readAll(readWrite, null);
        List<CommandRecord> commands = captured.stream().filter(CommandRecord.class::isInstance)
                .map(CommandRecord.class::cast).toList();
        assertThat(commands).anyMatch(r -> r.command() == Command.COM_STMT_EXECUTE)
                .anyMatch(r -> r.command() == Command.COM_QUERY && r.outcome() == Outcome.ERROR)
                .anyMatch(r -> r.affectedRows() == 1).anyMatch(r -> r.rows() == 10);
        Path reportFile = tmp.resolve("round-trip.json");

        ReplayReport report = Replay.run(options(readWrite, 1.0, false, reportFile), null);

        assertThat(report.capturedCommands()).isEqualTo(commands.size());
        assertThat(report.replayed()).isEqualTo(commands.size());
        assertThat(report.skipped()).isZero();
        assertThat(report.newErrors()).isZero();
        assertThat(report.vanishedErrors()).isZero();
        assertThat(report.rowCountMismatches()).isZero();
        assertThat(report.affectedRowMismatches()).isZero();
        try (Connection s = source.rootConnection(); Connection t = target.rootConnection()) {
            assertThat(checksum(t)).as("the target ends with the source's data").isEqualTo(checksum(s));
        }
        Map<String, Object> json = Json.parseObject(java.nio.file.Files.readString(reportFile));
        assertThat(json).containsKeys("commands", "errors", "mismatches", "latencyMillis", "slowest");
        // Which digests are slowest depends on the machine; what is fixed is the shape: at most ten, slowest first,
        // literals replaced.
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> slowest = (List<Map<String, Object>>) json.get("slowest");
        assertThat(slowest).isNotEmpty().hasSizeLessThanOrEqualTo(10);
        assertThat(slowest).allSatisfy(row -> assertThat(row).containsKeys("digest", "count", "capturedAvgMillis",
                "replayedAvgMillis", "replayedP95Millis"));
        assertThat(slowest).extracting(row -> ((Number) row.get("replayedAvgMillis")).doubleValue())
                .isSortedAccordingTo(java.util.Comparator.reverseOrder());
        assertThat(slowest).extracting(row -> (String) row.get("digest"))
                .allSatisfy(digest -> assertThat(digest).doesNotContainPattern("id = [0-9]"));
        ByteArrayOutputStream summary = new ByteArrayOutputStream();
        report.printSummary(new PrintStream(summary, true, StandardCharsets.UTF_8));
        assertThat(summary.toString(StandardCharsets.UTF_8)).contains("errors:    0 new on replay, 0 vanished")
                .contains("mismatches: 0 affected-row, 0 row-count").contains("p99");
    }

    @Test
    void readOnlySendsNoWrites() throws Exception {
        try (Connection t = target.rootConnection()) {
            String before = checksum(t);
            long inserts = status(t, "Com_insert");
            long updates = status(t, "Com_update");
            long deletes = status(t, "Com_delete");
            long executes = status(t, "Com_stmt_execute");

            ReplayReport report = Replay.run(options(readWrite, 4.0, true, null), null);

            assertThat(report.replayed()).isPositive();
            assertThat(report.skippedBy()).containsKey("read-only: writes");
            assertThat(status(t, "Com_insert")).isEqualTo(inserts);
            assertThat(status(t, "Com_update")).isEqualTo(updates);
            assertThat(status(t, "Com_delete")).isEqualTo(deletes);
            assertThat(status(t, "Com_stmt_execute")).as("the reads did run").isGreaterThan(executes);
            assertThat(checksum(t)).isEqualTo(before);
        }
    }

    @Test
    void speedTwoTakesAboutHalfTheTime() throws Exception {
        Path paced = tmp.resolve("paced");
        sluice.startCapture(CaptureOptions.of(paced).withMinFreeSpace(0));
        runSessions(3, session -> {
            try (Connection c = connectThroughSluice(session == 0); Statement s = c.createStatement()) {
                for (int i = 0; i < 12; i++) {
                    s.executeQuery("SELECT " + i + " + " + session).close();
                    Thread.sleep(100); // think time: what the replay must scale
                }
            }
        });
        Thread.sleep(200);
        sluice.stopCapture();

        ReplayReport normal = Replay.run(options(paced, 1.0, false, null), null);
        ReplayReport twice = Replay.run(options(paced, 2.0, false, null), null);

        double span = normal.capturedSpanNanos();
        assertThat(span).isGreaterThan(1.0e9);
        assertThat(normal.elapsedNanos() / span).as("speed 1 vs captured").isBetween(0.8, 1.5);
        assertThat((double) twice.elapsedNanos() / normal.elapsedNanos()).as("speed 2 vs speed 1")
                .isBetween(0.35, 0.75);
        assertThat(twice.replayed()).isEqualTo(normal.replayed()).isEqualTo(twice.capturedCommands());
        assertThat(twice.newErrors()).isZero();
    }
}
