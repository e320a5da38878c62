package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.mariadb.jdbc.util.constants.Capabilities;

/**
 * Session-pooling moves with MariaDB's metadata caching (decision 062, issue #31), between three real MariaDB servers
 * and MariaDB Connector/J's server-side prepared statements: MariaDB leaves the column definitions out of an execute
 * when the client last received the same ones on that connection, and after a move the new server takes Sluice's own
 * prepare for that. A session whose statements answer with other definitions on the new server (its table differs
 * there, or changed since the client last received its definitions) stays on its server and reads right; one whose
 * definitions are the same moves and reads right.
 */
@Tag("server")
class SessionPoolingMetadataTest {
    private static final String SELECT = "SELECT id, v FROM meta_test.t WHERE id = ?";

    private static BackendCluster cluster;

    @BeforeEach
    void sameTableEverywhere() {
        cluster = BackendCluster.shared();
        for (String name : BackendCluster.NAMES) {
            table(name, "INT", "id * 10");
        }
    }

    /** {@code meta_test.t} on server {@code name}, its column {@code v} of {@code type}, rows 1 to 5. */
    private static void table(String name, String type, String value) {
        cluster.server(name).execute("CREATE DATABASE IF NOT EXISTS meta_test", "DROP TABLE IF EXISTS meta_test.t",
                "CREATE TABLE meta_test.t (id INT PRIMARY KEY, v " + type + ")",
                "INSERT INTO meta_test.t (id) VALUES (1), (2), (3), (4), (5)",
                "UPDATE meta_test.t SET v = " + value);
    }

    /**
     * A {@code databaseName} alias over databases named otherwise on each server: the result columns' schema differs
     * from server to server, which the client does not decode rows by. The session moves, and reads right there.
     */
    @Test
    void aSessionOfAnAliasedDatabaseMovesAlthoughItsSchemaIsNamedOtherwiseThere() throws Exception {
        for (String name : BackendCluster.NAMES) {
            cluster.server(name).execute("CREATE DATABASE IF NOT EXISTS meta_alias_" + name,
                    "CREATE TABLE IF NOT EXISTS meta_alias_" + name + ".t (id INT PRIMARY KEY, v VARCHAR(20))",
                    "REPLACE INTO meta_alias_" + name + ".t VALUES (1, 'one'), (2, 'two')");
        }
        try (Sluice sluice = cluster.startProxyWithAlias(Policy.ROUND_ROBIN, PoolingConfig.defaults(), "meta_alias")) {
            Connection c = null;
            for (int i = 0; i < 6 && c == null; i++) {
                Connection candidate = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(),
                        "meta_alias", "useServerPrepStmts=true&cachePrepStmts=false"), ProxyUnderTest.USER,
                        ProxyUnderTest.PASSWORD);
                if (cluster.backendOf(candidate).equals("b")) {
                    c = candidate;
                } else {
                    candidate.close();
                }
            }
            assertThat(c).as("a session on b").isNotNull();
            try (Connection session = c; PreparedStatement select = session.prepareStatement(
                    "SELECT v, DATABASE() FROM t WHERE id = ?")) {
                select.setInt(1, 1);
                try (ResultSet rs = select.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1) + "/" + rs.getString(2)).isEqualTo("one/meta_alias_b");
                }
                assertThat(sluice.drain("b")).isTrue();
                awaitMoves(sluice, session, 1, "moved off b");
                String now = cluster.backendOf(session);
                assertThat(now).isIn("a", "c");
                select.setInt(1, 2);
                try (ResultSet rs = select.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1) + "/" + rs.getString(2)).isEqualTo("two/meta_alias_" + now);
                }
                assertThat(refused(sluice, "metadata_differs")).isZero();
            } finally {
                sluice.undrain("b");
            }
        }
    }

    @Test
    void aSessionWhoseTableDiffersOnTheOtherServersStaysAndReadsRight() throws Exception {
        table("b", "VARCHAR(20)", "CONCAT('text-', id)"); // a and c: v INT
        try (Sluice sluice = start(); Connection c = openOn(sluice, "b")) {
            try {
                PreparedStatement select = c.prepareStatement(SELECT);
                assertThat(value(select, 3)).isEqualTo("text-3");

                assertThat(sluice.drain("b")).isTrue();
                await(() -> refused(sluice, "metadata_differs") >= 1, "refused for metadata_differs");
                assertThat(sluice.sessions()).filteredOn(s -> "b".equals(s.backend())).singleElement()
                        .satisfies(s -> assertThat(s.pinnedBy() + "/" + s.moveWaiting())
                                .isEqualTo("metadata_differs/drain"));
                for (int i = 0; i < 20; i++) {
                    assertThat(value(select, i % 5 + 1)).isEqualTo("text-" + (i % 5 + 1));
                    Thread.sleep(60); // over a second of idle moments: it is asked again, and stays again
                }
                assertThat(cluster.backendOf(c)).isEqualTo("b");
                assertThat(refused(sluice, "metadata_differs")).isGreaterThanOrEqualTo(2);
                assertThat(moves(sluice)).isZero();

                // Once the statement is closed, nothing keeps it: it moves, and its next statement reads the new
                // server's table.
                select.close();
                awaitMoves(sluice, c, 1, "moved once the statement was closed");
                String now = cluster.backendOf(c);
                assertThat(now).isIn("a", "c");
                try (PreparedStatement again = c.prepareStatement(SELECT)) {
                    assertThat(value(again, 4)).isEqualTo("40");
                }
            } finally {
                sluice.undrain("b");
            }
        }
    }

    /** Its server gone, a session that stayed for its definitions is closed with an error that says why. */
    @Test
    void aSessionThatStayedForItsDefinitionsIsClosedWithTheReasonWhenItsServerGoes() throws Exception {
        table("b", "VARCHAR(20)", "CONCAT('text-', id)");
        try (Sluice sluice = start(); Connection c = openOn(sluice, "b")) {
            try {
                PreparedStatement select = c.prepareStatement(SELECT);
                assertThat(value(select, 1)).isEqualTo("text-1");
                assertThat(sluice.drain("b")).isTrue();
                await(() -> refused(sluice, "metadata_differs") >= 1, "refused for metadata_differs");

                cluster.server("b").kill();
                assertThatThrownBy(() -> value(select, 2)).isInstanceOf(SQLException.class)
                        .hasMessageContaining("Lost connection to backend 'b'")
                        .hasMessageContaining("metadata_differs");
            } finally {
                sluice.undrain("b");
                cluster.restoreAll();
            }
        }
    }

    /**
     * The table is altered on every server after the client prepared its statement, before it ran it: the client
     * still has the old definitions, which no server would answer with. The session stays until an execute brings
     * it the new ones, then moves and reads right.
     */
    @Test
    void aTableAlteredAfterThePrepareKeepsTheSessionUntilTheClientHasTheNewDefinitions() throws Exception {
        try (Sluice sluice = start(); Connection c = openOn(sluice, "b")) {
            try {
                PreparedStatement select = c.prepareStatement(SELECT);
                long prepares = prepares(c);
                assertThat(select.getMetaData().getColumnType(2)).isEqualTo(java.sql.Types.INTEGER);
                assertThat(prepares(c)).as("prepared on b, not run").isEqualTo(prepares + 1);
                for (String name : BackendCluster.NAMES) {
                    cluster.server(name).execute("ALTER TABLE meta_test.t MODIFY v VARCHAR(20)",
                            "UPDATE meta_test.t SET v = CONCAT('altered-', id)");
                }

                assertThat(sluice.drain("b")).isTrue();
                await(() -> refused(sluice, "metadata_differs") >= 1, "refused for metadata_differs");
                assertThat(cluster.backendOf(c)).isEqualTo("b");
                // b sends the new definitions with this execute: the client has them, and so may move.
                assertThat(value(select, 2)).isEqualTo("altered-2");
                awaitMoves(sluice, c, 1, "moved once the client had the new definitions");
                String now = cluster.backendOf(c);
                assertThat(now).isIn("a", "c");
                for (int i = 1; i <= 50; i++) {
                    assertThat(value(select, i % 5 + 1)).isEqualTo("altered-" + (i % 5 + 1));
                }
                assertThat(sluice.sessions()).filteredOn(s -> s.moves() == 1).singleElement()
                        .satisfies(s -> assertThat(s.pinnedBy()).isNull());
            } finally {
                sluice.undrain("b");
            }
        }
    }

    /**
     * Same tables everywhere: the session moves with its statements, a plain one and one whose result columns
     * depend on its parameters, and reads right; it moves again, to the third server, and reads right there too.
     */
    @Test
    void aSessionWhoseDefinitionsAreTheSameMovesTwiceAndReadsRight() throws Exception {
        try (Sluice sluice = start(); Connection c = openOn(sluice, "b")) {
            try {
                PreparedStatement select = c.prepareStatement(SELECT);
                PreparedStatement expression = c.prepareStatement("SELECT ? * 2, CONCAT(?, '!'), @@port");
                assertThat(value(select, 1)).isEqualTo("10");
                SessionPoolingMovesTest.checkKept(cluster, expression, 1, "b");

                assertThat(sluice.drain("b")).isTrue();
                awaitMoves(sluice, c, 1, "moved off b");
                String first = cluster.backendOf(c);
                assertThat(first).isIn("a", "c");
                for (int i = 1; i <= 20; i++) {
                    assertThat(value(select, i % 5 + 1)).isEqualTo(String.valueOf((i % 5 + 1) * 10));
                    SessionPoolingMovesTest.checkKept(cluster, expression, i, first);
                }

                // A second move: the statements are Sluice's to map now, their definitions still followed.
                assertThat(sluice.drain(first)).isTrue();
                awaitMoves(sluice, c, 2, "moved off " + first);
                assertThat(cluster.backendOf(c)).isEqualTo("c".equals(first) ? "a" : "c");
                String second = cluster.backendOf(c);
                for (int i = 1; i <= 20; i++) {
                    assertThat(value(select, i % 5 + 1)).isEqualTo(String.valueOf((i % 5 + 1) * 10));
                    SessionPoolingMovesTest.checkKept(cluster, expression, i, second);
                }
                assertThat(refused(sluice, "metadata_differs")).isZero();
                sluice.undrain(first);
            } finally {
                sluice.undrain("b");
            }
        }
    }

    /**
     * After a move, a statement evicted from the connection's statement cache (size 1 here) is prepared again lazily;
     * the table having been altered since the client last received its definitions, the execute fails with MariaDB's
     * own "needs to be re-prepared" (1615) instead of reaching the client without definitions, and a statement
     * prepared again by the client reads right.
     */
    @Test
    void aStatementPreparedAgainLazilyWithOtherDefinitionsAsksTheClientToPrepareItAgain() throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN, BackendCluster.FAST_CHECKS, name -> 1,
                new PoolingConfig(io.sluice.config.PoolingMode.SESSION, 1));
             Connection c = openOn(sluice, "b")) {
            try {
                PreparedStatement select = c.prepareStatement(SELECT);
                PreparedStatement other = c.prepareStatement("SELECT ? + 1");
                assertThat(value(select, 1)).isEqualTo("10");
                other.setInt(1, 1);
                other.executeQuery().close();

                assertThat(sluice.drain("b")).isTrue();
                awaitMoves(sluice, c, 1, "moved off b");
                String now = cluster.backendOf(c);
                other.setInt(1, 2);
                other.executeQuery().close(); // the one statement the new connection's cache keeps
                cluster.server(now).execute("ALTER TABLE meta_test.t MODIFY v VARCHAR(20)",
                        "UPDATE meta_test.t SET v = CONCAT('altered-', id)");

                assertThatThrownBy(() -> value(select, 2)).isInstanceOf(SQLException.class)
                        .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1615));
                select.close();
                try (PreparedStatement again = c.prepareStatement(SELECT)) {
                    assertThat(value(again, 2)).isEqualTo("altered-2");
                }
                other.close();
            } finally {
                sluice.undrain("b");
            }
        }
    }

    private static Sluice start() {
        return cluster.startProxy(Policy.ROUND_ROBIN, BackendCluster.FAST_CHECKS, name -> 1,
                PoolingConfig.defaults());
    }

    /**
     * A MariaDB Connector/J session on {@code backend}, with server-side prepared statements that it closes on the
     * server when they are closed (no client-side cache), and MariaDB's metadata caching negotiated.
     */
    private static Connection openOn(Sluice sluice, String backend) throws SQLException {
        for (int i = 0; i < 6; i++) {
            Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), null,
                    "useServerPrepStmts=true&cachePrepStmts=false"), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
            if (cluster.backendOf(c).equals(backend)) {
                assertThat(c.unwrap(org.mariadb.jdbc.Connection.class).getContext()
                        .hasClientCapability(Capabilities.CACHE_METADATA)).as("metadata caching negotiated").isTrue();
                return c;
            }
            c.close();
        }
        throw new AssertionError("no session landed on " + backend);
    }

    private static String value(PreparedStatement select, int id) throws SQLException {
        select.setInt(1, id);
        try (ResultSet rs = select.executeQuery()) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).isEqualTo(id);
            String value = rs.getString(2);
            assertThat(rs.next()).isFalse();
            return value;
        }
    }

    /** b's count of the session's COM_STMT_PREPARE. */
    private static long prepares(Connection c) throws SQLException {
        try (java.sql.Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")) {
            assertThat(rs.next()).isTrue();
            return rs.getLong(2);
        }
    }

    /** Waits for {@code count} moves, the session running a query now and then: a move happens at an idle moment. */
    private static void awaitMoves(Sluice sluice, Connection c, long count, String what) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (moves(sluice) < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 5 s: " + what + "; " + sluice.sessions());
            }
            cluster.backendOf(c);
            Thread.sleep(50);
        }
        assertThat(moves(sluice)).isEqualTo(count);
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 5 s: " + what);
            }
            Thread.sleep(10);
        }
    }

    private static long moves(Sluice sluice) {
        ClientCounts counts = sluice.metricSources().clients();
        long total = 0;
        for (int i = 0; i < counts.moveReasons().size(); i++) {
            total += counts.moves(i);
        }
        return total;
    }

    private static long refused(Sluice sluice, String reason) {
        ClientCounts counts = sluice.metricSources().clients();
        return counts.movesRefused(counts.moveRefusals().indexOf(reason));
    }
}
