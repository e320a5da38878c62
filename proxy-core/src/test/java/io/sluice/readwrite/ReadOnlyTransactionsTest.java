package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Sluice;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.ReplicationGroup;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * JDBC's {@code setReadOnly(true)} transactions run on a replica (issue #28, decision 103): the driver sends
 * {@code SET SESSION TRANSACTION READ ONLY} (seen in the group's own primary's general log: MariaDB Connector/J by
 * default, {@code readOnlyPropagatesToServer}; MySQL Connector/J only to servers it reads as 5.6.5 or later), Sluice
 * follows the session's access mode, and a transaction begun under it runs whole on a replica, where a write is
 * refused as the server refuses it (1792). Where each statement ran is read on the servers ({@code @@port}).
 */
@Tag("server")
class ReadOnlyTransactionsTest {
    private static final int ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION = 1792;
    private static ReplicationGroup servers;
    private static Sluice sluice;
    private static ProxyConfig config;

    @BeforeAll
    static void start() {
        servers = ReplicationGroup.start("readonly");
        servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
                "INSERT INTO app.t VALUES (0, 0)",
                // this group's own primary: what the drivers send reaches its general log
                "SET GLOBAL log_output = 'TABLE'", "SET GLOBAL general_log = ON");
        servers.awaitCaughtUp();
        config = servers.sluiceConfig(3000)
                .pooling(PoolingConfig.defaults())
                .readWriteSplitting(servers.splitGroup("app_rw"))
                .build();
        sluice = Sluice.start(config);
        awaitReadsOnReplicas();
    }

    /** Waits until the health checks and the replica watch let reads reach the replicas (just after start). */
    private static void awaitReadsOnReplicas() {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        try (Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), "app_rw",
                ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)) {
            while (!ranOn(c).startsWith("replica_")) {
                assertThat(System.nanoTime()).as("reads never reached a replica").isLessThan(deadline);
                Thread.sleep(50);
            }
        } catch (SQLException | InterruptedException e) {
            throw new IllegalStateException(e);
        }
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


    private static String ranOn(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT @@port, v FROM t LIMIT 1")) {
            rs.next();
            int port = rs.getInt(1);
            return port == servers.primary().port() ? "primary" : port == servers.replica(0).port() ? "replica_0"
                    : port == servers.replica(1).port() ? "replica_1" : "port " + port;
        }
    }

    /** The statements the primary's general log has that contain {@code text}. */
    private static List<String> logged(String text) throws SQLException {
        List<String> found = new ArrayList<>();
        try (Connection c = servers.primary().rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT CONVERT(argument USING utf8mb4) FROM mysql.general_log"
                     + " WHERE command_type = 'Query'")) {
            while (rs.next()) {
                if (rs.getString(1).toUpperCase(java.util.Locale.ROOT).contains(text)) {
                    found.add(rs.getString(1));
                }
            }
        }
        return found;
    }

    /** A statement that throws SQLException. */
    private interface SqlAction {
        void run() throws SQLException;
    }

    private static void aReadOnlyTransactionRunsOnAReplica(Connection c, int id) throws SQLException {
        c.setReadOnly(true);
        aReadOnlyTransactionRunsOnAReplica(c, id, () -> c.setReadOnly(false));
    }

    /** With the session READ ONLY: a transaction on a replica, refusing writes; then {@code readWrite}. */
    private static void aReadOnlyTransactionRunsOnAReplica(Connection c, int id, SqlAction readWrite)
            throws SQLException {
        c.setAutoCommit(false);
        String replica = ranOn(c);
        assertThat(replica).startsWith("replica_");
        assertThat(ranOn(c)).as("the transaction runs whole where it began").isEqualTo(replica);
        try (Statement s = c.createStatement()) {
            assertThatThrownBy(() -> s.executeUpdate("INSERT INTO t VALUES (" + id + ", 0)"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode())
                            .isEqualTo(ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION));
        }
        c.commit();
        assertThat(ranOn(c)).as("the next read-only transaction").startsWith("replica_");
        c.commit();

        readWrite.run();
        assertThat(ranOn(c)).as("a read-write transaction").isEqualTo("primary");
        try (Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO t VALUES (" + id + ", " + id + ")");
        }
        c.commit();
        c.setAutoCommit(true);
        assertThat(ranOn(c)).as("autocommit reads go to replicas again").startsWith("replica_");
    }

    /**
     * MySQL Connector/J sends {@code SET SESSION TRANSACTION READ ONLY} for {@code setReadOnly(true)} only to a server
     * whose greeting reads as 5.6.5 or later, and MariaDB 10.x greets with {@code 5.5.5-10.x}: against it (directly,
     * or through Sluice) the driver sends nothing, so there is nothing to follow and its transactions stay on the
     * primary, which is always correct. The same session's access mode set by SQL is followed.
     */
    @Test
    void mysqlConnectorJsReadOnlySessionTransactionsRunOnAReplica() throws Exception {
        int before = logged("TRANSACTION READ ONLY").size();
        try (Connection c = JdbcDriver.MYSQL.connect(JdbcDriver.MYSQL.url("127.0.0.1", sluice.port(), "app_rw", ""),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)) {
            c.setReadOnly(true);
            c.setAutoCommit(false);
            assertThat(logged("TRANSACTION READ ONLY")).as("Connector/J reads MariaDB 10.x's 5.5.5- as MySQL 5.5")
                    .hasSize(before);
            assertThat(ranOn(c)).isEqualTo("primary");
            c.commit();
            c.setReadOnly(false);
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                s.execute("SET SESSION TRANSACTION READ ONLY"); // what the driver sends to MySQL 5.6.5+, MariaDB 11
            }
            aReadOnlyTransactionRunsOnAReplica(c, 10, () -> {
                try (Statement s = c.createStatement()) {
                    s.execute("SET SESSION TRANSACTION READ WRITE");
                }
            });
        }
    }

    @Test
    void mariadbConnectorJsSetReadOnlyTransactionsRunOnAReplica() throws Exception {
        try (Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), "app_rw",
                ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)) {
            aReadOnlyTransactionRunsOnAReplica(c, 20);
        }
        assertThat(logged("TRANSACTION READ ONLY")).as("what MariaDB Connector/J sent for setReadOnly(true)")
                .isNotEmpty();
    }

    @Test
    void setTransactionReadOnlyLastsOneTransactionOnly() throws Exception {
        try (Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), "app_rw",
                ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD); Statement s = c.createStatement()) {
            s.execute("SET TRANSACTION READ ONLY");
            s.execute("BEGIN");
            assertThat(ranOn(c)).as("kept on the primary connection the SET ran on").isEqualTo("primary");
            assertThatThrownBy(() -> s.executeUpdate("INSERT INTO t VALUES (30, 0)"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode())
                            .isEqualTo(ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION));
            s.execute("COMMIT");
            s.execute("BEGIN");
            s.executeUpdate("INSERT INTO t VALUES (30, 30)"); // the next transaction is read-write again
            s.execute("COMMIT");
            assertThat(ranOn(c)).as("and the session is split again").startsWith("replica_");

            // The other way round: a READ ONLY session's SET TRANSACTION READ WRITE keeps its next transaction on
            // the primary connection it pins, never on a replica.
            s.execute("SET SESSION TRANSACTION READ ONLY");
            s.execute("SET TRANSACTION READ WRITE");
            s.execute("BEGIN");
            s.executeUpdate("INSERT INTO t VALUES (31, 31)");
            assertThat(ranOn(c)).isEqualTo("primary");
            s.execute("COMMIT");
            s.execute("BEGIN");
            assertThat(ranOn(c)).as("the one after is read-only again").startsWith("replica_");
            s.execute("COMMIT");
        }
    }
}
