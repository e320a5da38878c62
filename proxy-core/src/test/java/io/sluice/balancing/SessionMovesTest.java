package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.ClientCounts;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.Policy;
import io.sluice.config.PoolingConfig;
import io.sluice.config.PoolingMode;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Live sessions moving between three real MariaDB servers (issue #31): in transaction pooling a session leaves a
 * drained backend between its transactions with its state (sql_mode, schema, user variables, a server-side prepared
 * statement), a transaction under way finishes where it began, a pinned session stays, and a backend back in
 * rotation gets its share of the sessions again. Session pooling: {@link SessionPoolingMovesTest}.
 */
@Tag("server")
class SessionMovesTest {
    private static BackendCluster cluster;

    @BeforeAll
    static void startServers() throws Exception {
        cluster = BackendCluster.shared();
        for (String name : BackendCluster.NAMES) {
            cluster.server(name).execute("CREATE DATABASE IF NOT EXISTS move_test");
        }
    }

    /** A session with state of its own: what it set, so that the test can check it on whatever server it reaches. */
    private record Session(Connection connection, String sqlMode, String mark, PreparedStatement plusOne) {
        static Session open(Sluice sluice, int i) throws SQLException {
            Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), null,
                    "useServerPrepStmts=true"), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
            String sqlMode = i % 2 == 0 ? "ANSI_QUOTES" : "PIPES_AS_CONCAT,NO_ENGINE_SUBSTITUTION";
            String mark = "session-" + i;
            try (Statement s = c.createStatement()) {
                s.execute("SET SESSION sql_mode = '" + sqlMode + "'");
                s.execute("SET @mark = '" + mark + "'");
                s.execute("USE move_test");
            }
            PreparedStatement plusOne = c.prepareStatement("SELECT ? + 1");
            Session session = new Session(c, sqlMode, mark, plusOne);
            session.checkState();
            return session;
        }

        /** The session's state, read on the server its next statements reach. */
        void checkState() throws SQLException {
            try (Statement s = connection.createStatement();
                 ResultSet rs = s.executeQuery("SELECT @@SESSION.sql_mode, @mark, DATABASE()")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo(sqlMode);
                assertThat(rs.getString(2)).isEqualTo(mark);
                assertThat(rs.getString(3)).isEqualTo("move_test");
            }
            plusOne.setInt(1, 41);
            try (ResultSet rs = plusOne.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(42);
            }
        }
    }

    private static Sluice start(Policy policy, PoolingConfig pooling) {
        return cluster.startProxy(policy, BackendCluster.FAST_CHECKS, name -> 1, pooling);
    }

    private static long moves(Sluice sluice, String reason) {
        ClientCounts counts = sluice.metricSources().clients();
        return counts.moves(counts.moveReasons().indexOf(reason));
    }

    private static long refused(Sluice sluice, String reason) {
        ClientCounts counts = sluice.metricSources().clients();
        return counts.movesRefused(counts.moveRefusals().indexOf(reason));
    }

    private static void awaitCount(java.util.function.LongSupplier count, long wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (count.getAsLong() < wanted && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
    }

    @Test
    void aDrainedBackendsIdleSessionsMoveWithTheirStateWhileATransactionFinishesAndAPinnedSessionStays()
            throws Exception {
        try (Sluice sluice = start(Policy.ROUND_ROBIN, PoolingConfig.transaction())) {
            List<Session> sessions = new ArrayList<>();
            Map<Session, String> before = new HashMap<>();
            for (int i = 0; i < 6; i++) {
                Session session = Session.open(sluice, i);
                sessions.add(session);
                before.put(session, cluster.backendOf(session.connection()));
            }
            assertThat(before.values()).containsOnly("a", "b", "c").filteredOn("b"::equals).hasSize(2);
            Connection tx = openOn(sluice, "b");
            try (Statement s = tx.createStatement()) {
                s.execute("CREATE TABLE IF NOT EXISTS move_test.t (id INT PRIMARY KEY)");
                s.execute("DELETE FROM move_test.t");
            }
            Connection pinnedB = openOn(sluice, "b");
            try (Statement s = pinnedB.createStatement()) {
                s.execute("CREATE TEMPORARY TABLE move_test.mine (x INT)"); // pins the session to its connection
            }
            tx.setAutoCommit(false);
            try (Statement s = tx.createStatement()) {
                s.executeUpdate("INSERT INTO move_test.t VALUES (1)");
            }

            assertThat(sluice.drain("b")).isTrue();
            awaitCount(() -> moves(sluice, "drain"), 2);

            // The two idle sessions of b are elsewhere now, their state with them, without an error.
            for (Session session : sessions) {
                String now = cluster.backendOf(session.connection());
                if (before.get(session).equals("b")) {
                    assertThat(now).isIn("a", "c");
                } else {
                    assertThat(now).isEqualTo(before.get(session));
                }
                session.checkState();
            }
            assertThat(moves(sluice, "drain")).isEqualTo(2);
            // The transaction finishes on b, then the session moves on.
            try (Statement s = tx.createStatement()) {
                s.executeUpdate("INSERT INTO move_test.t VALUES (2)");
            }
            assertThat(cluster.backendOf(tx)).isEqualTo("b");
            tx.commit();
            tx.setAutoCommit(true);
            assertThat(cluster.backendOf(tx)).isIn("a", "c");
            assertThat(moves(sluice, "drain")).isEqualTo(3);
            try (Connection direct = cluster.server("b").rootConnection(); Statement s = direct.createStatement();
                 ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM move_test.t")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(2);
            }
            // The session with a temporary table stays where its table is, and says what it waits for.
            assertThat(cluster.backendOf(pinnedB)).isEqualTo("b");
            assertThat(sluice.sessions()).filteredOn(s -> "b".equals(s.backend()))
                    .singleElement().satisfies(s -> {
                        assertThat(s.pinnedBy()).isEqualTo("temporary_table");
                        assertThat(s.moveWaiting()).isEqualTo("drain");
                    });
            assertThat(sluice.sessions()).filteredOn(s -> s.moves() == 1).hasSize(3);
            assertThat(refused(sluice, "pinned")).isEqualTo(1);
            try (Statement s = pinnedB.createStatement()) {
                s.execute("INSERT INTO move_test.mine VALUES (1)");
            }

            tx.close();
            pinnedB.close();
            for (Session session : sessions) {
                session.connection().close();
            }
            assertThat(sluice.undrain("b")).isTrue();
        }
    }

    @Test
    void aBackendBackInRotationGetsItsShareOfTheSessionsAgain() throws Exception {
        PoolingConfig pooling = new PoolingConfig(PoolingMode.TRANSACTION,
                PoolingConfig.DEFAULT_PREPARED_STATEMENT_CACHE_SIZE, 20);
        try (Sluice sluice = start(Policy.LEAST_CONNECTIONS, pooling)) {
            List<Session> sessions = new ArrayList<>();
            for (int i = 0; i < 9; i++) {
                sessions.add(Session.open(sluice, i));
            }
            assertThat(spread(sessions)).isEqualTo(Map.of("a", 3, "b", 3, "c", 3));

            assertThat(sluice.drain("c")).isTrue();
            awaitCount(() -> moves(sluice, "drain"), 3);
            Map<String, Integer> drained = spread(sessions);
            assertThat(drained).doesNotContainKey("c");
            assertThat(drained.values()).allMatch(n -> n == 4 || n == 5);

            assertThat(sluice.undrain("c")).isTrue();
            BackendCluster.awaitStatus(sluice, "c", BackendStatus.UP, 5);
            awaitCount(() -> moves(sluice, "rebalance"), 3);
            assertThat(moves(sluice, "rebalance")).isEqualTo(3);
            assertThat(spread(sessions)).isEqualTo(Map.of("a", 3, "b", 3, "c", 3));
            for (Session session : sessions) {
                session.checkState();
                session.connection().close();
            }
        }
    }

    /** A plain session on {@code backend}: round robin reaches it within three logins; the others are closed. */
    private static Connection openOn(Sluice sluice, String backend) throws SQLException {
        for (int i = 0; i < 3; i++) {
            Connection c = BackendCluster.connect(sluice);
            if (cluster.backendOf(c).equals(backend)) {
                return c;
            }
            c.close();
        }
        throw new AssertionError("no session landed on " + backend);
    }

    private static Map<String, Integer> spread(List<Session> sessions) throws SQLException {
        Map<String, Integer> perBackend = new HashMap<>();
        for (Session session : sessions) {
            perBackend.merge(cluster.backendOf(session.connection()), 1, Integer::sum);
        }
        return perBackend;
    }
}
