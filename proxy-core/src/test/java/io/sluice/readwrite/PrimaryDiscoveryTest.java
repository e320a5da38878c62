package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Sluice;
import io.sluice.api.GroupTopology;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.replication.Roles;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PrimaryDiscovery;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ReadWriteSplittingConfig;
import io.sluice.ops.metrics.SluiceMetrics;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.PrometheusText;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.ReplicationGroup;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A read/write split group with {@code primaryDiscovery: READ_ONLY} (issue #40) on a real MariaDB primary and two
 * replicas: a promotion made by an outside tool is followed with no config change, a group without a writable server
 * holds writes, and a split brain gets ERR 1290 and nothing written anywhere.
 *
 * <p>Sluice's backend account is an application's ({@code top_app}: DML on the schema, and SLAVE MONITOR for the
 * replica watch), not root: root's READ ONLY ADMIN would pass {@code read_only}, and a write on a server that is no
 * longer the primary would succeed there instead of being refused.
 */
@Tag("server")
class PrimaryDiscoveryTest {
    private static final String APP_USER = "top_app";
    private static final String APP_PASSWORD = "top_app_pw";
    private static final int INTERVAL_MILLIS = 200;

    @Test
    void writesFollowAPromotionMadeByAnOutsideToolUnderLoad() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("top-promote")) {
            prepare(servers);
            try (Sluice sluice = Sluice.start(config(servers, Duration.ofSeconds(10)))) {
                awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("primary"));
                Writer writer = new Writer(sluice.port());
                Thread load = new Thread(writer, "top-writer");
                load.start();
                writer.awaitAcknowledged(50);

                // The outside tool: the old primary read-only, the candidate caught up, promoted, the others repointed.
                long readOnlyAt = System.nanoTime();
                servers.primary().execute("SET GLOBAL read_only = ON");
                servers.awaitApplied(0, servers.primaryPosition());
                ExtraMariaDb candidate = servers.replica(0);
                candidate.execute("STOP SLAVE", "RESET SLAVE ALL", "SET GLOBAL read_only = OFF");
                long promotedAt = System.nanoTime();
                servers.replica(1).execute("STOP SLAVE", changeMasterTo(candidate), "START SLAVE");
                servers.primary().execute("SET GLOBAL gtid_slave_pos = @@GLOBAL.gtid_binlog_pos",
                        changeMasterTo(candidate), "START SLAVE");

                awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("replica_0"));
                long seenAt = System.nanoTime();
                long followedMillis = TimeUnit.NANOSECONDS.toMillis(seenAt - promotedAt);
                int before = writer.acknowledged.size();
                writer.awaitAcknowledged(before + 100);
                // A session that logs in after the change writes to the new primary too.
                try (Connection fresh = connect(sluice.port()); Statement s = fresh.createStatement()) {
                    s.executeUpdate("INSERT INTO t (n, server) VALUES (-1, @@server_id)");
                }
                writer.stop.set(true);
                load.join(10_000);

                Map<Integer, Integer> landedOn = rows(candidate); // n -> server_id that ran the insert
                int newPrimaryId = serverId(candidate);
                List<Integer> lost = new ArrayList<>();
                List<Integer> wrongServer = new ArrayList<>();
                for (Map.Entry<Integer, Long> ack : writer.acknowledged.entrySet()) {
                    Integer on = landedOn.get(ack.getKey());
                    if (on == null) {
                        lost.add(ack.getKey());
                    } else if (ack.getValue() > seenAt && on != newPrimaryId) {
                        wrongServer.add(ack.getKey());
                    }
                }
                assertThat(lost).as("acknowledged writes missing on the new primary").isEmpty();
                assertThat(wrongServer).as("writes acknowledged after the change that ran elsewhere").isEmpty();
                assertThat(landedOn.get(-1)).isEqualTo(newPrimaryId);
                // A write the old primary refused as read-only, in the window before Sluice's next round, ran again on
                // the new primary (decision 178): the client saw no error.
                assertThat(writer.errors).as("client errors").isEmpty();
                long refusedRounds = topology(sluice).events().stream()
                        .filter(e -> e.detail().contains("refused a write as read-only")).count();
                assertThat(followedMillis).as("followed within a health-check interval and a round's reads")
                        .isLessThan(INTERVAL_MILLIS + 2_000);
                GroupTopology topology = sluice.groups().get(0);
                assertThat(topology.primaryChanges()).isEqualTo(1);
                assertThat(topology.events()).extracting(e -> e.kind()).contains("primary_changed");
                System.out.printf("promotion followed in %d ms (the old primary read-only %d ms before); %d writes"
                        + " acknowledged, %d client errors; the old primary's refusal seen %d time(s), its writes run"
                        + " again%n", followedMillis, TimeUnit.NANOSECONDS.toMillis(promotedAt - readOnlyAt),
                        writer.acknowledged.size(), writer.errors.size(), refusedRounds);
            }
        }
    }

    @Test
    void aGroupWithoutAWritableServerHoldsWritesUntilOneIsThenRefusesThem() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("top-none")) {
            prepare(servers);
            try (Sluice sluice = Sluice.start(config(servers, Duration.ofMillis(3_000)));
                 Connection c = connect(sluice.port()); Statement s = c.createStatement()) {
                awaitRoles(sluice, Roles::takesWrites);
                servers.primary().execute("SET GLOBAL read_only = ON");
                awaitRoles(sluice, r -> r.state() == Roles.State.NO_PRIMARY);
                // Reads go on from the replicas meanwhile.
                assertThat(count(s)).isZero();

                Thread writable = new Thread(() -> {
                    sleep(800);
                    servers.primary().execute("SET GLOBAL read_only = OFF");
                });
                long start = System.nanoTime();
                writable.start();
                s.executeUpdate("INSERT INTO t (n, server) VALUES (1, @@server_id)"); // waits, then runs
                long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                writable.join();
                assertThat(waited).as("the write waited for a writable primary").isGreaterThanOrEqualTo(700);
                assertThat(rows(servers.primary())).containsKey(1);

                servers.primary().execute("SET GLOBAL read_only = ON");
                awaitRoles(sluice, r -> r.state() == Roles.State.NO_PRIMARY);
                long refusedStart = System.nanoTime();
                assertThatThrownBy(() -> s.executeUpdate("INSERT INTO t (n, server) VALUES (2, @@server_id)"))
                        .isInstanceOfSatisfying(SQLException.class, e -> {
                            assertThat(e.getErrorCode()).isEqualTo(1290);
                            assertThat(e.getMessage()).contains("'app_rw'").contains("no writable server");
                        });
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - refusedStart)).isGreaterThanOrEqualTo(
                        2_900);
                assertThat(count(s)).isEqualTo(1); // the session goes on
                servers.primary().execute("SET GLOBAL read_only = OFF");
                awaitRoles(sluice, Roles::takesWrites);
                s.executeUpdate("INSERT INTO t (n, server) VALUES (3, @@server_id)");
                assertThat(rows(servers.primary())).containsKeys(1, 3).doesNotContainKey(2);
            }
        }
    }

    @Test
    void aSplitBrainGetsErr1290NamingBothAndNothingIsWrittenToEither() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("top-split")) {
            prepare(servers);
            try (Sluice sluice = Sluice.start(config(servers, Duration.ofMillis(1_000)));
                 Connection c = connect(sluice.port()); Statement s = c.createStatement()) {
                awaitRoles(sluice, Roles::takesWrites);
                s.executeUpdate("INSERT INTO t (n, server) VALUES (1, @@server_id)");
                servers.awaitCaughtUp();
                servers.replica(0).execute("SET GLOBAL read_only = OFF");
                awaitRoles(sluice, r -> r.state() == Roles.State.SPLIT_BRAIN);
                assertThat(sluice.groups().get(0).roles().writable()).containsExactly("primary", "replica_0");
                PrometheusText metrics = PrometheusText.parse(new SluiceMetrics(sluice.metricSources()).scrape());
                assertThat(metrics.value("sluice_topology_split_brain", "group", "app_rw")).isEqualTo(1.0);
                assertThat(metrics.value("sluice_topology_without_primary", "group", "app_rw")).isEqualTo(1.0);
                assertThat(metrics.value("sluice_topology_primary", "group", "app_rw", "datasource", "primary"))
                        .isZero();

                String primaryBefore = servers.primaryPosition();
                for (int n = 10; n < 13; n++) {
                    int row = n;
                    assertThatThrownBy(() -> s.executeUpdate("INSERT INTO t (n, server) VALUES (" + row
                            + ", @@server_id)")).isInstanceOfSatisfying(SQLException.class, e -> {
                                assertThat(e.getErrorCode()).isEqualTo(1290);
                                assertThat(e.getMessage()).contains("split brain").contains("primary and replica_0");
                            });
                }
                assertThat(rows(servers.primary())).containsOnlyKeys(1);
                assertThat(rows(servers.replica(0))).containsOnlyKeys(1);
                assertThat(servers.primaryPosition()).isEqualTo(primaryBefore);
                assertThat(count(s)).isEqualTo(1); // reads go on

                servers.replica(0).execute("SET GLOBAL read_only = ON");
                awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("primary"));
                s.executeUpdate("INSERT INTO t (n, server) VALUES (2, @@server_id)");
                assertThat(rows(servers.primary())).containsOnlyKeys(1, 2);
                assertThat(sluice.groups().get(0).events()).extracting(e -> e.kind()).contains("split_brain");
                PrometheusText after = PrometheusText.parse(new SluiceMetrics(sluice.metricSources()).scrape());
                assertThat(after.value("sluice_topology_split_brain", "group", "app_rw")).isZero();
                assertThat(after.value("sluice_topology_primary", "group", "app_rw", "datasource", "primary"))
                        .isEqualTo(1.0);
                assertThat(after.value("sluice_topology_primary", "group", "app_rw", "datasource", "replica_0"))
                        .isZero();
            }
        }
    }

    // ---- fixture ------------------------------------------------------------------------------------------------

    /** The schema, table and application account, created on the primary and replicated. */
    private static void prepare(ReplicationGroup servers) {
        servers.primary().execute("CREATE DATABASE app",
                "CREATE TABLE app.t (n INT PRIMARY KEY, server INT NOT NULL)",
                "CREATE USER '" + APP_USER + "'@'" + TestMariaDb.HOST + "' IDENTIFIED BY '" + APP_PASSWORD + "'",
                "GRANT SELECT, INSERT, UPDATE, DELETE ON app.* TO '" + APP_USER + "'@'" + TestMariaDb.HOST + "'",
                "GRANT SLAVE MONITOR ON *.* TO '" + APP_USER + "'@'" + TestMariaDb.HOST + "'");
        servers.awaitCaughtUp();
    }

    private static GroupTopology topology(Sluice sluice) {
        return sluice.groups().get(0);
    }

    private static ProxyConfig config(ReplicationGroup servers, Duration primaryWait) {
        ProxyConfig.Builder config = ProxyConfig.builder().port(0).user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .healthCheck(new HealthCheckConfig(INTERVAL_MILLIS, 1000, 1, 2))
                .dataSource(dataSource("primary", servers.primary()));
        for (int i = 0; i < servers.replicas().size(); i++) {
            config.dataSource(dataSource("replica_" + i, servers.replica(i)));
        }
        ReadWriteSplittingConfig group = servers.splitGroup("app_rw")
                .withTopology(PrimaryDiscovery.READ_ONLY, primaryWait, null, null);
        return config.readWriteSplitting(group).build();
    }

    private static DataSourceConfig dataSource(String name, ExtraMariaDb server) {
        return new DataSourceConfig(name, server.jdbcUrl("app"), APP_USER, APP_PASSWORD, 2000, 60_000, 600_000, 8, 0,
                1, false);
    }

    private static String changeMasterTo(ExtraMariaDb primary) {
        return "CHANGE MASTER TO MASTER_HOST = '" + TestMariaDb.HOST + "', MASTER_PORT = " + primary.port()
                + ", MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_CONNECT_RETRY = 1,"
                + " MASTER_HEARTBEAT_PERIOD = 1, MASTER_USE_GTID = slave_pos, MASTER_SSL_VERIFY_SERVER_CERT = 0";
    }

    private static Connection connect(int port) throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", port, "app_rw", ""),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    private static void awaitRoles(Sluice sluice, Predicate<Roles> wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!wanted.test(sluice.groups().get(0).roles())) {
            assertThat(System.nanoTime()).as("roles now: " + sluice.groups().get(0).roles()).isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    /** Every row of {@code app.t} on {@code server}, read as root: n to the server id that ran its insert. */
    private static Map<Integer, Integer> rows(ExtraMariaDb server) throws SQLException {
        Map<Integer, Integer> rows = new java.util.HashMap<>();
        try (Connection c = server.rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT n, server FROM app.t")) {
            while (rs.next()) {
                rows.put(rs.getInt(1), rs.getInt(2));
            }
        }
        return rows;
    }

    private static int serverId(ExtraMariaDb server) throws SQLException {
        try (Connection c = server.rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT @@server_id")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static int count(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One long-lived session through Sluice inserting numbered rows as fast as they are answered; each acknowledged
     * row with the time of its answer, each refusal with its time and code.
     */
    private static final class Writer implements Runnable {
        final Map<Integer, Long> acknowledged = new ConcurrentHashMap<>();
        final List<long[]> errors = new CopyOnWriteArrayList<>();
        final AtomicBoolean stop = new AtomicBoolean();
        private final int port;

        Writer(int port) {
            this.port = port;
        }

        @Override
        public void run() {
            try (Connection c = connect(port); Statement s = c.createStatement()) {
                for (int n = 1; !stop.get(); n++) {
                    try {
                        s.executeUpdate("INSERT INTO t (n, server) VALUES (" + n + ", @@server_id)");
                        acknowledged.put(n, System.nanoTime());
                    } catch (SQLException e) {
                        errors.add(new long[] {System.nanoTime(), e.getErrorCode()});
                    }
                }
            } catch (SQLException e) {
                errors.add(new long[] {System.nanoTime(), -1});
            }
        }

        void awaitAcknowledged(int wanted) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (acknowledged.size() < wanted) {
                assertThat(System.nanoTime()).as("acknowledged " + acknowledged.size() + ", errors "
                        + errors.size()).isLessThan(deadline);
                Thread.sleep(10);
            }
        }
    }
}
