package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Sluice;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.config.QueryRuleConfig.Block;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.ReplicationGroup;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Every query-rule action but {@code route} (which {@link QueryRuleRouteTest} covers) in a read/write split group on
 * a private primary and replica, with MariaDB Connector/J text statements and MySQL Connector/J server-side prepared
 * statements, on statements the split sends to the replica (plain reads) and to the primary (writes, and reads in a
 * transaction): {@code block} refuses on both routes before either server sees the statement;
 * {@code timeoutMilliseconds} ends a statement with the KILL sent to the server it runs on; {@code maxRows} cuts on
 * both; {@code maxConcurrency} counts the statements of both routes together and gives every permit back;
 * {@code maxPerSecond} holds back and refuses on both; {@code mirror} copies from a split session; and a reload adds
 * and removes a rule while split sessions run.
 */
@Tag("server")
class QueryRuleSplitTest {
    private static ReplicationGroup servers;
    private static Sluice sluice;

    @BeforeAll
    static void start() {
        servers = ReplicationGroup.start("rulessplit", 1);
        servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
                "INSERT INTO app.t VALUES (1, 1), (2, 2), (3, 3)", "CREATE TABLE app.events (v INT)");
        servers.awaitCaughtUp();
        for (ExtraMariaDb server : List.of(servers.primary(), servers.replica(0))) {
            server.execute("SET GLOBAL userstat = 1"); // TABLE_STATISTICS: which server read table t, and how often
        }
        ProxyConfig config = servers.sluiceConfig(3000)
                .pooling(PoolingConfig.defaults())
                .readWriteSplitting(servers.splitGroup("app_rw"))
                .build();
        sluice = Sluice.start(config);
    }

    @AfterAll
    static void stop() {
        if (sluice != null) {
            sluice.close();
        }
        if (servers != null) {
            servers.close();
        }
    }

    @AfterEach
    void noRules() {
        useRules();
    }

    private static void useRules(QueryRuleConfig... rules) {
        sluice.reload(sluice.config().withQueryRules(List.of(rules)));
    }

    private static QueryRuleConfig rule(String name, String pattern, Action action, long limit, String mirror,
            long maxWait) {
        Block block = action == Action.BLOCK ? new Block(1142, "42000", "refused by rule " + name) : null;
        return new QueryRuleConfig(name, null, pattern, List.of(), List.of(), List.of(), List.of(), action, null,
                block, limit, mirror, maxWait);
    }

    private static QueryRuleConfig rule(String name, String pattern, Action action, long limit) {
        return rule(name, pattern, action, limit, null, QueryRuleConfig.DEFAULT_MAX_WAIT);
    }

    private static Connection connect(JdbcDriver driver) throws SQLException {
        String params = driver == JdbcDriver.MYSQL ? "useServerPrepStmts=true" : "";
        return driver.connect(driver.url("127.0.0.1", sluice.port(), "app_rw", params), ProxyUnderTest.USER,
                ProxyUnderTest.PASSWORD);
    }

    private static QueryRule.Counters counters(String name) {
        return sluice.queryRules().rules().stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow()
                .counters();
    }

    private static int primaryPort() {
        return servers.primary().port();
    }

    private static int replicaPort() {
        return servers.replica(0).port();
    }

    /** The port of the server a session's next plain statement runs on. */
    private static int portOf(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT @@port FROM t WHERE id > 0 LIMIT 1")) {
            assertThat(rs.next()).isTrue();
            return rs.getInt(1);
        }
    }

    private static long queryLong(ExtraMariaDb server, String sql) throws SQLException {
        try (Connection root = server.rootConnection(); Statement s = root.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getLong(1) : 0;
        }
    }

    /** Rows of table {@code app.t} the server read since it started, by {@code userstat}. */
    private static long rowsRead(ExtraMariaDb server) throws SQLException {
        return queryLong(server, "SELECT ROWS_READ FROM information_schema.TABLE_STATISTICS"
                + " WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 't'");
    }

    /** Rows of table {@code app.t} the server changed since it started. */
    private static long rowsChanged(ExtraMariaDb server) throws SQLException {
        return queryLong(server, "SELECT ROWS_CHANGED FROM information_schema.TABLE_STATISTICS"
                + " WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 't'");
    }

    private static final String SLEEPERS = "SELECT COUNT(*) FROM information_schema.PROCESSLIST"
            + " WHERE ID <> CONNECTION_ID() AND INFO LIKE 'SELECT%SLEEP(%'";

    /**
     * Watches both servers' process lists every few milliseconds while a test runs: how many statements sleeping
     * ran on each at most, and on both together.
     */
    private static final class Sleepers implements AutoCloseable {
        private final AtomicBoolean stop = new AtomicBoolean();
        private final AtomicLong primary = new AtomicLong();
        private final AtomicLong replica = new AtomicLong();
        private final AtomicLong together = new AtomicLong();
        private final AtomicReference<Throwable> failure = new AtomicReference<>();
        private final Thread thread;

        Sleepers() {
            thread = new Thread(this::watch, "sleepers");
            thread.start();
        }

        private void watch() {
            try (Connection p = servers.primary().rootConnection(); Connection r = servers.replica(0).rootConnection();
                    Statement ps = p.createStatement(); Statement rs = r.createStatement()) {
                while (!stop.get()) {
                    long onPrimary = count(ps);
                    long onReplica = count(rs);
                    primary.accumulateAndGet(onPrimary, Math::max);
                    replica.accumulateAndGet(onReplica, Math::max);
                    together.accumulateAndGet(onPrimary + onReplica, Math::max);
                    Thread.sleep(5);
                }
            } catch (Throwable e) {
                failure.set(e);
            }
        }

        private static long count(Statement s) throws SQLException {
            try (ResultSet rs = s.executeQuery(SLEEPERS)) {
                rs.next();
                return rs.getLong(1);
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join(5_000);
            assertThat(failure.get()).isNull();
        }
    }

    private static void assertNoSleepers() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (queryLong(servers.primary(), SLEEPERS) + queryLong(servers.replica(0), SLEEPERS) > 0
                && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(queryLong(servers.primary(), SLEEPERS)).as("sleeping on the primary").isZero();
        assertThat(queryLong(servers.replica(0), SLEEPERS)).as("sleeping on the replica").isZero();
    }

    // ---- block ---------------------------------------------------------------------------------------------------

    private static void refused(ThrowingRunnable statement, String rule) {
        assertThatThrownBy(statement::run).isInstanceOfSatisfying(SQLException.class, e -> {
            assertThat(e.getErrorCode()).isEqualTo(1142);
            assertThat(e.getSQLState()).isEqualTo("42000");
            assertThat(e.getMessage()).contains("refused by rule " + rule);
        });
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void blockRefusesOnBothRoutesBeforeEitherServerSeesTheStatement() throws Exception {
        useRules(rule("point", "where id = \\?$", Action.BLOCK, 0));
        long readOnReplica = rowsRead(servers.replica(0));
        long readOnPrimary = rowsRead(servers.primary());
        long changedOnPrimary = rowsChanged(servers.primary());
        try (Connection c = connect(JdbcDriver.MARIADB); Statement s = c.createStatement()) {
            refused(() -> s.executeQuery("SELECT v FROM t WHERE id = 1"), "point"); // a read: the replica's
            refused(() -> s.executeUpdate("UPDATE t SET v = 10 WHERE id = 1"), "point"); // a write: the primary's
            c.setAutoCommit(false);
            refused(() -> s.executeQuery("SELECT v FROM t WHERE id = 2"), "point"); // a transaction's read: the primary's
            c.rollback();
            c.setAutoCommit(true);
            assertThat(rowsRead(servers.replica(0))).as("read on the replica").isEqualTo(readOnReplica);
            assertThat(rowsRead(servers.primary())).as("read on the primary").isEqualTo(readOnPrimary);
            assertThat(rowsChanged(servers.primary())).as("changed on the primary").isEqualTo(changedOnPrimary);
            // the session goes on, on both routes
            assertThat(portOf(c)).isEqualTo(replicaPort());
            assertThat(s.executeUpdate("UPDATE t SET v = v + 0 WHERE id > 100")).isZero();
        }
        try (Connection c = connect(JdbcDriver.MYSQL);
                PreparedStatement read = c.prepareStatement("SELECT v FROM t WHERE id = ?");
                PreparedStatement write = c.prepareStatement("UPDATE t SET v = ? WHERE id = ?")) {
            useRules(); // prepared before the rule: refused at execution
            read.setInt(1, 3);
            write.setInt(1, 30);
            write.setInt(2, 3);
            useRules(rule("point", "where id = \\?$", Action.BLOCK, 0));
            refused(read::executeQuery, "point");
            refused(write::executeUpdate, "point");
            useRules();
            try (ResultSet rs = read.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(3);
            }
        }
        assertThat(queryLong(servers.primary(), "SELECT v FROM app.t WHERE id = 1")).isEqualTo(1);
        assertThat(queryLong(servers.primary(), "SELECT v FROM app.t WHERE id = 3")).isEqualTo(3);
    }

    // ---- timeoutMilliseconds -------------------------------------------------------------------------------------

    private static final long TIMEOUT = 700;

    /** A sleep of 10 s on {@code driver}, in a transaction or not, is ended by the rule on {@code expected}. */
    private static void endedOn(JdbcDriver driver, boolean inTransaction, ExtraMariaDb expected, ExtraMariaDb other)
            throws Exception {
        long acted = counters("cap-sleep").actedCount();
        try (Connection c = connect(driver)) {
            c.setAutoCommit(!inTransaction);
            long start;
            try (Sleepers seen = new Sleepers()) {
                start = System.nanoTime();
                assertThatThrownBy(() -> {
                    if (driver == JdbcDriver.MYSQL) {
                        try (PreparedStatement p = c.prepareStatement("SELECT SLEEP(?)")) {
                            p.setInt(1, 10);
                            p.executeQuery();
                        }
                    } else {
                        try (Statement s = c.createStatement()) {
                            s.executeQuery("SELECT SLEEP(10)");
                        }
                    }
                }).isInstanceOfSatisfying(SQLException.class, e -> {
                    assertThat(e.getErrorCode()).isEqualTo(1317); // ER_QUERY_INTERRUPTED, the server's own
                    assertThat(e.getMessage()).contains("interrupted");
                });
                long millis = (System.nanoTime() - start) / 1_000_000;
                assertThat(millis).as("ended after").isBetween(TIMEOUT - 50, 3_000L);
                long onExpected = expected == servers.primary() ? seen.primary.get() : seen.replica.get();
                long onOther = expected == servers.primary() ? seen.replica.get() : seen.primary.get();
                assertThat(onExpected).as("ran on " + expected).isEqualTo(1);
                assertThat(onOther).as("ran on " + other).isZero();
            }
            assertNoSleepers();
            // the session is in step on the server it was on
            assertThat(portOf(c)).isEqualTo(inTransaction ? primaryPort() : replicaPort());
            if (inTransaction) {
                c.rollback();
                c.setAutoCommit(true);
                assertThat(portOf(c)).isEqualTo(replicaPort());
            }
        }
        assertThat(counters("cap-sleep").actedCount()).isEqualTo(acted + 1);
        assertThat(counters("cap-sleep").errorCount()).isZero();
    }

    @Test
    void timeoutEndsAReadOnTheReplicaWithTheKillSentToTheReplica() throws Exception {
        useRules(rule("cap-sleep", "^select sleep", Action.TIMEOUT, TIMEOUT));
        endedOn(JdbcDriver.MARIADB, false, servers.replica(0), servers.primary());
        endedOn(JdbcDriver.MYSQL, false, servers.replica(0), servers.primary());
    }

    @Test
    void timeoutEndsAStatementOfATransactionOnThePrimaryWithTheKillSentToThePrimary() throws Exception {
        useRules(rule("cap-sleep", "^select sleep", Action.TIMEOUT, TIMEOUT));
        endedOn(JdbcDriver.MARIADB, true, servers.primary(), servers.replica(0));
        endedOn(JdbcDriver.MYSQL, true, servers.primary(), servers.replica(0));
    }

    // ---- maxRows -------------------------------------------------------------------------------------------------

    private static final int ROWS = 3;

    /** A long result on {@code driver}, in a transaction or not: its first rows come from {@code port}, then the ERR. */
    private static void cutOn(JdbcDriver driver, boolean inTransaction, int port) throws Exception {
        long acted = counters("rows-cap").actedCount();
        try (Connection c = connect(driver)) {
            c.setAutoCommit(!inTransaction);
            int seen = 0;
            try {
                if (driver == JdbcDriver.MYSQL) {
                    try (PreparedStatement p = c.prepareStatement("SELECT @@port, seq FROM seq_1_to_1000 WHERE seq > ?")) {
                        p.setInt(1, 0);
                        try (ResultSet rs = p.executeQuery()) {
                            while (rs.next()) {
                                seen++;
                            }
                        }
                    }
                } else {
                    try (Statement s = c.createStatement()) {
                        s.setFetchSize(1); // streamed: the rows before the error are read one by one
                        try (ResultSet rs = s.executeQuery("SELECT @@port, seq FROM seq_1_to_100000")) {
                            while (rs.next()) {
                                seen++;
                                assertThat(rs.getInt(1)).as("the server").isEqualTo(port);
                                assertThat(rs.getInt(2)).isEqualTo(seen);
                            }
                        }
                    }
                }
                throw new AssertionError("no error after " + seen + " rows");
            } catch (SQLException e) {
                assertThat(e.getErrorCode()).isEqualTo(1226);
                assertThat(e.getMessage()).contains("rows-cap").contains("more than 3 rows");
            }
            if (driver == JdbcDriver.MARIADB) {
                assertThat(seen).as("rows before the error").isEqualTo(ROWS);
            }
            // the next statement works, on the same route; a result within the limit is untouched
            assertThat(portOf(c)).isEqualTo(port);
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT @@port, seq FROM seq_1_to_3")) {
                int n = 0;
                while (rs.next()) {
                    n++;
                    assertThat(rs.getInt(1)).isEqualTo(port);
                }
                assertThat(n).isEqualTo(ROWS);
            }
            if (inTransaction) {
                c.commit();
            }
        }
        assertThat(counters("rows-cap").actedCount()).isEqualTo(acted + 1);
    }

    @Test
    void maxRowsCutsALongReadOnTheReplica() throws Exception {
        useRules(rule("rows-cap", "from seq_1_to_", Action.MAX_ROWS, ROWS));
        cutOn(JdbcDriver.MARIADB, false, replicaPort());
        cutOn(JdbcDriver.MYSQL, false, replicaPort());
    }

    @Test
    void maxRowsCutsALongReadOfATransactionOnThePrimary() throws Exception {
        useRules(rule("rows-cap", "from seq_1_to_", Action.MAX_ROWS, ROWS));
        cutOn(JdbcDriver.MARIADB, true, primaryPort());
        cutOn(JdbcDriver.MYSQL, true, primaryPort());
    }

    // ---- maxConcurrency ------------------------------------------------------------------------------------------

    private static final int CONCURRENCY = 2;

    /** Sleeps {@code seconds} through a connection of its own, in a transaction (the primary) or not (the replica). */
    private static long sleep(JdbcDriver driver, boolean inTransaction, double seconds) throws SQLException {
        try (Connection c = connect(driver)) {
            c.setAutoCommit(!inTransaction);
            long start = System.nanoTime();
            if (driver == JdbcDriver.MYSQL) {
                try (PreparedStatement p = c.prepareStatement("SELECT SLEEP(?)")) {
                    p.setDouble(1, seconds);
                    try (ResultSet rs = p.executeQuery()) {
                        assertThat(rs.next()).isTrue();
                    }
                }
            } else {
                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT SLEEP(" + seconds + ")")) {
                    assertThat(rs.next()).isTrue();
                }
            }
            if (inTransaction) {
                c.commit();
            }
            return (System.nanoTime() - start) / 1_000_000;
        }
    }

    private static void awaitRunning(String rule, int expected) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (counters(rule).runningCount() != expected && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertThat(counters(rule).runningCount()).as("statements holding a permit").isEqualTo(expected);
    }

    @Test
    void maxConcurrencyCountsTheStatementsOfBothRoutesTogether() throws Exception {
        useRules(rule("two-sleepers", "^select sleep", Action.MAX_CONCURRENCY, CONCURRENCY, null, 5000));
        ExecutorService clients = Executors.newFixedThreadPool(CONCURRENCY + 1);
        try (Sleepers seen = new Sleepers()) {
            List<Future<Long>> first = new ArrayList<>();
            first.add(clients.submit(() -> sleep(JdbcDriver.MARIADB, false, 1)));
            first.add(clients.submit(() -> sleep(JdbcDriver.MYSQL, true, 1)));
            awaitRunning("two-sleepers", CONCURRENCY);
            Future<Long> third = clients.submit(() -> sleep(JdbcDriver.MARIADB, false, 0.3));
            for (Future<Long> each : first) {
                assertThat(each.get(10, TimeUnit.SECONDS)).isBetween(900L, 1_900L);
            }
            // it waited for a permit, then slept its own 0.3 s
            assertThat(third.get(10, TimeUnit.SECONDS)).isGreaterThan(500L);
            assertThat(seen.together.get()).as("sleeping at once on both servers").isEqualTo(CONCURRENCY);
            assertThat(seen.primary.get()).as("on the primary").isEqualTo(1);
            assertThat(seen.replica.get()).as("on the replica").isBetween(1L, 2L);
        } finally {
            clients.shutdownNow();
        }
        awaitRunning("two-sleepers", 0); // every permit back
        assertThat(counters("two-sleepers").actedCount()).as("held back").isGreaterThanOrEqualTo(1);
        assertThat(counters("two-sleepers").errorCount()).isZero();
        // and the whole limit is there again: two at once, one on each route, neither waits
        Future<Long> a;
        Future<Long> b;
        ExecutorService again = Executors.newFixedThreadPool(CONCURRENCY);
        try {
            a = again.submit(() -> sleep(JdbcDriver.MYSQL, false, 0.5));
            b = again.submit(() -> sleep(JdbcDriver.MARIADB, true, 0.5));
            assertThat(a.get(10, TimeUnit.SECONDS)).isLessThan(1_000L);
            assertThat(b.get(10, TimeUnit.SECONDS)).isLessThan(1_000L);
        } finally {
            again.shutdownNow();
        }
        awaitRunning("two-sleepers", 0);
    }

    @Test
    void aPermitComesBackAtItsStatementsEndWhileTheSessionStaysOpen() throws Exception {
        useRules(rule("two-sleepers", "^select sleep", Action.MAX_CONCURRENCY, CONCURRENCY, null, 5000));
        for (boolean inTransaction : new boolean[] {false, true}) {
            try (Connection c = connect(JdbcDriver.MYSQL); Connection text = connect(JdbcDriver.MARIADB);
                    Statement s = text.createStatement()) {
                c.setAutoCommit(!inTransaction);
                text.setAutoCommit(!inTransaction);
                try (PreparedStatement p = c.prepareStatement("SELECT SLEEP(?)")) {
                    p.setDouble(1, 0.2);
                    // the first execution on a server is prepared there first: its permit must ride with it still
                    for (int i = 0; i < 2; i++) {
                        try (ResultSet rs = p.executeQuery()) {
                            assertThat(rs.next()).isTrue();
                        }
                        awaitRunning("two-sleepers", 0); // the session open and idle: back at the statement's end
                        try (ResultSet rs = s.executeQuery("SELECT SLEEP(0.2)")) {
                            assertThat(rs.next()).isTrue();
                        }
                        awaitRunning("two-sleepers", 0);
                    }
                }
                assertThat(portOf(c)).isEqualTo(inTransaction ? primaryPort() : replicaPort());
                if (inTransaction) {
                    c.commit();
                    text.commit();
                }
            }
        }
        assertThat(counters("two-sleepers").errorCount()).isZero();
    }

    @Test
    void maxConcurrencyRefusesPastItsWaitOnEitherRouteAndTheSessionGoesOn() throws Exception {
        useRules(rule("two-sleepers", "^select sleep", Action.MAX_CONCURRENCY, CONCURRENCY, null, 200));
        ExecutorService clients = Executors.newFixedThreadPool(CONCURRENCY);
        try (Connection c = connect(JdbcDriver.MARIADB); Statement s = c.createStatement()) {
            List<Future<Long>> first = new ArrayList<>();
            first.add(clients.submit(() -> sleep(JdbcDriver.MARIADB, false, 1.5)));
            first.add(clients.submit(() -> sleep(JdbcDriver.MYSQL, true, 1.5)));
            awaitRunning("two-sleepers", CONCURRENCY);
            for (boolean inTransaction : new boolean[] {false, true}) {
                c.setAutoCommit(!inTransaction);
                assertThatThrownBy(() -> s.executeQuery("SELECT SLEEP(0.1)"))
                        .isInstanceOfSatisfying(SQLException.class, e -> {
                            assertThat(e.getErrorCode()).isEqualTo(1226);
                            assertThat(e.getMessage()).contains("query rule two-sleepers", "2 statements");
                        });
                assertThat(portOf(c)).isEqualTo(inTransaction ? primaryPort() : replicaPort());
            }
            c.rollback();
            c.setAutoCommit(true);
            for (Future<Long> each : first) {
                each.get(10, TimeUnit.SECONDS);
            }
            awaitRunning("two-sleepers", 0);
            try (ResultSet rs = s.executeQuery("SELECT SLEEP(0)")) { // the rule's shape runs again
                assertThat(rs.next()).isTrue();
            }
        } finally {
            clients.shutdownNow();
        }
        assertThat(counters("two-sleepers").errorCount()).isEqualTo(2);
        awaitRunning("two-sleepers", 0);
    }

    // ---- maxPerSecond --------------------------------------------------------------------------------------------

    @Test
    void maxPerSecondHoldsReadsAndWritesToOneRateByWaiting() throws Exception {
        int rate = 10;
        useRules(rule("ten", "where id = \\?$", Action.MAX_PER_SECOND, rate, null, 2000));
        int statements = 30;
        long start = System.nanoTime();
        try (Connection text = connect(JdbcDriver.MARIADB); Statement s = text.createStatement();
                Connection prepared = connect(JdbcDriver.MYSQL);
                PreparedStatement p = prepared.prepareStatement("SELECT @@port, v FROM t WHERE id = ?")) {
            p.setInt(1, 2);
            for (int i = 0; i < statements; i++) {
                switch (i % 3) {
                    case 0 -> {
                        try (ResultSet rs = s.executeQuery("SELECT @@port, v FROM t WHERE id = 1")) {
                            assertThat(rs.next()).isTrue();
                            assertThat(rs.getInt(1)).isEqualTo(replicaPort());
                        }
                    }
                    case 1 -> {
                        try (ResultSet rs = p.executeQuery()) {
                            assertThat(rs.next()).isTrue();
                            assertThat(rs.getInt(1)).isEqualTo(replicaPort());
                        }
                    }
                    default -> assertThat(s.executeUpdate("UPDATE t SET v = 3 WHERE id = 3")).isEqualTo(1);
                }
            }
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        // a burst of 10, then 20 more at 10 a second: about 2 s
        assertThat(millis).isBetween(1_700L, 3_500L);
        QueryRule.Counters counters = counters("ten");
        assertThat(counters.errorCount()).isZero();
        assertThat(counters.actedCount()).as("held back").isGreaterThanOrEqualTo(statements - rate - 2L);
    }

    @Test
    void maxPerSecondRefusesOnEitherRouteOnceTheWaitIsTooLong() throws Exception {
        useRules(rule("one", "where id = \\?$", Action.MAX_PER_SECOND, 1, null, 100));
        try (Connection c = connect(JdbcDriver.MARIADB); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT v FROM t WHERE id = 1")) {
                assertThat(rs.next()).isTrue(); // the burst of one
            }
            for (ThrowingRunnable statement : List.<ThrowingRunnable>of(
                    () -> s.executeQuery("SELECT v FROM t WHERE id = 1"),
                    () -> s.executeUpdate("UPDATE t SET v = 1 WHERE id = 1"))) {
                long start = System.nanoTime();
                assertThatThrownBy(statement::run).isInstanceOfSatisfying(SQLException.class, e -> {
                    assertThat(e.getErrorCode()).isEqualTo(1226);
                    assertThat(e.getMessage()).contains("query rule one", "more than 1 a second");
                });
                assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(500);
            }
            assertThat(portOf(c)).isEqualTo(replicaPort()); // the session goes on
            Thread.sleep(1_100);
            assertThat(s.executeUpdate("UPDATE t SET v = 1 WHERE id = 1")).isEqualTo(1); // its turn came
        }
        assertThat(counters("one").errorCount()).isEqualTo(2);
    }

    // ---- mirror --------------------------------------------------------------------------------------------------

    @Test
    void mirrorCopiesReadsAndWritesOfASplitSession() throws Exception {
        useRules(rule("mirror-reads", "^select v from t where id = \\?$", Action.MIRROR, 0, "primary", 0),
                rule("mirror-writes", "^insert into events", Action.MIRROR, 0, "primary", 0));
        long readOnPrimary = rowsRead(servers.primary());
        long readOnReplica = rowsRead(servers.replica(0));
        long events = queryLong(servers.primary(), "SELECT COUNT(*) FROM app.events");
        try (Connection c = connect(JdbcDriver.MARIADB); Statement s = c.createStatement()) {
            for (int i = 0; i < 5; i++) {
                try (ResultSet rs = s.executeQuery("SELECT v FROM t WHERE id = 2")) { // the replica's; a copy on the primary
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1)).isEqualTo(2);
                }
                assertThat(s.executeUpdate("INSERT INTO events (v) VALUES (" + i + ")")).isEqualTo(1);
            }
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t WHERE id > 0")) { // not copied
                assertThat(rs.next()).isTrue();
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while ((rowsRead(servers.primary()) < readOnPrimary + 5
                || queryLong(servers.primary(), "SELECT COUNT(*) FROM app.events") < events + 10
                // a copy counts as acted when its response has been read, a moment after its effect
                || counters("mirror-reads").actedCount() + counters("mirror-writes").actedCount() < 10)
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(rowsRead(servers.primary()) - readOnPrimary).as("copies read on the primary").isEqualTo(5);
        assertThat(rowsRead(servers.replica(0)) - readOnReplica).as("the client's reads, and the other shape's")
                .isEqualTo(5 + 3);
        assertThat(queryLong(servers.primary(), "SELECT COUNT(*) FROM app.events") - events)
                .as("5 inserts and their 5 copies").isEqualTo(10);
        for (String name : List.of("mirror-reads", "mirror-writes")) {
            assertThat(counters(name).matchedCount()).isEqualTo(5);
            assertThat(counters(name).actedCount()).isEqualTo(5);
            assertThat(counters(name).errorCount()).isZero();
        }
        servers.awaitCaughtUp();
    }

    // ---- reload --------------------------------------------------------------------------------------------------

    @Test
    void aReloadAddsAndRemovesARuleWhileSplitSessionsRun() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong refused = new AtomicLong();
        AtomicLong ran = new AtomicLong();
        AtomicReference<Throwable> unexpected = new AtomicReference<>();
        List<Future<?>> sessions = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                int id = i + 1;
                JdbcDriver driver = i == 0 ? JdbcDriver.MYSQL : JdbcDriver.MARIADB;
                sessions.add(pool.submit(() -> {
                    try (Connection c = connect(driver); Statement s = c.createStatement();
                            PreparedStatement read = c.prepareStatement("SELECT v FROM t WHERE id = ?")) {
                        read.setInt(1, id);
                        while (!stop.get()) {
                            for (ThrowingRunnable statement : List.<ThrowingRunnable>of(read::executeQuery,
                                    () -> s.executeUpdate("UPDATE t SET v = " + id + " WHERE id = " + id))) {
                                try {
                                    statement.run();
                                    ran.incrementAndGet();
                                } catch (SQLException e) {
                                    if (e.getErrorCode() != 1142) {
                                        throw e;
                                    }
                                    refused.incrementAndGet();
                                }
                            }
                            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
                                assertThat(rs.next()).isTrue(); // another shape: never refused
                                assertThat(rs.getInt(1)).isEqualTo(3);
                            }
                        }
                    } catch (Throwable e) {
                        unexpected.compareAndSet(null, e);
                    }
                    return null;
                }));
            }
            awaitAbove(ran, 20);
            useRules(rule("live", "where id = \\?$", Action.BLOCK, 0));
            awaitAbove(refused, 30);
            useRules();
            awaitAbove(ran, ran.get() + 20); // statements decided before the reload have ended by then
            assertThat(sluice.queryRules().rules()).isEmpty();
            long refusedAfterRemoval = refused.get();
            awaitAbove(ran, ran.get() + 60);
            assertThat(refused.get()).as("refused after the rule was removed").isEqualTo(refusedAfterRemoval);
            stop.set(true);
            for (Future<?> session : sessions) {
                session.get(30, TimeUnit.SECONDS);
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
        assertThat(unexpected.get()).isNull();
        assertThat(refused.get()).isGreaterThan(30);
        servers.awaitCaughtUp();
    }

    private static void awaitAbove(AtomicLong counter, long floor) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (counter.get() <= floor) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still " + counter.get() + " after 30 s (expected: above " + floor + ")");
            }
            Thread.sleep(5);
        }
    }
}
