package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.ReadWriteCounts;
import io.sluice.config.CausalReads;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ReadLoadBalancer;
import io.sluice.config.ReadWriteSplittingConfig;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.ReplicationGroup;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code causalReads: GLOBAL} (issue #28, decision 102): a read by any session waits on its replica for the
 * primary's position at the time of the read, so one session reads another's write at once; a replica that does not
 * get there within the timeout leaves the read to the primary. The replicas are held back by a table lock on each
 * ({@code LOCK TABLES t READ} by a session of the test's own): their SQL threads keep running (the replica watch
 * keeps them usable) but cannot apply the write until the lock goes. Where a read ran is read on the server
 * ({@code @@port}).
 */
@Tag("server")
class CausalReadsGlobalTest {
    private static final Duration TIMEOUT = Duration.ofMillis(1500);
    private static ReplicationGroup servers;
    private static Sluice sluice;

    @BeforeAll
    static void start() {
        servers = ReplicationGroup.start("global");
        servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
                "INSERT INTO app.t VALUES (0, 0)");
        servers.awaitCaughtUp();
        ProxyConfig config = servers.sluiceConfig(3000)
                .pooling(PoolingConfig.defaults())
                .readWriteSplitting(new ReadWriteSplittingConfig("app_rw", "primary", List.of("replica_0", "replica_1"),
                        ReadWriteSplittingConfig.DEFAULT_TRANSACTIONAL_READ_QUERY_STRATEGY, ReadLoadBalancer.DEFAULT,
                        ReadWriteSplittingConfig.DEFAULT_MAX_REPLICATION_LAG, CausalReads.GLOBAL, TIMEOUT))
                .build();
        sluice = Sluice.start(config);
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


    private static Connection connect() throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), "app_rw", ""),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    private static String role(int port) {
        if (port == servers.primary().port()) {
            return "primary";
        }
        return port == servers.replica(0).port() ? "replica_0" : port == servers.replica(1).port() ? "replica_1"
                : "port " + port;
    }

    /** The row {@code id}'s value and where the read ran, or {@code null} value when the row was not there. */
    private static String[] read(Connection c, int id) throws SQLException {
        try (Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT (SELECT v FROM t WHERE id = " + id + "), @@port")) {
            rs.next();
            return new String[] {rs.getString(1), role(rs.getInt(2))};
        }
    }

    /** Waits until the health checks and the replica watch let reads reach the replicas (just after start). */
    private static void awaitReadsOnReplicas(Connection reader) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!read(reader, 0)[1].startsWith("replica_")) {
            assertThat(System.nanoTime()).as("reads never reached a replica").isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    /** Holds every replica's applier back: a session of the test's own on each keeps {@code t} read-locked. */
    private static List<Connection> lockReplicas() throws SQLException {
        List<Connection> locks = new ArrayList<>();
        for (ExtraMariaDb replica : servers.replicas()) {
            Connection c = replica.rootConnection();
            try (Statement s = c.createStatement()) {
                s.execute("LOCK TABLES app.t READ");
            }
            locks.add(c);
        }
        return locks;
    }

    private static void unlock(List<Connection> locks) throws SQLException {
        for (Connection c : locks) {
            try (c; Statement s = c.createStatement()) {
                s.execute("UNLOCK TABLES");
            }
        }
    }

    private static long count(String label) {
        ReadWriteCounts counts = sluice.metricSources().readWrite().get(0);
        return counts.routes(counts.routeReasons().indexOf(label));
    }

    private static long waits(String outcome) {
        ReadWriteCounts counts = sluice.metricSources().readWrite().get(0);
        return counts.causalWaits(counts.causalOutcomes().indexOf(outcome));
    }

    @Test
    void anotherSessionsWriteIsReadAtOnceFromAReplicaThatWaitsForIt() throws Exception {
        try (Connection writer = connect(); Connection reader = connect(); Statement w = writer.createStatement()) {
            awaitReadsOnReplicas(reader); // nothing pending: the wait returns at once
            long reached = waits("reached");
            long global = count("replica:causal_global");
            List<Connection> locks = lockReplicas();
            CompletableFuture<String[]> seen;
            try {
                w.executeUpdate("INSERT INTO t VALUES (1, 11)");
                seen = CompletableFuture.supplyAsync(() -> {
                    try {
                        return read(reader, 1);
                    } catch (SQLException e) {
                        throw new IllegalStateException(e);
                    }
                });
                Thread.sleep(500);
                assertThat(seen).as("the read waits for the replica to apply the other session's write")
                        .isNotDone();
            } finally {
                unlock(locks);
            }
            String[] row = seen.get(10, TimeUnit.SECONDS);
            assertThat(row[0]).isEqualTo("11");
            assertThat(row[1]).startsWith("replica_");
            assertThat(waits("reached")).isGreaterThan(reached);
            assertThat(count("replica:causal_global")).isGreaterThan(global);
        }
    }

    @Test
    void aReplicaThatDoesNotCatchUpInTimeLeavesTheReadToThePrimary() throws Exception {
        try (Connection writer = connect(); Connection reader = connect(); Statement w = writer.createStatement()) {
            awaitReadsOnReplicas(reader);
            long timedOut = waits("timed_out");
            long toPrimary = count("primary:causal_timeout");
            List<Connection> locks = lockReplicas();
            try {
                w.executeUpdate("INSERT INTO t VALUES (2, 22)");
                long started = System.nanoTime();
                String[] row = read(reader, 2);
                assertThat(row[1]).isEqualTo("primary");
                assertThat(row[0]).isEqualTo("22");
                assertThat(System.nanoTime() - started).as("it waited for the timeout first")
                        .isGreaterThanOrEqualTo(TIMEOUT.toNanos() - TimeUnit.MILLISECONDS.toNanos(50));
            } finally {
                unlock(locks);
            }
            assertThat(waits("timed_out")).isEqualTo(timedOut + 1);
            assertThat(count("primary:causal_timeout")).isEqualTo(toPrimary + 1);
        }
    }
}
