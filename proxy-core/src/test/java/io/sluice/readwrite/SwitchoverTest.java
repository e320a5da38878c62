package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.admin.AdminServer;
import io.sluice.api.SwitchoverReport;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.replication.Roles;
import io.sluice.capture.TrafficCapture;
import io.sluice.config.AdminConfig;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PrimaryDiscovery;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ReadWriteSplittingConfig;
import io.sluice.config.ServerAccount;
import io.sluice.ops.metrics.SluiceMetrics;
import io.sluice.testing.AdminClient;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A planned switchover run by Sluice (issue #40 item 2) on a real MariaDB primary and two replicas, under a write
 * load through Sluice: no client sees an error, every acknowledged write is on the new primary, the servers
 * replicate from it after, and a switchover back works the same way. Sluice's backend account is an application's
 * ({@code top_app}); the switchover runs as {@code top_admin} and repoints the servers with {@code top_repl}.
 */
@Tag("server")
class SwitchoverTest {
    private static final String APP_USER = "top_app";
    private static final String APP_PASSWORD = "top_app_pw";
    private static final String ADMIN_USER = "top_admin";
    private static final String ADMIN_PASSWORD = "top_admin_pw";
    private static final String REPL_USER = "top_repl";
    private static final String REPL_PASSWORD = "top_repl_pw";
    private static final String HOST = TestMariaDb.HOST;
    private static final String TOKEN = "top-token";

    @Test
    void switchoversUnderWriteLoadGiveNoClientErrorAndLoseNoWrite() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("top-switch")) {
            prepare(servers);
            try (Sluice sluice = Sluice.start(config(servers))) {
                awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("primary"));

                SwitchoverReport plan = sluice.switchover("app_rw", "replica_0", true, false, 5_000);
                assertThat(plan.error()).isEmpty();
                assertThat(plan.switched()).isFalse();
                assertThat(plan.checks()).allMatch(c -> !c.startsWith("FAILED"));
                assertThat(plan.plan()).contains("primary: SET GLOBAL read_only = ON", "replica_0: STOP SLAVE")
                        .anyMatch(p -> p.contains("MASTER_PASSWORD = '***'"))
                        .noneMatch(p -> p.contains(REPL_PASSWORD));
                assertThat(sluice.groups().get(0).roles().primary()).isEqualTo("primary"); // a dry run changes nothing

                List<Writer> writers = new ArrayList<>();
                List<Thread> threads = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    Writer writer = new Writer(sluice.port(), i);
                    writers.add(writer);
                    Thread thread = new Thread(writer, "top-writer-" + i);
                    threads.add(thread);
                    thread.start();
                }
                for (Writer writer : writers) {
                    writer.awaitAcknowledged(20);
                }

                String[] targets = {"replica_0", "primary", "replica_1"};
                List<Long> held = new ArrayList<>();
                for (String target : targets) {
                    SwitchoverReport report = sluice.switchover("app_rw", target, false, false, 5_000);
                    assertThat(report.error()).as(report.toString()).isEmpty();
                    assertThat(report.switched()).isTrue();
                    assertThat(report.steps()).extracting(SwitchoverReport.Step::outcome).containsOnly("ok");
                    assertThat(sluice.groups().get(0).roles().primary()).isEqualTo(target);
                    held.add(report.writesHeldMillis());
                    int base = writers.stream().mapToInt(w -> w.acknowledged.size()).sum();
                    for (Writer writer : writers) {
                        writer.awaitAcknowledged(writer.acknowledged.size() + 10);
                    }
                    assertThat(writers.stream().mapToInt(w -> w.acknowledged.size()).sum()).isGreaterThan(base);
                    System.out.printf("switchover to %s: writes held %d ms, steps %s%n", target,
                            report.writesHeldMillis(), report.steps());
                }
                for (Writer writer : writers) {
                    writer.stop.set(true);
                }
                for (Thread thread : threads) {
                    thread.join(10_000);
                }

                ExtraMariaDb last = servers.replica(1);
                Map<String, Integer> landed = rows(last);
                int acknowledged = 0;
                List<String> missing = new ArrayList<>();
                for (Writer writer : writers) {
                    assertThat(writer.errors).as("client errors of writer " + writer.id).isEmpty();
                    for (String key : writer.acknowledged) {
                        acknowledged++;
                        if (!landed.containsKey(key)) {
                            missing.add(key);
                        }
                    }
                }
                assertThat(missing).as("acknowledged writes missing on the new primary").isEmpty();
                // The others replicate from the new primary and have every row too.
                String position = position(last);
                for (ExtraMariaDb other : List.of(servers.primary(), servers.replica(0))) {
                    assertThat(query(other, "SELECT MASTER_GTID_WAIT('" + position + "', 30)")).isEqualTo("0");
                    assertThat(rows(other)).isEqualTo(landed);
                    assertThat(query(other, "SELECT @@GLOBAL.read_only")).isEqualTo("1");
                }
                assertThat(query(last, "SELECT @@GLOBAL.read_only")).isEqualTo("0");
                assertThat(sluice.groups().get(0).events()).extracting(e -> e.kind()).contains("switchover_step",
                        "primary_changed");
                PrometheusText metrics = PrometheusText.parse(new SluiceMetrics(sluice.metricSources()).scrape());
                assertThat(metrics.value("sluice_topology_switchovers_total", "group", "app_rw", "outcome", "switched"))
                        .isEqualTo(3.0);
                assertThat(metrics.value("sluice_topology_primary_changes_total", "group", "app_rw")).isEqualTo(3.0);
                assertThat(metrics.value("sluice_topology_primary", "group", "app_rw", "datasource", "replica_1"))
                        .isEqualTo(1.0);
                // No read waited on a replica not yet pointed at the new primary until the causal timeout (1 s):
                // those replicas take no reads until the replica watch finds them replicating from it (decision 193).
                assertThat(metrics.value("sluice_readwrite_causal_waits_total", "group", "app_rw", "outcome",
                        "timed_out")).isEqualTo(0.0);
                assertThat(metrics.value("sluice_readwrite_causal_waits_total", "group", "app_rw", "outcome",
                        "reached")).isGreaterThan(0.0);
                System.out.printf("3 switchovers, %d writes acknowledged, 0 errors, writes held %s ms%n",
                        acknowledged, held);
            }
        }
    }

    @Test
    void aSwitchoverIsAbandonedWithoutErrorWhileAWriteTransactionStaysOpen() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("top-abandon")) {
            prepare(servers);
            try (Sluice sluice = Sluice.start(config(servers));
                 Connection open = connect(sluice.port()); Statement s = open.createStatement()) {
                awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("primary"));
                open.setAutoCommit(false);
                s.executeUpdate("INSERT INTO t (k, server) VALUES ('open', @@server_id)");

                SwitchoverReport report = sluice.switchover("app_rw", "replica_0", false, false, 500);
                assertThat(report.switched()).isFalse();
                assertThat(report.error()).contains("abandoned").contains("still open");
                assertThat(sluice.groups().get(0).roles().takesWrites()).isTrue();
                assertThat(sluice.groups().get(0).roles().primary()).isEqualTo("primary");
                assertThat(query(servers.primary(), "SELECT @@GLOBAL.read_only")).isEqualTo("0");
                open.commit(); // the transaction was never disturbed
                open.setAutoCommit(true);
                s.executeUpdate("INSERT INTO t (k, server) VALUES ('after', @@server_id)");
                assertThat(rows(servers.primary())).containsKeys("open", "after");

                SwitchoverReport unknown = sluice.switchover("app_rw", "nowhere", true, false, 500);
                assertThat(unknown.error()).contains("no server nowhere");

                // The admin API: the topology, the history, a dry run; a switchover needs the admin token.
                try (AdminServer server = AdminServer.start(AdminConfig.on("127.0.0.1", 0, TOKEN), sluice,
                        new TrafficCapture(), null)) {
                    AdminClient admin = new AdminClient("127.0.0.1", server.port());
                    AdminClient.Response groups = admin.get("/api/groups", TOKEN);
                    assertThat(groups.status()).isEqualTo(200);
                    assertThat(groups.body()).contains("\"group\":\"app_rw\"").contains("\"primary\":\"primary\"")
                            .contains("\"state\":\"primary\"").contains("\"primaryDiscovery\":\"READ_ONLY\"");
                    assertThat(admin.get("/api/groups/app_rw/events", TOKEN).body()).contains("switchover_refused");
                    assertThat(admin.get("/api/groups/nowhere", TOKEN).status()).isEqualTo(404);
                    assertThat(admin.post("/api/groups/app_rw/switchover?to=replica_0", null).status())
                            .isIn(401, 403);
                    AdminClient.Response dryRun = admin.post("/api/groups/app_rw/switchover?to=replica_0&dryRun",
                            TOKEN);
                    assertThat(dryRun.status()).as(dryRun.body()).isEqualTo(200);
                    assertThat(dryRun.body()).contains("\"dryRun\":true").contains("MASTER_PASSWORD = '***'")
                            .doesNotContain(REPL_PASSWORD);
                    assertThat(sluice.groups().get(0).roles().primary()).isEqualTo("primary");
                }
            }
        }
    }

    /**
     * Two instances in front of one group, the switchover run on one: the other follows by discovery within a
     * health-check interval, its writes after that land on the new primary, and the only errors it may see are the old
     * primary's own read-only refusals (1290) in the window between the fence and its next round.
     */
    @Test
    void anotherInstanceFollowsTheSwitchoverByDiscovery() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("top-fleet")) {
            prepare(servers);
            try (Sluice runs = Sluice.start(config(servers)); Sluice follows = Sluice.start(config(servers))) {
                awaitRoles(runs, r -> r.takesWrites() && r.primary().equals("primary"));
                awaitRoles(follows, r -> r.takesWrites() && r.primary().equals("primary"));
                Writer onRunning = new Writer(runs.port(), 0);
                Writer onOther = new Writer(follows.port(), 1);
                Thread a = new Thread(onRunning, "top-writer-runs");
                Thread b = new Thread(onOther, "top-writer-follows");
                a.start();
                b.start();
                onRunning.awaitAcknowledged(20);
                onOther.awaitAcknowledged(20);

                long fencedBefore = System.nanoTime();
                SwitchoverReport report = runs.switchover("app_rw", "replica_0", false, false, 5_000);
                assertThat(report.error()).as(report.toString()).isEmpty();
                awaitRoles(follows, r -> r.takesWrites() && r.primary().equals("replica_0"));
                long followedAt = System.nanoTime();
                int before = onOther.acknowledged.size();
                onOther.awaitAcknowledged(before + 20);
                onRunning.awaitAcknowledged(onRunning.acknowledged.size() + 20);
                onRunning.stop.set(true);
                onOther.stop.set(true);
                a.join(10_000);
                b.join(10_000);

                assertThat(onRunning.errors).as("errors through the instance that ran the switchover").isEmpty();
                assertThat(onOther.errors).allMatch(e -> e.contains(": 1290 "));
                Map<String, Integer> landed = rows(servers.replica(0));
                int newPrimaryId = Integer.parseInt(query(servers.replica(0), "SELECT @@server_id"));
                for (Writer writer : List.of(onRunning, onOther)) {
                    assertThat(writer.acknowledged).allMatch(landed::containsKey);
                }
                for (String key : onOther.acknowledged.subList(before, onOther.acknowledged.size())) {
                    assertThat(landed.get(key)).as(key).isEqualTo(newPrimaryId);
                }
                System.out.printf("fleet: the other instance followed %d ms after the switchover began; its writes"
                        + " refused meanwhile: %d; writes held %d ms%n",
                        TimeUnit.NANOSECONDS.toMillis(followedAt - fencedBefore), onOther.errors.size(),
                        report.writesHeldMillis());
            }
        }
    }

    // ---- fixture ------------------------------------------------------------------------------------------------

    private static void prepare(ReplicationGroup servers) {
        servers.primary().execute("CREATE DATABASE app",
                "CREATE TABLE app.t (k VARCHAR(40) PRIMARY KEY, server INT NOT NULL)",
                "CREATE USER '" + APP_USER + "'@'" + HOST + "' IDENTIFIED BY '" + APP_PASSWORD + "'",
                "GRANT SELECT, INSERT, UPDATE, DELETE ON app.* TO '" + APP_USER + "'@'" + HOST + "'",
                "GRANT SLAVE MONITOR ON *.* TO '" + APP_USER + "'@'" + HOST + "'",
                "CREATE USER '" + ADMIN_USER + "'@'" + HOST + "' IDENTIFIED BY '" + ADMIN_PASSWORD + "'",
                "GRANT RELOAD, READ_ONLY ADMIN, REPLICATION SLAVE ADMIN, SLAVE MONITOR ON *.* TO '"
                        + ADMIN_USER + "'@'" + HOST + "'",
                "CREATE USER '" + REPL_USER + "'@'" + HOST + "' IDENTIFIED BY '" + REPL_PASSWORD + "'",
                "GRANT REPLICATION SLAVE ON *.* TO '" + REPL_USER + "'@'" + HOST + "'");
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
                Duration.ofSeconds(10), new ServerAccount(ADMIN_USER, ADMIN_PASSWORD),
                new ServerAccount(REPL_USER, REPL_PASSWORD));
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

    private static void awaitRoles(Sluice sluice, java.util.function.Predicate<Roles> wanted)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!wanted.test(sluice.groups().get(0).roles())) {
            assertThat(System.nanoTime()).as("roles now: " + sluice.groups().get(0).roles()).isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    private static Map<String, Integer> rows(ExtraMariaDb server) throws SQLException {
        Map<String, Integer> rows = new HashMap<>();
        try (Connection c = server.rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT k, server FROM app.t")) {
            while (rs.next()) {
                rows.put(rs.getString(1), rs.getInt(2));
            }
        }
        return rows;
    }

    private static String position(ExtraMariaDb server) throws SQLException {
        return query(server, "SELECT @@GLOBAL.gtid_binlog_pos");
    }

    private static String query(ExtraMariaDb server, String sql) throws SQLException {
        try (Connection c = server.rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** A long-lived session inserting keyed rows, in autocommit and in short transactions, in turn. */
    private static final class Writer implements Runnable {
        final List<String> acknowledged = new CopyOnWriteArrayList<>();
        final List<String> errors = new CopyOnWriteArrayList<>();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong longest = new AtomicLong();
        final int id;
        private final int port;

        Writer(int port, int id) {
            this.port = port;
            this.id = id;
        }

        @Override
        public void run() {
            try (Connection c = connect(port); Statement s = c.createStatement()) {
                for (int n = 1; !stop.get(); n++) {
                    String key = id + "-" + n;
                    long start = System.nanoTime();
                    try {
                        if (n % 2 == 0) {
                            c.setAutoCommit(false);
                            s.executeUpdate("INSERT INTO t (k, server) VALUES ('" + key + "', @@server_id)");
                            s.executeQuery("SELECT COUNT(*) FROM t").close();
                            c.commit();
                            c.setAutoCommit(true);
                        } else {
                            s.executeUpdate("INSERT INTO t (k, server) VALUES ('" + key + "', @@server_id)");
                            // As the switchover benchmark's ledger: ROW_COUNT() read where the INSERT ran (also when
                            // the INSERT waited for the new primary), then a causal read of the row.
                            try (ResultSet rs = s.executeQuery("SELECT ROW_COUNT()")) {
                                rs.next();
                                if (rs.getInt(1) != 1) {
                                    errors.add(key + ": ROW_COUNT() " + rs.getInt(1) + " after its INSERT");
                                }
                            }
                            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t WHERE k = '" + key + "'")) {
                                rs.next();
                                if (rs.getInt(1) != 1) {
                                    errors.add(key + ": its own write not read back");
                                }
                            }
                        }
                        acknowledged.add(key);
                    } catch (SQLException e) {
                        errors.add(key + ": " + e.getErrorCode() + " " + e.getMessage());
                        try { // as an application does: its transaction is over, autocommit back on
                            c.rollback();
                            c.setAutoCommit(true);
                        } catch (SQLException again) {
                            errors.add(key + ": rollback: " + again.getMessage());
                        }
                    }
                    longest.accumulateAndGet(System.nanoTime() - start, Math::max);
                }
            } catch (SQLException e) {
                errors.add("connection: " + e.getMessage());
            }
        }

        void awaitAcknowledged(int wanted) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (acknowledged.size() < wanted) {
                assertThat(System.nanoTime()).as("writer " + id + ": acknowledged " + acknowledged.size()
                        + ", errors " + errors).isLessThan(deadline);
                Thread.sleep(10);
            }
        }
    }
}
