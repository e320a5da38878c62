package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Sluice;
import io.sluice.balancer.BackendStatus;
import io.sluice.config.ProxyConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.ReplicationGroup;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The primary of a read/write split group dies (issue #28): an open session's writes get a clear error naming the
 * primary, its reads go on from the replicas, and once the primary is back its writes work again.
 */
@Tag("server")
class PrimaryDownTest {

    @Test
    void writesFailClearlyAndReadsGoOnWhileThePrimaryIsDown() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("down")) {
            servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)",
                    "INSERT INTO app.t VALUES (1)");
            servers.awaitCaughtUp();
            ProxyConfig config = servers.sluiceConfig(2000)
                    .readWriteSplitting(servers.splitGroup("app_rw"))
                    .build();
            try (Sluice sluice = Sluice.start(config);
                 Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(),
                         "app_rw", ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
                 Statement s = c.createStatement()) {
                assertThat(count(s)).isEqualTo(1);
                servers.killPrimary();
                awaitStatus(sluice, "primary", BackendStatus.DOWN);

                assertThatThrownBy(() -> s.executeUpdate("INSERT INTO t VALUES (2)"))
                        .isInstanceOf(SQLException.class).hasMessageContaining("primary");
                for (int i = 0; i < 4; i++) {
                    assertThat(count(s)).isEqualTo(1); // from the replicas
                }

                servers.startPrimary();
                awaitStatus(sluice, "primary", BackendStatus.UP);
                s.executeUpdate("INSERT INTO t VALUES (2)");
                assertThat(count(s)).isEqualTo(2); // read-your-writes: the replica waits for it
            }
        }
    }

    /**
     * A client that names the group logs in while the primary is stopped (before decision 103 the login was refused
     * with "No backend is available"): its reads come from the replicas, a write gets ERR 1290 naming the group and
     * its down primary while the session goes on, and once the primary is back the same session writes again. Both
     * drivers: their connect-time SETs must be answered too.
     */
    @Test
    void aClientLogsInToTheGroupWhileThePrimaryIsDownAndWritesOnceItIsBack() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("login-down")) {
            servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)",
                    "INSERT INTO app.t VALUES (1)");
            servers.awaitCaughtUp();
            try (Sluice sluice = Sluice.start(config(servers))) {
                servers.stopPrimary();
                awaitStatus(sluice, "primary", BackendStatus.DOWN);
                try (Connection mariadb = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1",
                        sluice.port(), "app_rw", ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
                     Connection mysql = JdbcDriver.MYSQL.connect(JdbcDriver.MYSQL.url("127.0.0.1",
                             sluice.port(), "app_rw", ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
                     Statement s = mariadb.createStatement(); Statement m = mysql.createStatement()) {
                    for (Statement each : List.of(s, m)) {
                        assertThat(count(each)).isEqualTo(1);
                        assertThat(ranOn(servers, each)).startsWith("replica_");
                        assertThatThrownBy(() -> each.executeUpdate("INSERT INTO t VALUES (2)"))
                                .isInstanceOfSatisfying(SQLException.class, e -> {
                                    assertThat(e.getErrorCode()).isEqualTo(1290);
                                    assertThat(e.getSQLState()).isEqualTo("HY000");
                                    assertThat(e.getMessage()).contains("'app_rw'").contains("primary")
                                            .contains("down");
                                });
                        assertThat(count(each)).isEqualTo(1); // the session goes on
                        each.execute("SET SESSION sql_mode = 'ANSI_QUOTES'"); // answered by a replica
                    }
                    // A server-wide SET is never answered by a replica in the primary's place.
                    assertThatThrownBy(() -> s.execute("SET GLOBAL max_connections = 321"))
                            .isInstanceOfSatisfying(SQLException.class,
                                    e -> assertThat(e.getErrorCode()).isEqualTo(1290));

                    servers.startPrimary();
                    awaitStatus(sluice, "primary", BackendStatus.UP);
                    s.executeUpdate("INSERT INTO t VALUES (2)");
                    m.executeUpdate("INSERT INTO t VALUES (3)");
                    // Read-your-writes once the primary is back. Causal reads are per session (LOCAL): s waits
                    // for its own write only, so whether it sees m's row too depends on the replica's lag; m's
                    // write came after s's on the one primary, so waiting for m's covers both.
                    assertThat(countWhere(s, "id = 2")).isEqualTo(1);
                    assertThat(count(m)).isEqualTo(3);
                    try (ResultSet rs = m.executeQuery("SELECT @@SESSION.sql_mode")) {
                        rs.next();
                        assertThat(rs.getString(1)).isEqualTo("ANSI_QUOTES"); // carried to whichever ran it
                    }
                }
            }
        }
    }

    /**
     * A client that pipelines while the primary is down gets an answer to every statement it sent: a write that
     * waited to be routed gets ERR 1290 and the read behind it is routed on its own, to a replica; a read pipelined
     * behind a write that is taking a primary connection gets the write's error (it runs where the write runs). Before,
     * the commands held behind a failed connection were dropped unanswered, and the client waited for ever.
     */
    @Test
    void aPipeliningClientGetsAnAnswerToEveryStatementWhileThePrimaryIsDown() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("pipelined-down")) {
            servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)");
            servers.awaitCaughtUp();
            try (Sluice sluice = Sluice.start(config(servers))) {
                servers.stopPrimary();
                awaitStatus(sluice, "primary", BackendStatus.DOWN);
                try (RawMySqlClient client = RawMySqlClient.login("127.0.0.1", sluice.port(), ProxyUnderTest.USER,
                        ProxyUnderTest.PASSWORD, "app_rw")) {
                    client.sendQuery("SELECT @@port");
                    client.sendQuery("INSERT INTO t VALUES (1)");
                    client.sendQuery("SELECT @@port");
                    assertThat(replicaPort(servers, client.readResult())).isTrue();
                    assertThat(client.readResult().end().errorCode()).isEqualTo(1290);
                    assertThat(replicaPort(servers, client.readResult())).isTrue();

                    client.sendQuery("INSERT INTO t VALUES (2)");
                    client.sendQuery("SELECT @@port");
                    assertThat(client.readResult().end().errorCode()).isEqualTo(1290);
                    assertThat(client.readResult().end().errorCode()).isEqualTo(1290);

                    assertThat(replicaPort(servers, client.query("SELECT @@port"))).isTrue(); // the session goes on
                }
            }
        }
    }

    private static boolean replicaPort(ReplicationGroup servers, RawMySqlClient.QueryResult result) {
        assertThat(result.end().isErr()).as("%s", result.end()).isFalse();
        int port = Integer.parseInt(result.rows().get(0).get(0));
        return port == servers.replica(0).port() || port == servers.replica(1).port();
    }

    private static ProxyConfig config(ReplicationGroup servers) {
        return servers.sluiceConfig(2000)
                .readWriteSplitting(servers.splitGroup("app_rw"))
                .build();
    }

    private static String ranOn(ReplicationGroup servers, Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT @@port")) {
            rs.next();
            int port = rs.getInt(1);
            return port == servers.primary().port() ? "primary" : port == servers.replica(0).port() ? "replica_0"
                    : port == servers.replica(1).port() ? "replica_1" : "port " + port;
        }
    }

    private static int count(Statement s) throws SQLException {
        return countWhere(s, "TRUE");
    }

    private static int countWhere(Statement s, String condition) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t WHERE " + condition)) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static void awaitStatus(Sluice sluice, String name, BackendStatus wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (sluice.backends().stream().noneMatch(b -> b.state().name().equals(name)
                && b.state().status() == wanted)) {
            assertThat(System.nanoTime()).as(name + " never " + wanted + ": " + sluice.backends())
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
