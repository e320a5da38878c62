package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Sluice;
import io.sluice.admin.AdminServer;
import io.sluice.api.SwitchoverReport;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.capture.TrafficCapture;
import io.sluice.config.AdminConfig;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PrimaryDiscovery;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ReadWriteSplittingConfig;
import io.sluice.config.ServerAccount;
import io.sluice.testing.AdminClient;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.ReplicationGroup;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What sessions that hold a connection get when the primary changes under them (issue #40, decision 179). A session
 * with autocommit off holds its connection only while a transaction is open (split sessions run on transaction
 * pooling): its next transaction runs on the new primary, no error. A session pinned to the old primary (a temporary
 * table) keeps its connection and its state there: its writes get the server's own ERR 1290 (read-only), its reads
 * and its temporary table go on, and once it reconnects it writes to the new primary.
 */
@Tag("server")
class OldPrimarySessionsTest {
    private static final String APP_USER = "fo_app";
    private static final String APP_PASSWORD = "fo_app_pw";
    private static final String ADMIN_USER = "fo_admin";
    private static final String ADMIN_PASSWORD = "fo_admin_pw";
    private static final String HOST = TestMariaDb.HOST;
    private static final String TOKEN = "fo-token";

    @Test
    void autocommitOffFollowsAtItsNextTransactionAndAPinnedSessionGetsTheServersRefusal() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("fo-held")) {
            prepare(servers);
            try (Sluice sluice = Sluice.start(config(servers));
                 Connection manual = connect(sluice.port()); Statement m = manual.createStatement();
                 Connection pinned = connect(sluice.port()); Statement p = pinned.createStatement()) {
                awaitPrimary(sluice, "primary");
                int oldId = serverId(servers.primary());
                int newId = serverId(servers.replica(0));
                manual.setAutoCommit(false);
                m.executeUpdate("INSERT INTO t (k, server) VALUES ('manual-1', @@server_id)");
                manual.commit();
                p.executeUpdate("CREATE TEMPORARY TABLE scratch (x INT)");
                p.executeUpdate("INSERT INTO t (k, server) VALUES ('pinned-1', @@server_id)");

                // The pinned session holds a connection of the old primary: the switchover goes on only when forced.
                SwitchoverReport report = sluice.switchover("app_rw", "replica_0", false, true, 500);
                assertThat(report.switched()).as(report.toString()).isTrue();
                awaitPrimary(sluice, "replica_0");

                m.executeUpdate("INSERT INTO t (k, server) VALUES ('manual-2', @@server_id)");
                manual.commit();
                assertThat(serverOf(servers.replica(0), "manual-2")).isEqualTo(newId);

                assertThatThrownBy(() -> p.executeUpdate("INSERT INTO t (k, server) VALUES ('pinned-2', @@server_id)"))
                        .isInstanceOf(SQLException.class)
                        .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1290));
                p.executeUpdate("INSERT INTO scratch VALUES (1)"); // its temporary table is still there
                try (ResultSet rs = p.executeQuery("SELECT COUNT(*), @@server_id FROM scratch")) {
                    rs.next();
                    assertThat(rs.getInt(1)).isEqualTo(1);
                    assertThat(rs.getInt(2)).isEqualTo(oldId);
                }
                assertThat(countOf(servers.replica(0), "pinned-2")).isZero();
                assertThat(countOf(servers.primary(), "pinned-2")).isZero();

                try (Connection again = connect(sluice.port()); Statement a = again.createStatement()) {
                    a.executeUpdate("INSERT INTO t (k, server) VALUES ('pinned-3', @@server_id)");
                }
                assertThat(serverOf(servers.replica(0), "pinned-3")).isEqualTo(newId);

                // The admin API's rejoin: admin token, a data source named, 409 with the reason when refused.
                try (AdminServer server = AdminServer.start(AdminConfig.on("127.0.0.1", 0, TOKEN), sluice,
                        new TrafficCapture(), null)) {
                    AdminClient admin = new AdminClient("127.0.0.1", server.port());
                    assertThat(admin.post("/api/groups/app_rw/rejoin?datasource=primary", null).status())
                            .isIn(401, 403);
                    assertThat(admin.post("/api/groups/app_rw/rejoin", TOKEN).status()).isEqualTo(400);
                    AdminClient.Response unknown = admin.post("/api/groups/app_rw/rejoin?datasource=nowhere", TOKEN);
                    assertThat(unknown.status()).isEqualTo(409);
                    assertThat(unknown.body()).contains("no server nowhere");
                    AdminClient.Response primary = admin.post("/api/groups/app_rw/rejoin?datasource=replica_0",
                            TOKEN);
                    assertThat(primary.status()).isEqualTo(409);
                    assertThat(primary.body()).contains("replica_0 is the primary");
                    assertThat(admin.get("/api/groups/app_rw", TOKEN).body()).contains("\"autoFailover\":false")
                            .contains("\"fenced\":[]").contains("\"failovers\":0");
                }
            }
        }
    }

    private static void prepare(ReplicationGroup servers) {
        servers.primary().execute("CREATE DATABASE app",
                "CREATE TABLE app.t (k VARCHAR(40) PRIMARY KEY, server INT NOT NULL)",
                "CREATE USER '" + APP_USER + "'@'" + HOST + "' IDENTIFIED BY '" + APP_PASSWORD + "'",
                "GRANT SELECT, INSERT, UPDATE, DELETE, CREATE TEMPORARY TABLES ON app.* TO '" + APP_USER + "'@'"
                        + HOST + "'",
                "GRANT SLAVE MONITOR ON *.* TO '" + APP_USER + "'@'" + HOST + "'",
                "CREATE USER '" + ADMIN_USER + "'@'" + HOST + "' IDENTIFIED BY '" + ADMIN_PASSWORD + "'",
                "GRANT RELOAD, READ_ONLY ADMIN, REPLICATION SLAVE ADMIN, SLAVE MONITOR, REPLICATION SLAVE ON *.* TO '"
                        + ADMIN_USER + "'@'" + HOST + "'");
        servers.awaitCaughtUp();
    }

    private static ProxyConfig config(ReplicationGroup servers) {
        ProxyConfig.Builder config = ProxyConfig.builder().port(0).user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .healthCheck(new HealthCheckConfig(200, 1000, 1, 2))
                .dataSource(dataSource("primary", servers.primary()));
        for (int i = 0; i < servers.replicas().size(); i++) {
            config.dataSource(dataSource("replica_" + i, servers.replica(i)));
        }
        ReadWriteSplittingConfig group = servers.splitGroup("app_rw").withTopology(PrimaryDiscovery.READ_ONLY,
                Duration.ofSeconds(10), new ServerAccount(ADMIN_USER, ADMIN_PASSWORD), null);
        return config.readWriteSplitting(group).build();
    }

    private static DataSourceConfig dataSource(String name, ExtraMariaDb server) {
        return new DataSourceConfig(name, server.jdbcUrl("app"), APP_USER, APP_PASSWORD, 2000, 60_000, 600_000, 16, 0,
                1, false);
    }

    private static Connection connect(int port) throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", port, "app_rw", ""),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    private static void awaitPrimary(Sluice sluice, String primary) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!(sluice.groups().get(0).roles().takesWrites()
                && sluice.groups().get(0).roles().primary().equals(primary))) {
            assertThat(System.nanoTime()).as("roles now: " + sluice.groups().get(0).roles()).isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    private static int serverId(ExtraMariaDb server) throws SQLException {
        return Integer.parseInt(query(server, "SELECT @@server_id"));
    }

    private static int serverOf(ExtraMariaDb server, String key) throws SQLException {
        return Integer.parseInt(query(server, "SELECT server FROM app.t WHERE k = '" + key + "'"));
    }

    private static int countOf(ExtraMariaDb server, String key) throws SQLException {
        return Integer.parseInt(query(server, "SELECT COUNT(*) FROM app.t WHERE k = '" + key + "'"));
    }

    private static String query(ExtraMariaDb server, String sql) throws SQLException {
        try (Connection c = server.rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
