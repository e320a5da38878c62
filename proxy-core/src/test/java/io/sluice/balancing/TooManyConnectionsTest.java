package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A backend at its {@code max_connections}: MariaDB then sends ERR 1040 "Too many connections" in place of the
 * greeting, without SQLSTATE. That is the backend failing, as a refused connect is: the session fails over, the
 * backend leaves rotation at once, and a client with nowhere else to go sees the server's error as the server wrote
 * it.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class TooManyConnectionsTest {
    /** Checks so rare that only passive health can take a backend down within a test. */
    private static final HealthCheckConfig RARE_CHECKS = new HealthCheckConfig(600_000, 1000, 2, 3);

    @BeforeAll
    static void notDirect() {
        org.junit.jupiter.api.Assumptions.assumeFalse(ProxyUnderTest.isDirect(), "checks Sluice's failover");
    }

    @Test
    void aSessionFailsOverAndTheFullBackendLeavesRotationAtOnce() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        try (FaultyServerRelay full = new FaultyServerRelay(mariaDb.host(), mariaDb.port());
             Sluice sluice = Sluice.start(config(full, true))) {
            full.fill();

            try (Connection session = connect(sluice)) {
                assertThat(answer(session)).isEqualTo("in");
            }
            assertThat(full.turnedAway()).as("tried once, then failed over").isEqualTo(1);
            assertThat(BackendCluster.status(sluice, "full")).isEqualTo(BackendStatus.DOWN);
            assertThat(sluice.backends().get(0).state().lastCheck().detail()).contains("1040")
                    .contains("Too many connections");

            try (Connection next = connect(sluice)) {
                assertThat(answer(next)).isEqualTo("in");
            }
            assertThat(full.turnedAway()).as("a backend down gets no more sessions").isEqualTo(1);
        }
    }

    @Test
    void withNowhereElseToGoTheClientSeesTheServersError() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        try (FaultyServerRelay full = new FaultyServerRelay(mariaDb.host(), mariaDb.port());
             Sluice sluice = Sluice.start(config(full, false))) {
            full.fill();

            try (RawMySqlClient raw = RawMySqlClient.login("127.0.0.1", sluice.port(), ProxyUnderTest.USER,
                    ProxyUnderTest.PASSWORD, null)) {
                RawMySqlClient.Packet refused = raw.query("SELECT 'in'").end(); // the first command takes a connection
                assertThat(refused.isErr()).as("%s", refused).isTrue();
                assertThat(refused.errorCode()).isEqualTo(1040);
                assertThat(refused.sqlState()).isEqualTo("08004");
                assertThat(refused.errorMessage()).isEqualTo("Too many connections");
            }
            // The backend is down now: the next login hears why, in the server's words.
            assertThatThrownBy(() -> connect(sluice).close()).isInstanceOfSatisfying(SQLException.class, e -> {
                assertThat(e.getErrorCode()).as("%s", e).isEqualTo(2003);
                assertThat(e.getMessage()).contains("full is down").contains("1040 (08004): Too many connections");
            });
        }
    }

    /** The relay first, then (with {@code withSecond}) MariaDB directly; the first available takes the sessions. */
    private static ProxyConfig config(FaultyServerRelay full, boolean withSecond) {
        TestMariaDb mariaDb = TestMariaDb.get();
        ProxyConfig.Builder builder = ProxyConfig.builder()
                .server(new ServerConfig("127.0.0.1", 0, 1, ServerConfig.DEFAULT_CONN_BUFFER_SIZE, 0, null,
                        ServerConfig.DEFAULT_MAX_PACKET_SIZE, Transport.AUTO))
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .loadBalancer(Policy.FIRST_AVAILABLE)
                .healthCheck(RARE_CHECKS)
                .dataSource(new DataSourceConfig("full", full.jdbcUrl(), TestMariaDb.ROOT_USER,
                        TestMariaDb.ROOT_PASSWORD, 3000, 60_000, 600_000, 10, 0));
        if (withSecond) {
            builder.dataSource(new DataSourceConfig("second", JdbcDriver.MYSQL.url(mariaDb.host(), mariaDb.port(),
                    null, ""), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD, 3000, 60_000, 600_000, 10, 0));
        }
        return builder.build();
    }

    private static Connection connect(Sluice sluice) throws SQLException {
        return BackendCluster.connect(sluice);
    }

    private static String answer(Connection session) throws SQLException {
        try (Statement statement = session.createStatement(); ResultSet rs = statement.executeQuery("SELECT 'in'")) {
            rs.next();
            return rs.getString(1);
        }
    }
}
