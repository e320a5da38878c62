package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.config.CausalReads;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ReadLoadBalancer;
import io.sluice.config.ReadWriteSplittingConfig;
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
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A read-after-write checker under load (issue #28): many sessions each write a row and read it back at once. With
 * causal reads on, no read is stale, even while a replica is slowed; with them off and a replica slowed, the checker
 * counts stale reads, which shows that it can fail.
 */
@Tag("server")
class ReadAfterWriteCheckerTest {
    private static final int SESSIONS = 8;
    private static final int ROUNDS = 40;
    private static ReplicationGroup servers;

    @BeforeAll
    static void start() {
        servers = ReplicationGroup.start("raw");
        servers.primary().execute("CREATE DATABASE app",
                "CREATE TABLE app.t (session INT, n INT, PRIMARY KEY (session, n))");
        servers.awaitCaughtUp();
    }

    @AfterAll
    static void stop() {
        if (servers != null) {
            servers.close();
        }
    }

    private static Sluice start(CausalReads causalReads) {
        return Sluice.start(ProxyConfig.builder()
                .port(0)
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .dataSource(dataSource("primary", servers.primary()))
                .dataSource(dataSource("replica_0", servers.replica(0)))
                .dataSource(dataSource("replica_1", servers.replica(1)))
                .readWriteSplitting(new ReadWriteSplittingConfig("app_rw", "primary", List.of("replica_0", "replica_1"),
                        ReadWriteSplittingConfig.DEFAULT_TRANSACTIONAL_READ_QUERY_STRATEGY, ReadLoadBalancer.DEFAULT,
                        Duration.ofMinutes(10), causalReads, Duration.ofMillis(300)))
                .build());
    }

    private static DataSourceConfig dataSource(String name, ExtraMariaDb server) {
        return new DataSourceConfig(name, server.jdbcUrl("app"), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD,
                3000, 60_000, 600_000, 16, 0, 1, false);
    }

    @Test
    void withCausalReadsNoReadIsStaleWhileAReplicaIsSlowed() throws Exception {
        try (Sluice sluice = start(CausalReads.LOCAL)) {
            assertThat(check(sluice, 0)).isZero();
        }
    }

    @Test
    void withoutThemTheCheckerCountsStaleReads() throws Exception {
        try (Sluice sluice = start(CausalReads.NONE)) {
            assertThat(check(sluice, 1000)).isPositive();
        }
    }

    /**
     * Runs the checker with replica 0 not applying (so it lags) for the whole run; returns the stale reads.
     *
     * @param offset keeps each run's rows apart
     */
    private static int check(Sluice sluice, int offset) throws Exception {
        AtomicInteger stale = new AtomicInteger();
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        servers.stopApplying(0);
        try {
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < SESSIONS; i++) {
                int session = offset + i;
                Thread t = new Thread(() -> {
                    try (Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1",
                            sluice.port(), "app_rw", ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
                         Statement s = c.createStatement()) {
                        for (int n = 0; n < ROUNDS; n++) {
                            s.executeUpdate("INSERT INTO t VALUES (" + session + ", " + n + ")");
                            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t WHERE session = " + session
                                    + " AND n = " + n)) {
                                rs.next();
                                if (rs.getInt(1) != 1) {
                                    stale.incrementAndGet();
                                }
                            }
                        }
                    } catch (SQLException | RuntimeException e) {
                        errors.add(e);
                    }
                }, "checker-" + i);
                t.start();
                threads.add(t);
            }
            for (Thread t : threads) {
                t.join(120_000);
            }
        } finally {
            servers.startApplying(0);
        }
        assertThat(errors).isEmpty();
        return stale.get();
    }
}
