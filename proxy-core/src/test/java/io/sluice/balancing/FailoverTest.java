package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.api.BackendSnapshot;
import io.sluice.Sluice;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.Transport;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Health checks, passive health, failover and drain, with real MariaDB servers stopped and started under load. */
@Tag("server")
class FailoverTest {
    private static BackendCluster cluster;

    @BeforeAll
    static void startServers() {
        cluster = BackendCluster.shared();
    }

    @AfterEach
    void restartStoppedServers() {
        cluster.restoreAll();
    }

    /** One client session of the load: where it went, when it started, and how it ended. */
    private record SessionRecord(long startedNanos, String backend, String error) {
    }

    /** Client threads that open a session, run a few queries and close it, over and over, until stopped. */
    private static final class Load implements AutoCloseable {
        private final List<SessionRecord> records = Collections.synchronizedList(new ArrayList<>());
        private final AtomicBoolean running = new AtomicBoolean(true);
        private final ExecutorService threads;
        private final List<Future<?>> workers = new ArrayList<>();

        Load(Sluice sluice, int clients) {
            threads = Executors.newFixedThreadPool(clients);
            for (int i = 0; i < clients; i++) {
                workers.add(threads.submit(() -> {
                    while (running.get()) {
                        records.add(oneSession(sluice));
                    }
                    return null;
                }));
            }
        }

        private static SessionRecord oneSession(Sluice sluice) {
            long started = System.nanoTime();
            String backend = null;
            try (Connection session = BackendCluster.connect(sluice)) {
                backend = cluster.backendOf(session);
                try (Statement s = session.createStatement()) {
                    for (int q = 0; q < 20; q++) {
                        try (ResultSet rs = s.executeQuery("SELECT " + q + " + 1")) {
                            rs.next();
                            assertThat(rs.getInt(1)).isEqualTo(q + 1);
                        }
                    }
                }
                return new SessionRecord(started, backend, null);
            } catch (SQLException | AssertionError e) {
                return new SessionRecord(started, backend != null ? backend : namedBackend(e), messages(e));
            }
        }

        /**
         * The backend an error names, for a session that failed before it could ask: a driver that runs its
         * initialisation queries on a connection whose server just died wraps Sluice's "Lost connection to backend
         * 'c'" in an error of its own.
         */
        private static String namedBackend(Throwable e) {
            Matcher m = Pattern.compile("backend '([a-z]+)'").matcher(messages(e));
            return m.find() ? m.group(1) : null;
        }

        private static String messages(Throwable e) {
            StringBuilder all = new StringBuilder();
            for (Throwable t = e; t != null; t = t.getCause()) {
                all.append(t.getMessage()).append(" / ");
            }
            return all.toString();
        }

        List<SessionRecord> records() {
            synchronized (records) {
                return new ArrayList<>(records);
            }
        }

        @Override
        public void close() throws Exception {
            running.set(false);
            for (Future<?> worker : workers) {
                worker.get(60, TimeUnit.SECONDS);
            }
            threads.shutdown();
        }
    }

    @Test
    void aServerKilledMidLoadLeavesRotationAndComesBackAfterRiseChecks() throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.LEAST_CONNECTIONS)) {
            long killedAt;
            long downAt;
            long restartingAt;
            long restartedAt;
            long upAt;
            List<SessionRecord> records;
            try (Load load = new Load(sluice, 6)) {
                Thread.sleep(1500);
                killedAt = System.nanoTime();
                cluster.server("c").kill();
                downAt = BackendCluster.awaitStatus(sluice, "c", BackendStatus.DOWN, 10);
                Thread.sleep(1500);
                restartingAt = System.nanoTime();
                cluster.server("c").startAgain();
                restartedAt = System.nanoTime(); // listening again
                upAt = BackendCluster.awaitStatus(sluice, "c", BackendStatus.UP, 10);
                Thread.sleep(1500);
                records = load.records();
            }
            // Detected within fall x interval of the kill (a failed connect or a lost connection is faster still),
            // back within rise x interval of the restart, plus scheduling slack.
            assertThat(TimeUnit.NANOSECONDS.toMillis(downAt - killedAt)).isLessThan(3 * 200 + 1000);
            assertThat(TimeUnit.NANOSECONDS.toMillis(upAt - restartedAt)).isLessThan(2 * 200 + 1500);

            assertThat(records).hasSizeGreaterThan(60);
            // Sessions on the other servers saw no error at all; every session could connect (failover).
            assertThat(records).filteredOn(r -> r.error() != null)
                    .allSatisfy(r -> assertThat(r.backend()).as(r.error()).isEqualTo("c"));
            // No session started after the detection went to c until it was back.
            assertThat(records).filteredOn(r -> r.startedNanos() > downAt && r.startedNanos() < restartingAt)
                    .isNotEmpty()
                    .allSatisfy(r -> assertThat(r.backend()).isNotEqualTo("c"));
            // Once up again, c takes sessions again, and they work.
            assertThat(records).filteredOn(r -> r.startedNanos() > upAt && "c".equals(r.backend()))
                    .isNotEmpty()
                    .allSatisfy(r -> assertThat(r.error()).isNull());
            BackendSnapshot c = sluice.backends().get(2);
            assertThat(c.state().lastCheck().ok()).isTrue();
            assertThat(c.state().consecutiveSuccesses()).isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void aSessionWhoseFirstConnectFailsIsRetriedOnAnotherServer() throws Exception {
        // No health checks: the dead server stays "up", so only the per-session failover keeps clients working.
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN, HealthCheckConfig.disabled(), name -> 1)) {
            cluster.server("b").stop();
            Map<String, Integer> perBackend = new HashMap<>();
            for (int i = 0; i < 12; i++) {
                try (Connection session = BackendCluster.connect(sluice)) {
                    perBackend.merge(cluster.backendOf(session), 1, Integer::sum);
                }
            }
            assertThat(perBackend).containsOnlyKeys("a", "c");
            assertThat(perBackend.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(12);
            assertThat(BackendCluster.status(sluice, "b")).isEqualTo(BackendStatus.UP);
        }
    }

    @Test
    void aFailedConnectTakesTheServerOutOfRotationAtOnce() throws Exception {
        // Checks so rare that only passive health can explain the backend going down within the test.
        HealthCheckConfig rareChecks = new HealthCheckConfig(600_000, 1000, 2, 3);
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN, rareChecks, name -> 1)) {
            cluster.server("a").stop();
            for (int i = 0; i < 6; i++) {
                try (Connection session = BackendCluster.connect(sluice)) {
                    assertThat(cluster.backendOf(session)).isNotEqualTo("a");
                }
            }
            BackendSnapshot a = sluice.backends().get(0);
            assertThat(a.state().status()).isEqualTo(BackendStatus.DOWN);
            assertThat(a.state().lastCheck().detail()).startsWith("session: cannot connect to a");
            // One failed connect took it out: later sessions are never even tried on it.
            assertThat(a.state().totalSessions()).isEqualTo(1);
        }
    }

    @Test
    void aServerDownAtStartNeverGetsASessionUntilItRises() throws Exception {
        cluster.server("b").stop();
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN)) {
            assertThat(BackendCluster.status(sluice, "b")).isEqualTo(BackendStatus.DOWN);
            for (int i = 0; i < 6; i++) {
                try (Connection session = BackendCluster.connect(sluice)) {
                    assertThat(cluster.backendOf(session)).isNotEqualTo("b");
                }
            }
            assertThat(sluice.backends().get(1).state().totalSessions()).isZero();
            cluster.server("b").startAgain();
            BackendCluster.awaitStatus(sluice, "b", BackendStatus.UP, 10);
            Map<String, Integer> perBackend = new HashMap<>();
            for (int i = 0; i < 6; i++) {
                try (Connection session = BackendCluster.connect(sluice)) {
                    perBackend.merge(cluster.backendOf(session), 1, Integer::sum);
                }
            }
            assertThat(perBackend).isEqualTo(Map.of("a", 2, "b", 2, "c", 2));
        }
    }

    @Test
    void aServerThatDiesUnderAnIdleSessionGivesItError2013NamingTheBackend() throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.FIRST_AVAILABLE);
             Connection session = BackendCluster.connect(sluice)) {
            assertThat(cluster.backendOf(session)).isEqualTo("a");
            cluster.server("a").kill();
            BackendCluster.awaitStatus(sluice, "a", BackendStatus.DOWN, 10);
            assertThatThrownBy(() -> cluster.backendOf(session))
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(2013);
                        assertThat(e.getMessage()).contains("Lost connection to backend 'a' (127.0.0.1:"
                                + cluster.server("a").port() + ")");
                    });
            // A new session goes to the next server.
            try (Connection next = BackendCluster.connect(sluice)) {
                assertThat(cluster.backendOf(next)).isEqualTo("b");
            }
        }
    }

    @Test
    void aDrainedServerFinishesItsTransactionsButTakesNoNewSessions() throws Exception {
        for (String name : BackendCluster.NAMES) {
            cluster.server(name).execute("CREATE DATABASE IF NOT EXISTS drain_test",
                    "CREATE TABLE IF NOT EXISTS drain_test.t (id INT PRIMARY KEY)", "DELETE FROM drain_test.t");
        }
        try (Sluice sluice = cluster.startProxy(Policy.LEAST_CONNECTIONS)) {
            List<Connection> sessions = new ArrayList<>();
            Connection onB = null;
            for (int i = 0; i < 3; i++) {
                Connection session = BackendCluster.connect(sluice);
                sessions.add(session);
                if (cluster.backendOf(session).equals("b")) {
                    onB = session;
                }
            }
            assertThat(onB).isNotNull();
            onB.setAutoCommit(false);
            try (Statement s = onB.createStatement()) {
                s.executeUpdate("INSERT INTO drain_test.t VALUES (1)");
            }

            assertThat(sluice.drain("b")).isTrue();
            assertThat(BackendCluster.status(sluice, "b")).isEqualTo(BackendStatus.DRAINING);
            for (int i = 0; i < 6; i++) {
                Connection session = BackendCluster.connect(sluice);
                sessions.add(session);
                assertThat(cluster.backendOf(session)).isNotEqualTo("b");
            }
            // The open transaction on b goes on and commits.
            try (Statement s = onB.createStatement()) {
                s.executeUpdate("INSERT INTO drain_test.t VALUES (2)");
            }
            onB.commit();
            onB.close();
            try (Connection direct = cluster.server("b").rootConnection(); Statement s = direct.createStatement();
                 ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM drain_test.t")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(2);
            }
            // Its connection is not pooled again: a drained server ends with no connection from the proxy.
            for (int i = 0; i < 200 && sluice.backendConnections("b") > 0; i++) {
                Thread.sleep(10);
            }
            assertThat(sluice.backendConnections("b")).isZero();

            assertThat(sluice.undrain("b")).isTrue();
            Connection again = BackendCluster.connect(sluice);
            sessions.add(again);
            assertThat(cluster.backendOf(again)).isEqualTo("b"); // the least loaded once back
            for (Connection session : sessions) {
                session.close();
            }
            assertThat(sluice.drain("nope")).isFalse();
        }
    }

    @Test
    void noBackendAvailableIsAClearLoginError() throws Exception {
        String url = cluster.server("a").jdbcUrl(null);
        ProxyConfig config = ProxyConfig.builder()
                .dataSource(new DataSourceConfig("only", url, TestMariaDb.ROOT_USER, "", 3000, 60_000, 600_000, 10, 0,
                        1, true))
                .server(new ServerConfig("127.0.0.1", 0, 1, ServerConfig.DEFAULT_CONN_BUFFER_SIZE, 0, null,
                        ServerConfig.DEFAULT_MAX_PACKET_SIZE, Transport.AUTO))
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .healthCheck(BackendCluster.FAST_CHECKS)
                .build();
        try (Sluice sluice = Sluice.start(config)) {
            assertThatThrownBy(() -> BackendCluster.connect(sluice).close())
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(2003);
                        assertThat(e.getMessage()).contains("No backend is available: only is draining");
                    });
        }
    }
}
