package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.admin.AdminServer;
import io.sluice.api.ClientCounts;
import io.sluice.api.SessionSnapshot;
import io.sluice.balancer.Policy;
import io.sluice.capture.TrafficCapture;
import io.sluice.config.AdminConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.testing.AdminClient;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Session pooling moves on three real MariaDB servers (issue #31, decision 108): a session holding a named lock
 * ({@code GET_LOCK}, by a plain statement or a server-side prepared one), which MariaDB shows nowhere without
 * performance_schema or the metadata_lock_info plugin, stays on its server while it holds it and moves once it
 * released it; sessions that logged in while their group had one backend move, with their server-side prepared
 * statements, to a backend a config reload adds; and sessions moved between servers whose global {@code sql_mode}
 * differs are read in the mode they run in (decision 204), in both pooling modes.
 */
@Tag("server")
class SessionPoolingLocksAndGrowthTest {
    private static BackendCluster cluster;

    @BeforeAll
    static void startServers() {
        cluster = BackendCluster.shared();
    }

    @Test
    void aSessionHoldingANamedLockStaysWhileItHoldsIt() throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN, BackendCluster.FAST_CHECKS, name -> 1,
                PoolingConfig.defaults());
             Connection plain = openOn(sluice, "b");
             Connection prepared = openOn(sluice, "b");
             Connection released = openOn(sluice, "b");
             Connection b = cluster.server("b").rootConnection();
             AdminServer adminServer = AdminServer.start(new AdminConfig(true, "127.0.0.1", 0, "t0ken", null), sluice,
                     new TrafficCapture(), null)) {
            AdminClient admin = new AdminClient("127.0.0.1", adminServer.port());
            try {
                long plainId = connectionId(plain);
                long preparedId = connectionId(prepared);
                assertThat(single(plain, "SELECT GET_LOCK('sluice_lock_1', 0)")).isEqualTo("1");
                assertThat(single(plain, "SELECT get_lock('sluice_lock_2', 0)")).isEqualTo("1");
                try (PreparedStatement lock = prepared.prepareStatement("SELECT GET_LOCK(?, 0)")) {
                    lock.setString(1, "sluice_lock_3");
                    try (ResultSet rs = lock.executeQuery()) {
                        rs.next();
                        assertThat(rs.getInt(1)).isEqualTo(1);
                    }
                }
                // Taken and given back before the drain: nothing holds this one.
                assertThat(single(released, "SELECT GET_LOCK('sluice_lock_4', 0)")).isEqualTo("1");
                assertThat(single(released, "SELECT RELEASE_LOCK('sluice_lock_4')")).isEqualTo("1");

                // The drain's answer counts b's sessions asked to move (the idle one may be gone already).
                assertThat(admin.post("/api/backends/b/drain", "t0ken").body()).containsPattern(
                        "\"draining\":true,.*\"sessionsToMove\":[23],");
                await(() -> moves(sluice) >= 1 && refused(sluice, "pinned") >= 2, "the drain's moves and refusals");
                // What the operator sees: two sessions still on b, both waiting to move, both pinned.
                assertThat(admin.get("/api/backends").body()).containsPattern("\"name\":\"b\",[^{]*"
                        + "\"activeSessions\":2,[^{]*\"sessionsToMove\":2,\"sessionsPinned\":2")
                        .containsPattern("\"name\":\"a\",[^{]*\"totalSessions\":[0-9]+,\"lastCheck\""); // UP: none
                assertThat(cluster.backendOf(released)).isIn("a", "c");
                assertThat(sessionsOn(sluice, "b")).extracting(s -> s.pinnedBy() + "/" + s.moveWaiting())
                        .containsExactly("named_lock/drain", "named_lock/drain");
                // The locks are where they were taken, held by the sessions' own connections.
                assertThat(single(b, "SELECT IS_USED_LOCK('sluice_lock_1')")).isEqualTo(Long.toString(plainId));
                assertThat(single(b, "SELECT IS_USED_LOCK('sluice_lock_3')")).isEqualTo(Long.toString(preparedId));
                assertThat(cluster.backendOf(plain)).isEqualTo("b");
                assertThat(cluster.backendOf(prepared)).isEqualTo("b");

                // One of two released: still held. Both: it moves at an idle moment after the retry delay.
                assertThat(single(plain, "SELECT RELEASE_LOCK('sluice_lock_1')")).isEqualTo("1");
                Thread.sleep(1_500);
                assertThat(cluster.backendOf(plain)).isEqualTo("b");
                assertThat(single(plain, "SELECT RELEASE_LOCK('sluice_lock_2')")).isEqualTo("1");
                assertThat(single(prepared, "SELECT RELEASE_ALL_LOCKS()")).isEqualTo("1");
                await(() -> backendOrEmpty(plain).matches("[ac]") && backendOrEmpty(prepared).matches("[ac]"),
                        "both sessions off b");
                assertThat(moves(sluice)).isEqualTo(3);
                assertThat(sessionsOn(sluice, "b")).isEmpty();
                assertThat(single(b, "SELECT IS_USED_LOCK('sluice_lock_3')")).isNull();
            } finally {
                sluice.undrain("b");
            }
        }
    }

    /**
     * Decision 204: a session in sjis whose {@code GET_LOCK} follows a literal ending in a backslash byte ({@code '予'},
     * 0x97 0x5C), which a reader of bytes takes for text. It stays on its server, as a session that ran code its text
     * does not show; before, it moved at the drain and left its lock behind on its old connection.
     */
    @Test
    void aSessionInSjisWhoseLockItsTextHidesStays() throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN, BackendCluster.FAST_CHECKS, name -> 1,
                PoolingConfig.defaults());
             Connection sjis = openOn(sluice, "b", JdbcDriver.MYSQL, "characterEncoding=SJIS");
             Connection b = cluster.server("b").rootConnection()) {
            try {
                long id = connectionId(sjis);
                assertThat(single(sjis, "SELECT '予' AS x, GET_LOCK('sluice_lock_sjis', 0)")).isEqualTo("予");
                assertThat(sluice.drain("b")).isTrue();
                await(() -> refused(sluice, "pinned") >= 1, "the drain's refusal");
                assertThat(sessionsOn(sluice, "b")).extracting(s -> s.pinnedBy() + "/" + s.moveWaiting())
                        .containsExactly("stored_code/drain");
                assertThat(moves(sluice)).isZero();
                assertThat(single(b, "SELECT IS_USED_LOCK('sluice_lock_sjis')")).isEqualTo(Long.toString(id));
                assertThat(cluster.backendOf(sjis)).isEqualTo("b");
            } finally {
                sluice.undrain("b");
            }
        }
    }

    /**
     * Decision 204 across a move: server b runs {@code NO_BACKSLASH_ESCAPES} by default, a and c do not. A session
     * that logged in on b runs in that mode, and its move carries its {@code sql_mode} to a server whose connections
     * logged in without it. Sluice must read the session's text in the mode the move carried: before, it read it in
     * the new connection's login value, the {@code GET_LOCK} after {@code 'a\'} was text to it, and the next drain
     * moved the session away from its lock (the connection it left is closed, so the session lost the lock).
     */
    @Test
    void aMovedSessionsTextIsReadInTheSqlModeTheMoveCarried() throws Exception {
        String lock = "sluice_lock_moved_mode";
        // MySQL Connector/J sets no sql_mode of its own here (MariaDB's adds to the login value at connect, and
        // Sluice reads that assignment in b's value, which then stays the session's own)
        withBInNoBackslashEscapes(PoolingConfig.defaults(), "b", (sluice, client, b) -> {
            assertThat(single(client, "SELECT @@sql_mode")).contains("NO_BACKSLASH_ESCAPES");
            assertThat(sluice.drain("b")).isTrue();
            await(() -> moves(sluice) == 1, "the session's move off b");
            String now = cluster.backendOf(client);
            assertThat(now).isIn("a", "c");
            assertThat(single(client, "SELECT @@sql_mode")).as("carried").contains("NO_BACKSLASH_ESCAPES");
            long id = connectionId(client);
            // the server: the strings a\ and \ around the lock; a reader in the default modes: one string
            assertThat(single(client, "SELECT 'a\\' AS x, GET_LOCK('" + lock + "', 0) AS l, '\\' AS y"))
                    .isEqualTo("a\\");
            assertThat(sessionsOn(sluice, now)).extracting(SessionSnapshot::pinnedBy).containsExactly("stored_code");
            sluice.undrain("b");
            assertThat(sluice.drain(now)).isTrue();
            await(() -> refused(sluice, "pinned") >= 1, "the drain's refusal");
            assertThat(moves(sluice)).isEqualTo(1);
            assertThat(cluster.backendOf(client)).isEqualTo(now);
            try (Connection root = cluster.server(now).rootConnection()) {
                assertThat(single(root, "SELECT IS_USED_LOCK('" + lock + "')")).isEqualTo(Long.toString(id));
            }
        });
    }

    /**
     * Decision 204 for a transaction-pooled session moved between servers whose global {@code sql_mode} differs: it
     * set none, so it runs in each server's (its connections' login value), and its first statement on b, which runs
     * {@code NO_BACKSLASH_ESCAPES}, is read in that mode. Before, Sluice read it in the login value of the last
     * connection the session had held, on a: the lock after {@code 'a\'} pinned nothing, and the pooled connection
     * went to the next session with the lock.
     */
    @Test
    void aTransactionPooledSessionMovedIsReadInItsNewServersSqlMode() throws Exception {
        String lock = "sluice_lock_tp_mode";
        withBInNoBackslashEscapes(PoolingConfig.transaction(), "a", (sluice, client, b) -> {
            assertThat(single(client, "SELECT @@sql_mode")).doesNotContain("NO_BACKSLASH_ESCAPES");
            assertThat(sluice.drain("a")).isTrue();
            assertThat(sluice.drain("c")).isTrue();
            await(() -> sessionsOn(sluice, "b").size() == 1, "the session's move to b");
            // its first statement there: the server reads the strings a\ and \ around the lock
            assertThat(single(client, "SELECT 'a\\' AS x, GET_LOCK('" + lock + "', 0) AS l, '\\' AS y"))
                    .isEqualTo("a\\");
            assertThat(sessionsOn(sluice, "b")).extracting(SessionSnapshot::pinnedBy).containsExactly("stored_code");
            assertThat(single(client, "SELECT @@sql_mode")).contains("NO_BACKSLASH_ESCAPES");
            assertThat(single(b, "SELECT IS_USED_LOCK('" + lock + "')")).isEqualTo(Long.toString(connectionId(client)));
        });
    }

    /** A test with a Sluice, its MySQL Connector/J session (first on {@code on}), and b's root connection. */
    @FunctionalInterface
    private interface ModeTest {
        void run(Sluice sluice, Connection client, Connection b) throws Exception;
    }

    /**
     * Runs {@code test} while server b runs {@code NO_BACKSLASH_ESCAPES} by default (its global {@code sql_mode}, which
     * its connections log in with), then puts b's global back and undrains every server.
     */
    private static void withBInNoBackslashEscapes(PoolingConfig pooling, String on, ModeTest test) throws Exception {
        try (Connection b = cluster.server("b").rootConnection()) {
            String global = single(b, "SELECT @@GLOBAL.sql_mode");
            try (Statement s = b.createStatement()) {
                s.execute("SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',NO_BACKSLASH_ESCAPES')");
            }
            try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN, BackendCluster.FAST_CHECKS, name -> 1,
                    pooling);
                 Connection client = openOn(sluice, on, JdbcDriver.MYSQL, null)) {
                try {
                    test.run(sluice, client, b);
                } finally {
                    BackendCluster.NAMES.forEach(sluice::undrain);
                }
            } finally {
                try (Statement s = b.createStatement()) {
                    s.execute("SET GLOBAL sql_mode = '" + global + "'");
                }
            }
        }
    }

    @Test
    void sessionsOfAOneBackendGroupMoveWithTheirPreparedStatementsToABackendAdded() throws Exception {
        PoolingConfig pooling = PoolingConfig.defaults();
        try (Sluice sluice = Sluice.start(cluster.config(Policy.LEAST_CONNECTIONS, BackendCluster.FAST_CHECKS,
                pooling, List.of("a")))) {
            List<Connection> clients = new ArrayList<>();
            List<PreparedStatement> statements = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), null,
                            "useServerPrepStmts=true"), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
                    clients.add(c);
                    PreparedStatement statement = c.prepareStatement("SELECT ? * 3, @@port");
                    statements.add(statement);
                    assertThat(tripled(statement, i)).isEqualTo("a");
                }
                sluice.reload(cluster.config(Policy.LEAST_CONNECTIONS, BackendCluster.FAST_CHECKS, pooling,
                        List.of("a", "b")));
                await(() -> rebalanced(sluice) >= 2 && sessionsOn(sluice, "b").size() == 2,
                        "two of four sessions moved to b");
                List<String> backends = new ArrayList<>();
                for (int round = 0; round < 50; round++) {
                    backends.clear();
                    for (int i = 0; i < statements.size(); i++) {
                        backends.add(tripled(statements.get(i), round * 10 + i));
                    }
                }
                assertThat(backends).containsExactlyInAnyOrder("a", "a", "b", "b");
                assertThat(rebalanced(sluice)).isEqualTo(2);
                assertThat(sluice.sessions()).extracting(SessionSnapshot::pinnedBy).containsOnlyNulls();
            } finally {
                for (Connection c : clients) {
                    c.close();
                }
            }
        }
    }

    /** Runs {@code SELECT ? * 3, @@port} with {@code n}: checks the product, answers the backend it ran on. */
    private static String tripled(PreparedStatement statement, int n) throws SQLException {
        statement.setInt(1, n);
        try (ResultSet rs = statement.executeQuery()) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getLong(1)).isEqualTo(3L * n);
            return cluster.nameOfPort(rs.getInt(2));
        }
    }

    private static List<SessionSnapshot> sessionsOn(Sluice sluice, String backend) {
        return sluice.sessions().stream().filter(s -> backend.equals(s.backend())).toList();
    }

    private static String backendOrEmpty(Connection c) {
        try {
            return cluster.backendOf(c);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 10 s: " + what);
            }
            Thread.sleep(20);
        }
    }

    private static String single(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).isTrue();
            return rs.getString(1);
        }
    }

    private static long connectionId(Connection c) throws SQLException {
        return Long.parseLong(single(c, "SELECT CONNECTION_ID()"));
    }

    private static Connection openOn(Sluice sluice, String backend) throws SQLException {
        return openOn(sluice, backend, JdbcDriver.MARIADB, "useServerPrepStmts=true");
    }

    private static Connection openOn(Sluice sluice, String backend, JdbcDriver driver, String params)
            throws SQLException {
        for (int i = 0; i < 9; i++) {
            Connection c = driver.connect(driver.url("127.0.0.1", sluice.port(), null, params), ProxyUnderTest.USER,
                    ProxyUnderTest.PASSWORD);
            if (cluster.backendOf(c).equals(backend)) {
                return c;
            }
            c.close();
        }
        throw new AssertionError("no session landed on " + backend);
    }

    private static long moves(Sluice sluice) {
        ClientCounts counts = sluice.metricSources().clients();
        return counts.moves(counts.moveReasons().indexOf("drain"));
    }

    private static long rebalanced(Sluice sluice) {
        ClientCounts counts = sluice.metricSources().clients();
        return counts.moves(counts.moveReasons().indexOf("rebalance"));
    }

    private static long refused(Sluice sluice, String reason) {
        ClientCounts counts = sluice.metricSources().clients();
        return counts.movesRefused(counts.moveRefusals().indexOf(reason));
    }
}
