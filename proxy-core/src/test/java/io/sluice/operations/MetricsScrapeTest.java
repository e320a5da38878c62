package io.sluice.operations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.api.BuildInfo;
import io.sluice.config.AdminConfig;
import io.sluice.testing.AdminClient;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.PrometheusText;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.SluiceExtension;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Scrapes {@code /metrics} over HTTP around and during real traffic from real JDBC drivers, and checks that the
 * counters and histograms move exactly as the traffic does. Each test reads deltas between two scrapes taken with
 * no other client on this proxy, so its numbers are its own.
 */
@Tag("server")
class MetricsScrapeTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.admin(AdminConfig.on("127.0.0.1", 0, "t")))
            .sluiceOnly("Sluice's own metrics");

    private static AdminClient admin;
    private static String url;

    @BeforeAll
    static void adminClient() {
        admin = new AdminClient("127.0.0.1", proxy.adminPort());
        url = JdbcDriver.MARIADB.url("127.0.0.1", proxy.port(), null, "");
    }

    private static Connection connect(JdbcDriver driver, String params) throws SQLException {
        return driver.connect(driver.url("127.0.0.1", proxy.port(), null, params), ProxyUnderTest.USER,
                ProxyUnderTest.PASSWORD);
    }

    private static double delta(PrometheusText before, PrometheusText after, String name, String... labels) {
        return after.value(name, labels) - before.value(name, labels);
    }

    @Test
    void buildInfoCarriesTheVersion() {
        PrometheusText metrics = admin.scrape();

        assertThat(metrics.value("sluice_build_info", "version", BuildInfo.version(), "java_version",
                BuildInfo.javaVersion())).isEqualTo(1);
        assertThat(BuildInfo.version()).isNotEqualTo(BuildInfo.UNKNOWN);
    }

    @Test
    void fiftyQueriesMoveTheQueryCounterHistogramAndBytesByExactlyFifty() throws Exception {
        try (Connection connection = connect(JdbcDriver.MARIADB, "");
                Statement statement = connection.createStatement()) {
            statement.executeQuery("SELECT 0").close(); // the session has its backend connection from here on
            PrometheusText before = admin.scrape();
            long expectedBytesIn = 0;
            for (int i = 1; i <= 50; i++) {
                String sql = "SELECT " + i;
                try (ResultSet rs = statement.executeQuery(sql)) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1)).isEqualTo(i);
                }
                expectedBytesIn += 4 + 1 + sql.getBytes(StandardCharsets.UTF_8).length; // header, COM_QUERY, text
            }
            PrometheusText after = admin.scrape();

            assertThat(delta(before, after, "sluice_commands_total", "command", "COM_QUERY")).isEqualTo(50);
            assertThat(delta(before, after, "sluice_command_duration_seconds_count", "command", "COM_QUERY"))
                    .isEqualTo(50);
            assertThat(delta(before, after, "sluice_command_duration_seconds_bucket", "command", "COM_QUERY",
                    "le", "+Inf")).isEqualTo(50);
            assertThat(delta(before, after, "sluice_command_duration_seconds_sum", "command", "COM_QUERY"))
                    .isGreaterThan(0).isLessThan(50 * 5.0);
            assertThat(delta(before, after, "sluice_command_errors_total", "command", "COM_QUERY")).isZero();
            assertThat(delta(before, after, "sluice_client_received_bytes_total")).isEqualTo(expectedBytesIn);
            assertThat(delta(before, after, "sluice_client_sent_bytes_total")).isGreaterThan(50 * 20);
            // Buckets are cumulative and end at the count.
            double previous = 0;
            for (PrometheusText.Sample bucket : after.find("sluice_command_duration_seconds_bucket", "command",
                    "COM_QUERY")) {
                assertThat(bucket.value()).isGreaterThanOrEqualTo(previous);
                previous = bucket.value();
            }
            assertThat(previous).isEqualTo(after.value("sluice_command_duration_seconds_count", "command",
                    "COM_QUERY"));
        }
    }

    @Test
    void failedQueriesCountAsErrorsOfTheirCommand() throws Exception {
        try (Connection connection = connect(JdbcDriver.MARIADB, "");
                Statement statement = connection.createStatement()) {
            statement.executeQuery("SELECT 0").close();
            PrometheusText before = admin.scrape();
            for (int i = 0; i < 3; i++) {
                assertThatThrownBy(() -> statement.executeQuery("SELECT * FROM no_such_schema.no_such_table"))
                        .isInstanceOf(SQLException.class);
            }
            statement.executeQuery("SELECT 1").close();
            PrometheusText after = admin.scrape();

            assertThat(delta(before, after, "sluice_commands_total", "command", "COM_QUERY")).isEqualTo(4);
            assertThat(delta(before, after, "sluice_command_errors_total", "command", "COM_QUERY")).isEqualTo(3);
            assertThat(delta(before, after, "sluice_command_duration_seconds_count", "command", "COM_QUERY"))
                    .isEqualTo(4);
        }
    }

    @Test
    void serverSidePreparedStatementsCountPrepareAndEachExecute() throws Exception {
        try (Connection connection = connect(JdbcDriver.MYSQL, "useServerPrepStmts=true&cachePrepStmts=false")) {
            connection.createStatement().executeQuery("SELECT 0").close();
            PrometheusText before = admin.scrape();
            try (PreparedStatement statement = connection.prepareStatement("SELECT ? + 1")) {
                for (int i = 0; i < 10; i++) {
                    statement.setInt(1, i);
                    try (ResultSet rs = statement.executeQuery()) {
                        assertThat(rs.next()).isTrue();
                        assertThat(rs.getInt(1)).isEqualTo(i + 1);
                    }
                }
            }
            // COM_STMT_CLOSE has no response, so the driver returns before the proxy has read it: scrape until the
            // proxy has counted it (CI once scraped first), then check every counter exactly.
            PrometheusText after = admin.scrape();
            for (long deadline = System.nanoTime() + 5_000_000_000L; delta(before, after, "sluice_commands_total",
                    "command", "COM_STMT_CLOSE") == 0 && System.nanoTime() < deadline; after = admin.scrape()) {
                Thread.sleep(20);
            }

            assertThat(delta(before, after, "sluice_commands_total", "command", "COM_STMT_PREPARE")).isEqualTo(1);
            assertThat(delta(before, after, "sluice_commands_total", "command", "COM_STMT_EXECUTE")).isEqualTo(10);
            assertThat(delta(before, after, "sluice_command_duration_seconds_count", "command", "COM_STMT_EXECUTE"))
                    .isEqualTo(10);
            assertThat(delta(before, after, "sluice_commands_total", "command", "COM_STMT_CLOSE")).isEqualTo(1);
            // COM_STMT_CLOSE has no response: counted, never timed.
            assertThat(delta(before, after, "sluice_command_duration_seconds_count", "command", "COM_STMT_CLOSE"))
                    .isZero();
        }
    }

    @Test
    void scrapesDuringTrafficNeverGoBackAndEndExact() throws Exception {
        int queries = 300;
        AtomicReference<Throwable> failure = new AtomicReference<>();
        PrometheusText before;
        try (Connection connection = connect(JdbcDriver.MARIADB, "")) {
            connection.createStatement().executeQuery("SELECT 0").close();
            before = admin.scrape();
            Thread traffic = new Thread(() -> {
                try (Statement statement = connection.createStatement()) {
                    for (int i = 0; i < queries; i++) {
                        statement.executeQuery("SELECT " + i).close();
                    }
                } catch (Throwable t) {
                    failure.set(t);
                }
            });
            traffic.start();
            List<Double> seen = new ArrayList<>();
            while (traffic.isAlive()) {
                seen.add(admin.scrape().value("sluice_commands_total", "command", "COM_QUERY"));
            }
            traffic.join();
            assertThat(failure.get()).isNull();
            assertThat(seen).isSorted();
        }
        PrometheusText after = admin.scrape();
        assertThat(delta(before, after, "sluice_commands_total", "command", "COM_QUERY")).isEqualTo(queries);
        assertThat(delta(before, after, "sluice_command_duration_seconds_count", "command", "COM_QUERY"))
                .isEqualTo(queries);
    }

    @Test
    void clientConnectionsAcceptedAndAuthFailuresAreCounted() throws Exception {
        PrometheusText before = admin.scrape();
        try (Connection first = connect(JdbcDriver.MARIADB, "");
                Connection second = connect(JdbcDriver.MYSQL, "")) {
            PrometheusText during = admin.scrape();
            assertThat(during.value("sluice_client_connections")).isEqualTo(2);
            assertThat(delta(before, during, "sluice_client_connections_accepted_total")).isEqualTo(2);
        }
        assertThatThrownBy(() -> JdbcDriver.MARIADB.connect(url, ProxyUnderTest.USER, "wrong"))
                .isInstanceOf(SQLException.class);
        PrometheusText after = admin.scrape();
        assertThat(delta(before, after, "sluice_client_auth_failures_total")).isEqualTo(1);
        assertThat(delta(before, after, "sluice_client_connections_rejected_total", "reason", "max_connections"))
                .isZero();
    }

    @Test
    void backendPoolHealthJvmAndNettyMetricsAreServed() throws Exception {
        try (Connection connection = connect(JdbcDriver.MARIADB, "")) {
            connection.createStatement().executeQuery("SELECT 1").close();
            PrometheusText scrape = admin.scrape();

            assertThat(scrape.value("sluice_backend_up", "backend", "ds_0")).isEqualTo(1);
            assertThat(scrape.value("sluice_backend_status", "backend", "ds_0", "status", "UP")).isEqualTo(1);
            assertThat(scrape.value("sluice_backend_status", "backend", "ds_0", "status", "DOWN")).isZero();
            assertThat(scrape.value("sluice_backend_connections", "backend", "ds_0", "state", "active"))
                    .isGreaterThanOrEqualTo(1);
            assertThat(scrape.value("sluice_backend_connections_opened_total", "backend", "ds_0"))
                    .isGreaterThanOrEqualTo(1);
            assertThat(scrape.value("sluice_backend_acquire_seconds_count", "backend", "ds_0"))
                    .isGreaterThanOrEqualTo(1);
            assertThat(scrape.value("sluice_backend_connections_max", "backend", "ds_0")).isEqualTo(100);
            assertThat(scrape.value("sluice_backend_sessions", "backend", "ds_0")).isGreaterThanOrEqualTo(1);
            assertThat(scrape.value("sluice_draining")).isZero();
            assertThat(scrape.has("jvm_memory_used_bytes")).isTrue();
            assertThat(scrape.has("jvm_gc_pause_seconds_count") || scrape.has("jvm_gc_memory_allocated_bytes_total"))
                    .isTrue();
            assertThat(scrape.has("process_cpu_usage")).isTrue();
            assertThat(scrape.has("process_uptime_seconds")).isTrue();
            assertThat(scrape.has("netty_allocator_memory_used")).isTrue();
            assertThat(scrape.value("sluice_direct_memory_max_bytes")).isPositive();
            assertThat(scrape.value("sluice_direct_memory_used_bytes")).as("a connection's buffers at least")
                    .isPositive().isLessThanOrEqualTo(scrape.value("sluice_direct_memory_max_bytes"));
            assertThat(scrape.value("process_resident_memory_bytes")).as("RSS, on Linux")
                    .isGreaterThan(scrape.value("sluice_direct_memory_used_bytes"));
        }
    }
}
