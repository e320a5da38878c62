package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.config.ProxyConfig;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.TestMariaDb;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A data source that cannot be reached at start is a warning, not a refusal, as long as another answers; sessions
 * then go to one that answered, and {@code databaseName} maps to that data source's database.
 */
@ExtendWith(LeakDetection.class)
class StartupProbeTest {

    @Test
    void anUnreachableFirstDataSourceIsPassedOver() throws Exception {
        Assumptions.assumeFalse(io.sluice.testing.ProxyUnderTest.isDirect(), "starts Sluice itself");
        TestMariaDb mariaDb = TestMariaDb.get();
        String db = mariaDb.createDatabase("sluice_it_probe");
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort(); // free once closed: nothing listens there
        }
        ProxyConfig config = ProxyConfig.builder()
                .databaseName("logical_db")
                .dataSource("down", "jdbc:mysql://127.0.0.1:" + closedPort + "/nowhere", "root", "")
                .dataSource("up", mariaDb.jdbcUrl(db), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD)
                .user("app", "secret")
                .address("127.0.0.1")
                .port(0)
                .build();
        try (Sluice sluice = Sluice.start(config)) {
            String url = "jdbc:mariadb://127.0.0.1:" + sluice.port() + "/logical_db";
            try (Connection c = DriverManager.getConnection(url, "app", "secret");
                 ResultSet rs = c.createStatement().executeQuery("SELECT DATABASE()")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo(db);
            }
            assertThat(sluice.backendConnections("down")).isZero();
        } finally {
            mariaDb.dropDatabase(db);
        }
    }
}
