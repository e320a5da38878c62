package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.sluice.api.BackendSnapshot;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Admission control in {@code pooling: TRANSACTION} (issue #8): when every server connection is in use, a session's
 * statement waits in a fair queue up to the data source's connection timeout, then gets ERR 1040 with a clear message;
 * and a storm of client connections never makes Sluice open more than {@code maxPoolSize} server connections.
 */
@ExtendWith(LeakDetection.class)
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Tag("server")
class AdmissionControlTest {

    private static final long TIMEOUT_MILLIS = 1_500;

    private static String db;
    private ProxyUnderTest proxy;
    private final List<Connection> open = new ArrayList<>();

    @BeforeAll
    static void database() {
        assumeFalse(ProxyUnderTest.isDirect(), "transaction pooling is a proxy feature");
        db = TestMariaDb.get().createDatabase("sluice_mux_admission");
        TestMariaDb.get().execute("CREATE TABLE `" + db + "`.t (id INT PRIMARY KEY) ENGINE=InnoDB",
                "INSERT INTO `" + db + "`.t VALUES (1), (2), (3)");
    }

    @AfterAll
    static void dropDatabase() {
        TestMariaDb.get().dropDatabase(db);
    }

    @AfterEach
    void closeAll() throws SQLException {
        for (Connection c : open) {
            c.close();
        }
        open.clear();
        if (proxy != null) {
            proxy.close();
            proxy = null;
        }
    }

    private Connection connect() throws SQLException {
        Connection c = proxy.connect(JdbcDriver.MARIADB, db, "");
        open.add(c);
        return c;
    }

    private static long beginAndHold(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("START TRANSACTION");
            try (ResultSet rs = s.executeQuery("SELECT CONNECTION_ID() FROM t LIMIT 1")) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private static void execute(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static long count(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private BackendSnapshot pool() {
        return proxy.sluice().backends().get(0);
    }

    @Test
    void exhaustedPoolAnswersTooManyConnectionsAfterTheTimeoutAndOthersKeepWorking() throws Exception {
        proxy = ProxyUnderTest.builder().transactionPooling().maxPoolSize(2).connectionTimeoutMillis(TIMEOUT_MILLIS)
                .start();
        Connection a = connect();
        Connection b = connect();
        Connection c = connect(); // logged in (its schema checked) while connections were still free
        long ida = beginAndHold(a);
        long idb = beginAndHold(b);
        assertThat(ida).isNotEqualTo(idb);

        long started = System.nanoTime();
        SQLException refused = catchThrowableOfType(SQLException.class, () -> count(c));
        long waitedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
        assertThat((Throwable) refused).as("a third statement while both server connections are in transactions").isNotNull();
        assertThat(refused.getErrorCode()).isEqualTo(1040);
        assertThat(refused.getSQLState()).isEqualTo("08004");
        assertThat(refused.getMessage()).contains("Too many connections", "maxPoolSize 2");
        assertThat(waitedMillis).as("it waited for a connection first").isGreaterThanOrEqualTo(TIMEOUT_MILLIS - 200);

        // The two transactions are unaffected and go on.
        assertThat(count(a)).isEqualTo(3);
        execute(a, "COMMIT");
        execute(b, "INSERT INTO t VALUES (4)");
        execute(b, "ROLLBACK");
        // The refused session is still usable now that connections are free.
        assertThat(count(c)).isEqualTo(3);
        assertThat(pool().openConnections()).isLessThanOrEqualTo(2);
    }

    /**
     * A client that pipelines its statements while the pool is exhausted gets an answer to each: every statement held
     * behind the connection that did not come gets the same ERR 1040, and a command that has no answer gets none. Before, only the first was answered and the
     * client waited for ever for the others.
     */
    @Test
    void aPipeliningClientGetsAnErrorForEveryStatementWhenNoConnectionComes() throws Exception {
        proxy = ProxyUnderTest.builder().transactionPooling().maxPoolSize(2).connectionTimeoutMillis(TIMEOUT_MILLIS)
                .start();
        Connection a = connect();
        Connection b = connect();
        try (RawMySqlClient client = RawMySqlClient.login("127.0.0.1", proxy.port(), ProxyUnderTest.USER,
                ProxyUnderTest.PASSWORD, db)) {
            beginAndHold(a);
            beginAndHold(b);
            // Answered by nothing, by a server as by Sluice: an ERR for it would be read as the next statement's.
            client.sendCommand(0x18, new byte[] {1, 0, 0, 0, 0, 0, 'x'}); // COM_STMT_SEND_LONG_DATA
            client.sendQuery("SELECT COUNT(*) FROM t");
            client.sendQuery("SELECT 2");
            client.sendQuery("SELECT 3");
            for (int i = 0; i < 3; i++) {
                RawMySqlClient.Packet answer = client.readResult().end();
                assertThat(answer.isErr()).as("answer %d: %s", i + 1, answer).isTrue();
                assertThat(answer.errorCode()).isEqualTo(1040);
            }
            execute(a, "COMMIT");
            assertThat(client.query("SELECT COUNT(*) FROM t").rows()).containsExactly(List.of("3"));
        }
    }

    @Test
    void pinnedSessionsThatExhaustThePoolAreNamedInTheErrorAndCountedInTheMetrics() throws Exception {
        proxy = ProxyUnderTest.builder().transactionPooling().maxPoolSize(2).connectionTimeoutMillis(TIMEOUT_MILLIS)
                .start();
        Connection a = connect();
        Connection b = connect();
        Connection c = connect();
        execute(a, "CREATE TEMPORARY TABLE tmp (id INT)"); // a temporary table pins a session to its connection
        execute(b, "LOCK TABLES t READ"); // so do table locks

        SQLException refused = catchThrowableOfType(SQLException.class, () -> count(c));
        assertThat((Throwable) refused).as("a third session while two pinned sessions hold both connections")
                .isNotNull();
        assertThat(refused.getErrorCode()).isEqualTo(1040);
        assertThat(refused.getMessage()).contains("maxPoolSize 2 in use",
                "2 sessions are pinned to their connection (1 temporary_table, 1 table_lock)")
                .containsPattern("raise dataSources\\.[^.]+\\.maxPoolSize");
        assertThat(pinnedNow()).containsEntry("temporary_table", 1).containsEntry("table_lock", 1);

        a.close();
        b.close();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!pinnedNow().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(pinnedNow()).as("closed sessions are pinned no more").isEmpty();
        assertThat(count(c)).isEqualTo(3);
    }

    /** Reasons with sessions pinned now, as the {@code sluice_sessions_pinned} gauge reads them. */
    private java.util.Map<String, Integer> pinnedNow() {
        var counts = proxy.sluice().metricSources().clients();
        java.util.Map<String, Integer> now = new java.util.TreeMap<>();
        for (int i = 0; i < counts.pinReasons().size(); i++) {
            if (counts.pinnedNow(i) > 0) {
                now.put(counts.pinReasons().get(i), counts.pinnedNow(i));
            }
        }
        return now;
    }

    @Test
    void waitingSessionsProceedInArrivalOrderWhenTransactionsEnd() throws Exception {
        proxy = ProxyUnderTest.builder().transactionPooling().maxPoolSize(2).connectionTimeoutMillis(10_000).start();
        Connection a = connect();
        Connection b = connect();
        Connection c = connect();
        Connection d = connect();
        beginAndHold(a);
        beginAndHold(b);
        ExecutorService waiters = Executors.newFixedThreadPool(2);
        try {
            Future<Long> first = waiters.submit(() -> beginAndHold(c));
            awaitPending(1);
            Future<Long> second = waiters.submit(() -> beginAndHold(d));
            awaitPending(2);
            assertThat(first.isDone()).isFalse();
            assertThat(second.isDone()).isFalse();

            execute(a, "COMMIT"); // one connection comes free: the first waiter gets it and holds it
            long firstId = first.get(10, TimeUnit.SECONDS);
            Thread.sleep(300);
            assertThat(second.isDone()).as("the later waiter still waits").isFalse();

            execute(b, "COMMIT");
            long secondId = second.get(10, TimeUnit.SECONDS);
            assertThat(firstId).isNotEqualTo(secondId);
            execute(c, "COMMIT");
            execute(d, "COMMIT");
            assertThat(count(a)).isEqualTo(3);
        } finally {
            waiters.shutdownNow();
        }
    }

    private void awaitPending(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (pool().pendingAcquires() < n && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(pool().pendingAcquires()).as("sessions waiting for a server connection").isEqualTo(n);
    }

    @Test
    void connectionStormNeverOpensMoreThanMaxPoolSize() throws Exception {
        int clients = 100;
        int maxPool = 4;
        proxy = ProxyUnderTest.builder().transactionPooling().maxPoolSize(maxPool).connectionTimeoutMillis(30_000)
                .maxConnections(clients + 20).start();
        AtomicInteger maxOpen = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        Thread watcher = new Thread(() -> {
            while (!stop.get()) {
                maxOpen.accumulateAndGet(pool().openConnections(), Math::max);
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "storm-watcher");
        watcher.setDaemon(true);
        watcher.start();
        Set<Long> serverIds = ConcurrentHashMap.newKeySet();
        CyclicBarrier together = new CyclicBarrier(clients);
        ExecutorService storm = Executors.newFixedThreadPool(clients);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                int n = i;
                JdbcDriver driver = i % 2 == 0 ? JdbcDriver.MARIADB : JdbcDriver.MYSQL;
                results.add(storm.submit(() -> {
                    try (Connection c = proxy.connect(driver, db, DifferentialHarness.params(driver, ""))) {
                        together.await(30, TimeUnit.SECONDS);
                        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(
                                "SELECT CONNECTION_ID(), COUNT(*) + " + n + " FROM t")) {
                            rs.next();
                            serverIds.add(rs.getLong(1));
                            return rs.getLong(2) - n;
                        }
                    }
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
            for (Future<Long> f : results) {
                assertThat(f.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)).isEqualTo(3);
            }
        } finally {
            storm.shutdownNow();
            stop.set(true);
            watcher.join(5_000);
        }
        assertThat(maxOpen.get()).as("server connections open at once").isBetween(1, maxPool);
        try (Connection root = TestMariaDb.get().rootConnection(); Statement s = root.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID IN ("
                     + serverIds.toString().replaceAll("[\\[\\]]", "") + ")")) {
            rs.next();
            assertThat(rs.getLong(1)).as("of the server connections the clients saw, still open").isLessThanOrEqualTo(maxPool);
        }
        assertThat(serverIds).as("distinct server connections the 100 clients ran on").isNotEmpty();
    }
}
