package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.ClientCounts;
import io.sluice.balancer.Policy;
import io.sluice.config.PoolingConfig;
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
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Live sessions moving in session pooling (issue #31, decisions 104 and 106), between three real MariaDB servers: a
 * drained backend's sessions move at their idle moment to a new server connection with their state (character set
 * and collation, sql_mode, isolation, schema, user variables) and their server-side prepared statements, which the
 * client does not notice, with MariaDB's and MySQL's Connector/J; a session with a temporary table, or with a cursor
 * open, stays and says why.
 */
@Tag("server")
class SessionPoolingMovesTest {
    private static BackendCluster cluster;

    @BeforeAll
    static void startServers() {
        cluster = BackendCluster.shared();
        for (String name : BackendCluster.NAMES) {
            cluster.server(name).execute("CREATE DATABASE IF NOT EXISTS move_test",
                    "CREATE TABLE IF NOT EXISTS move_test.few (n INT PRIMARY KEY)",
                    "INSERT IGNORE INTO move_test.few VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10)");
        }
    }

    /** A session with state set by plain statements; what the server it reaches reports, checked. */
    private record Session(Connection connection, int i, long connectionId, String backend) {
        static Session open(Sluice sluice, int i) throws SQLException {
            Connection c = BackendCluster.connect(sluice);
            try (Statement s = c.createStatement()) {
                s.execute("SET NAMES utf8mb4 COLLATE " + collation(i));
                s.execute("SET SESSION sql_mode = '" + sqlMode(i) + "'");
                s.execute("SET SESSION TRANSACTION ISOLATION LEVEL " + (i % 2 == 0 ? "READ COMMITTED"
                        : "SERIALIZABLE"));
                s.execute("SET @mark = 'session-" + i + "', @n = " + (i * 1000 + 7) + ", @d = 2.5");
                s.execute("USE move_test");
            }
            Session session = new Session(c, i, SessionPoolingMovesTest.connectionId(c), cluster.backendOf(c));
            session.checkState();
            return session;
        }

        static String collation(int i) {
            return i % 2 == 0 ? "utf8mb4_unicode_ci" : "utf8mb4_bin";
        }

        static String sqlMode(int i) {
            return i % 2 == 0 ? "ANSI_QUOTES" : "PIPES_AS_CONCAT,NO_ENGINE_SUBSTITUTION";
        }

        void checkState() throws SQLException {
            try (Statement s = connection.createStatement();
                 ResultSet rs = s.executeQuery("SELECT @@SESSION.sql_mode, @mark, @n, @d, DATABASE(), "
                         + "@@collation_connection, @@character_set_client, @@tx_isolation")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo(sqlMode(i));
                assertThat(rs.getString(2)).isEqualTo("session-" + i);
                assertThat(rs.getLong(3)).isEqualTo(i * 1000L + 7);
                assertThat(rs.getString(4)).isEqualTo("2.5");
                assertThat(rs.getString(5)).isEqualTo("move_test");
                assertThat(rs.getString(6)).isEqualTo(collation(i));
                assertThat(rs.getString(7)).isEqualTo("utf8mb4");
                assertThat(rs.getString(8)).isEqualTo(i % 2 == 0 ? "READ-COMMITTED" : "SERIALIZABLE");
            }
            // A statement prepared after the move runs on the new connection as on any.
            try (PreparedStatement plusOne = connection.prepareStatement("SELECT ? + 1")) {
                plusOne.setInt(1, 41);
                try (ResultSet rs = plusOne.executeQuery()) {
                    rs.next();
                    assertThat(rs.getInt(1)).isEqualTo(42);
                }
            }
        }
    }

    private static long connectionId(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aDrainedBackendsSessionsMoveWithTheirStateAndPinnedOnesStayAndSayWhy() throws Exception {
        // Before decision 106 the session with a server-side prepared statement stayed (prepared_statement).
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN, BackendCluster.FAST_CHECKS, name -> 1,
                PoolingConfig.defaults())) {
            List<Session> sessions = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                sessions.add(Session.open(sluice, i));
            }
            assertThat(sessions).filteredOn(s -> s.backend().equals("b")).hasSize(2);
            Connection temporary = openOn(sluice, "b");
            try (Statement s = temporary.createStatement()) {
                s.execute("CREATE TEMPORARY TABLE move_test.mine (x INT)");
            }
            Connection prepared = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(),
                    null, "useServerPrepStmts=true"), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
            while (!cluster.backendOf(prepared).equals("b")) {
                prepared.close();
                prepared = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), null,
                        "useServerPrepStmts=true"), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
            }
            PreparedStatement kept = prepared.prepareStatement("SELECT ? * 2");
            kept.setInt(1, 1);
            kept.executeQuery().close(); // the driver prepares on the server at the first execute, and keeps it

            assertThat(sluice.drain("b")).isTrue();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (moves(sluice, "drain") < 3 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(moves(sluice, "drain")).isEqualTo(3);

            for (Session session : sessions) {
                String now = cluster.backendOf(session.connection());
                if (session.backend().equals("b")) {
                    assertThat(now).isIn("a", "c");
                    assertThat(oldConnectionClosed(session.connectionId())).as("b's connection %d closed",
                            session.connectionId()).isTrue();
                } else {
                    assertThat(now).isEqualTo(session.backend());
                    assertThat(connectionId(session.connection())).isEqualTo(session.connectionId());
                }
                session.checkState();
            }
            // What only b's connection holds keeps its session there, which says why; a prepared statement does not.
            assertThat(cluster.backendOf(temporary)).isEqualTo("b");
            assertThat(cluster.backendOf(prepared)).isIn("a", "c");
            assertThat(sluice.sessions()).filteredOn(s -> "b".equals(s.backend()))
                    .extracting(s -> s.pinnedBy() + "/" + s.moveWaiting())
                    .containsExactly("temporary_table/drain");
            assertThat(refused(sluice, "pinned")).isGreaterThanOrEqualTo(1);
            try (Statement s = temporary.createStatement()) {
                s.execute("INSERT INTO move_test.mine VALUES (1)");
            }
            kept.setInt(1, 21);
            try (ResultSet rs = kept.executeQuery()) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(42);
            }
            assertThat(sluice.sessions()).filteredOn(s -> s.moves() == 1).hasSize(3);
            // The moved sessions' old connections were closed, not pooled: b keeps the pinned session's only.
            assertThat(sluice.backends()).filteredOn(b -> b.state().name().equals("b")).singleElement()
                    .satisfies(b -> assertThat(b.openConnections()).isEqualTo(1));

            temporary.close();
            prepared.close();
            for (Session session : sessions) {
                session.connection().close();
            }
            assertThat(sluice.undrain("b")).isTrue();
        }
    }

    /**
     * Decision 106: a session whose client keeps server-side prepared statements open moves with them. One prepared
     * and run before the move runs many times after it (prepared again on the new server on first use, with the
     * parameter types the driver sent only before the move), one is closed after the move and prepared again, one
     * prepared before runs first after it; the session is on a new connection of another server.
     */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aSessionWithServerSidePreparedStatementsMovesWithThem(JdbcDriver driver) throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN, BackendCluster.FAST_CHECKS, name -> 1,
                PoolingConfig.defaults());
             Connection c = openOn(sluice, "b", driver, "useServerPrepStmts=true")) {
            try {
                long before = connectionId(c);
                PreparedStatement kept = c.prepareStatement("SELECT ? * 2, CONCAT(?, '!'), @@port");
                checkKept(kept, 1, "b");
                PreparedStatement closedAfter = c.prepareStatement("SELECT COUNT(*) FROM move_test.few WHERE n <= ?");
                closedAfter.setInt(1, 3);
                assertThat(single(closedAfter)).isEqualTo("3");
                PreparedStatement firstRunAfter = c.prepareStatement("SELECT ? + ?");

                assertThat(sluice.drain("b")).isTrue();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (moves(sluice, "drain") < 1 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertThat(moves(sluice, "drain")).isEqualTo(1);
                String now = cluster.backendOf(c);
                assertThat(now).isIn("a", "c"); // @@port: another server (whose connection ids may be b's too)
                assertThat(oldConnectionClosed(before)).as("b's connection %d closed", before).isTrue();

                for (int i = 2; i <= 300; i++) {
                    checkKept(kept, i, now);
                }
                closedAfter.setInt(1, 7);
                assertThat(single(closedAfter)).isEqualTo("7");
                closedAfter.close();
                try (PreparedStatement again = c.prepareStatement(
                        "SELECT COUNT(*) FROM move_test.few WHERE n <= ?")) {
                    again.setInt(1, 2);
                    assertThat(single(again)).isEqualTo("2");
                }
                firstRunAfter.setInt(1, 40);
                firstRunAfter.setInt(2, 2);
                assertThat(single(firstRunAfter)).isEqualTo("42");
                checkKept(kept, -5, now);
                kept.close();
                firstRunAfter.close();
                assertThat(sluice.sessions()).filteredOn(s -> s.moves() > 0).singleElement().satisfies(s -> {
                    assertThat(s.backend()).isEqualTo(now);
                    assertThat(s.moves()).isEqualTo(1);
                    assertThat(s.pinnedBy()).isNull();
                });
            } finally {
                sluice.undrain("b");
            }
        }
    }

    /**
     * An open cursor (COM_STMT_FETCH to come) is the server connection's: its session stays, says why, reads every
     * row where they are, and moves once the statement is closed.
     */
    @Test
    void aSessionWithAnOpenCursorStaysUntilItIsClosed() throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN, BackendCluster.FAST_CHECKS, name -> 1,
                PoolingConfig.defaults());
             Connection c = openOn(sluice, "b", JdbcDriver.MYSQL, "useServerPrepStmts=true&useCursorFetch=true")) {
            try {
                PreparedStatement cursor = c.prepareStatement("SELECT n FROM move_test.few ORDER BY n");
                cursor.setFetchSize(2);
                ResultSet rows = cursor.executeQuery();
                assertThat(rows.next()).isTrue();
                List<Integer> read = new ArrayList<>(List.of(rows.getInt(1)));

                assertThat(sluice.drain("b")).isTrue();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                while (refused(sluice, "pinned") < 1 && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertThat(sluice.sessions()).filteredOn(s -> "b".equals(s.backend())).singleElement()
                        .satisfies(s -> assertThat(s.pinnedBy() + "/" + s.moveWaiting()).isEqualTo("cursor/drain"));
                while (rows.next()) {
                    read.add(rows.getInt(1));
                }
                assertThat(read).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
                assertThat(cluster.backendOf(c)).isEqualTo("b");
                rows.close();
                cursor.close();

                // Unpinned: the next idle moment after the retry delay moves it.
                deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                String now;
                while ((now = cluster.backendOf(c)).equals("b") && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                assertThat(now).isIn("a", "c");
                assertThat(moves(sluice, "drain")).isEqualTo(1);
            } finally {
                sluice.undrain("b");
            }
        }
    }

    private static void checkKept(PreparedStatement kept, int i, String backend) throws SQLException {
        checkKept(cluster, kept, i, backend);
    }

    /** Runs {@code SELECT ? * 2, CONCAT(?, '!'), @@port} with {@code i}: checks its row and the backend it ran on. */
    static void checkKept(BackendCluster cluster, PreparedStatement kept, int i, String backend) throws SQLException {
        kept.setInt(1, i);
        kept.setString(2, "v" + i);
        try (ResultSet rs = kept.executeQuery()) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getLong(1)).isEqualTo(2L * i);
            assertThat(rs.getString(2)).isEqualTo("v" + i + "!");
            assertThat(cluster.nameOfPort(rs.getInt(3))).isEqualTo(backend);
            assertThat(rs.next()).isFalse();
        }
    }

    private static String single(PreparedStatement statement) throws SQLException {
        try (ResultSet rs = statement.executeQuery()) {
            assertThat(rs.next()).isTrue();
            return rs.getString(1);
        }
    }

    /** Whether server b no longer has the connection {@code id} (polls a little: the close reaches it late). */
    private static boolean oldConnectionClosed(long id) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        try (Connection direct = cluster.server("b").rootConnection();
             PreparedStatement ps = direct.prepareStatement(
                     "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?")) {
            ps.setLong(1, id);
            while (true) {
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    if (rs.getInt(1) == 0) {
                        return true;
                    }
                }
                if (System.nanoTime() > deadline) {
                    return false;
                }
                Thread.sleep(20);
            }
        }
    }

    private static Connection openOn(Sluice sluice, String backend) throws SQLException {
        return openOn(sluice, backend, JdbcDriver.MARIADB, "");
    }

    private static Connection openOn(Sluice sluice, String backend, JdbcDriver driver, String params)
            throws SQLException {
        for (int i = 0; i < 6; i++) {
            Connection c = driver.connect(driver.url("127.0.0.1", sluice.port(), null, params), ProxyUnderTest.USER,
                    ProxyUnderTest.PASSWORD);
            if (cluster.backendOf(c).equals(backend)) {
                return c;
            }
            c.close();
        }
        throw new AssertionError("no session landed on " + backend);
    }

    private static long moves(Sluice sluice, String reason) {
        ClientCounts counts = sluice.metricSources().clients();
        return counts.moves(counts.moveReasons().indexOf(reason));
    }

    private static long refused(Sluice sluice, String reason) {
        ClientCounts counts = sluice.metricSources().clients();
        return counts.movesRefused(counts.moveRefusals().indexOf(reason));
    }
}
