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
import io.sluice.testing.FaultyServerRelay;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A backend that accepts connections and never answers (a SIGSTOPped server: its kernel still completes the TCP
 * handshake). A session's first connect there must not use up its whole {@code connectionTimeoutMilliseconds}, or it
 * fails although another backend is up: one attempt gets what a health check gives a login.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class HungBackendTest {
    /** Checks so rare that only the session's own attempt can take the backend down; a login gets 1 s. */
    private static final HealthCheckConfig RARE_CHECKS = new HealthCheckConfig(600_000, 1000, 2, 3);
    /** The session's whole budget for a connection: with one attempt allowed all of it, there is no failover. */
    private static final long CONNECTION_TIMEOUT = 5_000;

    @BeforeAll
    static void notDirect() {
        Assumptions.assumeFalse(ProxyUnderTest.isDirect(), "checks Sluice's failover");
    }

    @Test
    void aSessionFailsOverFromAHungBackendWithinItsConnectionTimeout() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        try (FaultyServerRelay hung = new FaultyServerRelay(mariaDb.host(), mariaDb.port());
             Sluice sluice = Sluice.start(config(hung, RARE_CHECKS))) {
            hung.hang();

            try (Connection session = BackendCluster.connect(sluice);
                 Statement statement = session.createStatement();
                 ResultSet rs = statement.executeQuery("SELECT 'in'")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("in");
            }
            assertThat(hung.hanging()).as("tried once, then failed over").isEqualTo(1);
            assertThat(BackendCluster.status(sluice, "hung")).isEqualTo(BackendStatus.DOWN);
            assertThat(sluice.backends().get(0).state().lastCheck().detail()).contains("timed out after 1000 ms");
        }
    }

    @Test
    void anIdlePooledConnectionToAServerThatHungIsPingedBeforeItIsLent() throws Exception {
        // Checks every 500 ms: a connection idle longer than that is pinged before it is lent.
        HealthCheckConfig checks = new HealthCheckConfig(500, 1000, 2, 3);
        TestMariaDb mariaDb = TestMariaDb.get();
        try (FaultyServerRelay hung = new FaultyServerRelay(mariaDb.host(), mariaDb.port());
             Sluice sluice = Sluice.start(config(hung, checks))) {
            try (Connection first = BackendCluster.connect(sluice)) {
                assertThat(answer(first)).isEqualTo("in"); // its connection to "hung" goes back to the pool
            }
            Thread.sleep(700); // idle longer than a check interval
            hung.freeze();

            // Lent unchecked, the idle connection would take the query and never answer (the socket timeout fails
            // the test); pinged, it is found dead, and the session fails over.
            String url = JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), null, "socketTimeout=15000");
            try (Connection next = JdbcDriver.MARIADB.connect(url, ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)) {
                assertThat(answer(next)).isEqualTo("in");
            }
        }
    }

    private static String answer(Connection session) throws java.sql.SQLException {
        try (Statement statement = session.createStatement(); ResultSet rs = statement.executeQuery("SELECT 'in'")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** The relay first, then MariaDB directly; the first available takes the sessions. */
    private static ProxyConfig config(FaultyServerRelay hung, HealthCheckConfig checks) {
        TestMariaDb mariaDb = TestMariaDb.get();
        return ProxyConfig.builder()
                .server(new ServerConfig("127.0.0.1", 0, 1, ServerConfig.DEFAULT_CONN_BUFFER_SIZE, 0, null,
                        ServerConfig.DEFAULT_MAX_PACKET_SIZE, Transport.AUTO))
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .loadBalancer(Policy.FIRST_AVAILABLE)
                .healthCheck(checks)
                .dataSource(new DataSourceConfig("hung", hung.jdbcUrl(), TestMariaDb.ROOT_USER,
                        TestMariaDb.ROOT_PASSWORD, CONNECTION_TIMEOUT, 60_000, 600_000, 10, 0))
                .dataSource(new DataSourceConfig("second", JdbcDriver.MYSQL.url(mariaDb.host(), mariaDb.port(),
                        null, ""), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD, CONNECTION_TIMEOUT, 60_000,
                        600_000, 10, 0))
                .build();
    }
}
