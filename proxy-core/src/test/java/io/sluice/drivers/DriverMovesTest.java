package io.sluice.drivers;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.ClientCounts;
import io.sluice.balancer.Policy;
import io.sluice.balancing.BackendCluster;
import io.sluice.config.PoolingConfig;
import io.sluice.drivers.DriverClient.Session;
import io.sluice.testing.ProxyUnderTest;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Live session moves with every client library of the driver matrix (issue #31: "a mix of real clients holding
 * session state"), in both pooling modes, between three real MariaDB servers: a session sets its character set and
 * collation, sql_mode, time zone and a user variable and prepares a statement (server-side where the library does),
 * then its server is drained. The session leaves it while the client does nothing but its own statements, and on its
 * new server its state is what it set and its prepared statement runs; the client never sees an error.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("server")
class DriverMovesTest {
    private static final String DATABASE = "move_test";
    private static BackendCluster cluster;

    @BeforeAll
    static void startServers() {
        cluster = BackendCluster.shared();
        for (String name : BackendCluster.NAMES) {
            cluster.server(name).execute("CREATE DATABASE IF NOT EXISTS " + DATABASE,
                    "CREATE TABLE IF NOT EXISTS " + DATABASE + ".driver_rows (n INT PRIMARY KEY)",
                    "INSERT IGNORE INTO " + DATABASE + ".driver_rows VALUES (1), (2), (3)");
        }
    }

    static Stream<Arguments> driversAndModes() {
        return Stream.of(ClientDriver.values()).flatMap(driver -> Stream.of(Arguments.of(driver, "SESSION"),
                Arguments.of(driver, "TRANSACTION")));
    }

    @ParameterizedTest(name = "{0} in {1} pooling")
    @MethodSource("driversAndModes")
    void aDrainedServersSessionMovesWithItsStateAndPreparedStatement(ClientDriver driver, String mode)
            throws Exception {
        PoolingConfig pooling = mode.equals("SESSION") ? PoolingConfig.defaults() : PoolingConfig.transaction();
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN, BackendCluster.FAST_CHECKS, name -> 1, pooling);
             DriverClient client = driver.start(new Endpoint("127.0.0.1", sluice.port(), ProxyUnderTest.USER,
                     ProxyUnderTest.PASSWORD, DATABASE), 1, true)) {
            Session session = client.open();
            session.query("SET NAMES utf8mb4 COLLATE utf8mb4_bin");
            session.query("SET SESSION sql_mode = 'ANSI_QUOTES'");
            session.query("SET SESSION time_zone = '+03:00'");
            session.query("SET @mover = 'kept across servers'");
            boolean prepares = driver.prepares() != ClientDriver.Prepares.NONE;
            if (prepares) {
                session.prepare("shout", "SELECT CONCAT(?, '!'), @@port");
                assertThat(session.execute("shout", "before").get(0).get(0)).isEqualTo("before!");
            }
            String before = backendOf(session);
            assertThat(sluice.drain(before)).isTrue();
            try {
                // The client goes on with statements of its own; the session moves at an idle moment between them
                // (one that reads a table: in session pooling a session with warnings left waits for such a one).
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (sluice.sessions().stream().anyMatch(s -> before.equals(s.backend()))) {
                    assertThat(System.nanoTime()).as("%s: sessions still on %s: %s", driver, before,
                            sluice.sessions()).isLessThan(deadline);
                    assertThat(session.query("SELECT COUNT(*) FROM driver_rows").get(0).get(0)).isEqualTo("3");
                    Thread.sleep(20);
                }
                String after = backendOf(session);
                assertThat(after).as("%s: the session's server after the drain", driver).isNotEqualTo(before);
                assertThat(session.query("SELECT @@collation_connection, @@character_set_client, @@SESSION.sql_mode,"
                        + " @@SESSION.time_zone, @mover")).containsExactly(List.of("utf8mb4_bin", "utf8mb4",
                        "ANSI_QUOTES", "+03:00", "kept across servers"));
                if (prepares) {
                    for (int i = 0; i < 20; i++) {
                        List<String> row = session.execute("shout", "after " + i).get(0);
                        assertThat(row.get(0)).isEqualTo("after " + i + "!");
                        assertThat(cluster.nameOfPort(Integer.parseInt(row.get(1)))).isEqualTo(after);
                    }
                }
                ClientCounts counts = sluice.metricSources().clients();
                assertThat(counts.moves(counts.moveReasons().indexOf("drain"))).isGreaterThanOrEqualTo(1);
                session.close();
            } finally {
                sluice.undrain(before);
            }
        }
    }

    private static String backendOf(Session session) {
        return cluster.nameOfPort(Integer.parseInt(session.query("SELECT @@port").get(0).get(0)));
    }
}
