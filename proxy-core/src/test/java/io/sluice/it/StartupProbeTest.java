package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.config.ProxyConfig;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.TestMariaDb;
import java.net.ServerSocket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A data source that cannot be reached at start is a warning, not a refusal, as long as another answers; sessions
 * then go to one that answered, and {@code databaseName} maps to that data source's database.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
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

    /**
     * Every backend down at start (a database outage, an ordered bring-up): Sluice starts anyway, logins get a clear
     * error, and once a backend answers, sessions are served and greeted with that server's version.
     */
    @Test
    void startsWithEveryBackendDownAndServesOnceOneComesUp() throws Exception {
        Assumptions.assumeFalse(io.sluice.testing.ProxyUnderTest.isDirect(), "starts Sluice itself");
        TestMariaDb mariaDb = TestMariaDb.get();
        int port;
        try (ServerSocket socket = new ServerSocket(0)) {
            port = socket.getLocalPort(); // nothing listens there until the test says so
        }
        ProxyConfig config = ProxyConfig.builder()
                .dataSource("late", "jdbc:mysql://127.0.0.1:" + port + "/", TestMariaDb.ROOT_USER,
                        TestMariaDb.ROOT_PASSWORD)
                .user("app", "secret")
                .address("127.0.0.1")
                .port(0)
                .healthCheck(new io.sluice.balancer.HealthCheckConfig(200, 1000, 1, 3))
                .build();
        try (Sluice sluice = Sluice.start(config)) {
            try (RawMySqlClient early = RawMySqlClient.connect("127.0.0.1", sluice.port())) {
                RawMySqlClient.Packet refused = early.authenticate("app", "secret", null);
                assertThat(refused.errorCode()).as("a login while no backend is up: %s", refused).isEqualTo(2003);
                assertThat(refused.errorMessage()).contains("No backend is available");
            }
            try (TcpForwarder backendComesUp = new TcpForwarder(port, mariaDb.port())) {
                long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(15);
                RawMySqlClient.Packet reply = null;
                String greetedAs = null;
                while (System.nanoTime() < deadline) {
                    try (RawMySqlClient client = RawMySqlClient.connect("127.0.0.1", sluice.port())) {
                        greetedAs = client.handshake().serverVersion();
                        reply = client.authenticate("app", "secret", null);
                        if (reply.isOk()) {
                            assertThat(client.query("SELECT 1").rows()).containsExactly(java.util.List.of("1"));
                            break;
                        }
                    }
                    Thread.sleep(100);
                }
                assertThat(reply).as("a login once the backend is up").isNotNull();
                assertThat(reply.isOk()).as("a login once the backend is up: %s", reply).isTrue();
                assertThat(greetedAs).as("the version clients are greeted with")
                        .isEqualTo(mariaDb.greeting().serverVersion());
            }
        }
    }

    /** Listens on {@code port} from now on and relays each connection to 127.0.0.1:{@code target}. */
    private static final class TcpForwarder implements AutoCloseable {
        private final ServerSocket server;
        private final Thread acceptor;

        TcpForwarder(int port, int target) throws java.io.IOException {
            server = new ServerSocket(port, 50, java.net.InetAddress.getLoopbackAddress());
            acceptor = new Thread(() -> {
                while (!server.isClosed()) {
                    try {
                        java.net.Socket client = server.accept();
                        java.net.Socket backend = new java.net.Socket("127.0.0.1", target);
                        pipe(client, backend);
                        pipe(backend, client);
                    } catch (java.io.IOException e) {
                        return; // closed
                    }
                }
            }, "test-forwarder");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        private static void pipe(java.net.Socket from, java.net.Socket to) {
            Thread copy = new Thread(() -> {
                try (from; to) {
                    from.getInputStream().transferTo(to.getOutputStream());
                } catch (java.io.IOException e) {
                    // one side ended
                }
            }, "test-forwarder-pipe");
            copy.setDaemon(true);
            copy.start();
        }

        @Override
        public void close() throws java.io.IOException {
            server.close();
        }
    }
}
