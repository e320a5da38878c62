package io.sluice.statistics;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.AdminConfig;
import io.sluice.config.StatisticsConfig;
import io.sluice.json.Json;
import io.sluice.testing.AdminClient;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.PrometheusText;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Statement statistics by digest through Sluice, with real clients on the real server: counts exact for a known mix
 * of text and prepared statements from both drivers, errors, rows and warnings counted, a sysbench-like loop of
 * point selects counted once each, the reset, the admin endpoint and the metrics' top N.
 */
@Tag("server")
class DigestStatisticsTest {
    private static final String TOKEN = "dig-token";
    private static final String POINT_SELECT = "select c from sbtest1 where id = ?";

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.admin(AdminConfig.on("127.0.0.1", 0, TOKEN)))
            .sluiceOnly("Sluice's own statement statistics");

    private static String db;
    private static AdminClient admin;

    @BeforeAll
    static void schema() {
        db = TestMariaDb.get().createDatabase("dig_");
        StringBuilder rows = new StringBuilder("INSERT INTO sbtest1 VALUES (1, 1, 'c1', 'p')");
        for (int id = 2; id <= 100; id++) {
            rows.append(", (").append(id).append(", ").append(id).append(", 'c").append(id).append("', 'p')");
        }
        TestMariaDb.get().executeIn(db,
                "CREATE TABLE sbtest1 (id INT PRIMARY KEY, k INT, c CHAR(120), pad CHAR(60))", rows.toString());
        admin = new AdminClient("127.0.0.1", proxy.adminPort());
    }

    @AfterAll
    static void dropSchema() {
        TestMariaDb.get().dropDatabase(db);
    }

    @BeforeEach
    void reset() {
        statistics().reset();
    }

    private static DigestStatistics statistics() {
        return proxy.sluice().statistics();
    }

    private static Connection connect(JdbcDriver driver, String params) throws SQLException {
        return proxy.connect(driver, db, params);
    }

    /** The row of {@code digestText} for the test's user, or a row of count 0. */
    private static DigestSummary row(String digestText) {
        return statistics().summaries().stream()
                .filter(r -> r.digestText().equals(digestText) && r.user().equals(ProxyUnderTest.USER))
                .findFirst()
                .orElse(new DigestSummary("", digestText, "", "", "", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
    }

    @Test
    void countsTextAndPreparedStatementsOfBothDriversUnderOneDigest() throws SQLException {
        for (JdbcDriver driver : JdbcDriver.values()) {
            try (Connection c = connect(driver, "useServerPrepStmts=true")) {
                try (Statement text = c.createStatement()) {
                    for (int id = 1; id <= 7; id++) {
                        try (ResultSet rs = text.executeQuery("SELECT c FROM sbtest1 WHERE id = " + id)) {
                            assertThat(rs.next()).isTrue();
                        }
                    }
                }
                try (PreparedStatement prepared = c.prepareStatement("SELECT c FROM sbtest1 WHERE id = ?")) {
                    for (int id = 1; id <= 5; id++) {
                        prepared.setInt(1, id);
                        try (ResultSet rs = prepared.executeQuery()) {
                            assertThat(rs.next()).isTrue();
                        }
                    }
                }
            }
        }

        DigestSummary point = row(POINT_SELECT);
        assertThat(point.count()).isEqualTo(2 * (7 + 5));
        assertThat(point.rowsSent()).isEqualTo(2 * (7 + 5));
        assertThat(point.errors()).isZero();
        assertThat(point.schema()).isEqualTo(db);
        assertThat(point.group()).isEqualTo("ds_0");
        assertThat(point.digest()).hasSize(16).isEqualTo(io.sluice.sql.SqlDigest.of(POINT_SELECT).hash());
        assertThat(point.totalMicros()).isPositive();
        assertThat(point.minMicros()).isPositive().isLessThanOrEqualTo(point.p50Micros());
        assertThat(point.p50Micros()).isLessThanOrEqualTo(point.p95Micros());
        assertThat(point.p99Micros()).isLessThanOrEqualTo(point.maxMicros());
        assertThat(point.maxMicros()).isLessThanOrEqualTo(point.totalMicros());
        assertThat(point.lastSeenMillis()).isGreaterThanOrEqualTo(point.firstSeenMillis())
                .isLessThanOrEqualTo(System.currentTimeMillis() + 5);
        assertThat(point.primary()).isEqualTo(point.count());
    }

    @Test
    void countsErrorsRowsAffectedRowsAndWarnings() throws SQLException {
        try (Connection c = connect(JdbcDriver.MARIADB, "");
                Statement s = c.createStatement()) {
            for (int i = 0; i < 3; i++) {
                try (ResultSet rs = s.executeQuery("SELECT * FROM sbtest1 WHERE id <= 10")) {
                    int n = 0;
                    while (rs.next()) {
                        n++;
                    }
                    assertThat(n).isEqualTo(10);
                }
            }
            for (int i = 0; i < 2; i++) {
                try {
                    s.executeQuery("SELECT * FROM no_such_table");
                } catch (SQLException expected) {
                    assertThat(expected.getErrorCode()).isEqualTo(1146);
                }
            }
            assertThat(s.executeUpdate("UPDATE sbtest1 SET k = k + 1 WHERE id <= 3")).isEqualTo(3);
            assertThat(s.executeUpdate("UPDATE sbtest1 SET k = k + 1 WHERE id <= 4")).isEqualTo(4);
            for (int i = 0; i < 2; i++) {
                try (ResultSet rs = s.executeQuery("SELECT CAST('12abc' AS SIGNED)")) {
                    assertThat(rs.next()).isTrue();
                }
            }
        }

        DigestSummary range = row("select * from sbtest1 where id <= ?");
        assertThat(range.count()).isEqualTo(3);
        assertThat(range.rowsSent()).isEqualTo(30);
        DigestSummary missing = row("select * from no_such_table");
        assertThat(missing.count()).isEqualTo(2);
        assertThat(missing.errors()).isEqualTo(2);
        DigestSummary update = row("update sbtest1 set k = k + ? where id <= ?");
        assertThat(update.count()).isEqualTo(2);
        assertThat(update.rowsAffected()).isEqualTo(7);
        assertThat(update.rowsSent()).isZero();
        DigestSummary cast = row("select cast (? as signed)");
        assertThat(cast.count()).isEqualTo(2);
        assertThat(cast.warnings()).isEqualTo(2);
    }

    /** As the lead's sysbench check: every point select sent is counted once, prepared or not, over 4 threads. */
    @Test
    void aSysbenchLikeLoopOfPointSelectsIsCountedOnceEach() throws Exception {
        int threads = 4;
        int perThread = 500;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<Integer>> sent = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                JdbcDriver driver = t % 2 == 0 ? JdbcDriver.MARIADB : JdbcDriver.MYSQL;
                boolean prepared = t < 2;
                sent.add(pool.submit(() -> pointSelects(driver, prepared, perThread)));
            }
            int total = 0;
            for (Future<Integer> each : sent) {
                total += each.get(120, TimeUnit.SECONDS);
            }
            assertThat(total).isEqualTo(threads * perThread);
            DigestSummary point = row(POINT_SELECT);
            assertThat(point.count()).isEqualTo(total);
            assertThat(point.rowsSent()).isEqualTo(total);
        } finally {
            pool.shutdownNow();
        }
    }

    private static int pointSelects(JdbcDriver driver, boolean prepared, int n) throws SQLException {
        int sent = 0;
        try (Connection c = connect(driver, prepared ? "useServerPrepStmts=true" : "")) {
            PreparedStatement ps = prepared ? c.prepareStatement("SELECT c FROM sbtest1 WHERE id=?") : null;
            Statement s = c.createStatement();
            for (int i = 0; i < n; i++) {
                int id = 1 + (i * 37) % 100;
                ResultSet rs;
                if (ps != null) {
                    ps.setInt(1, id);
                    rs = ps.executeQuery();
                } else {
                    rs = s.executeQuery("SELECT c FROM sbtest1 WHERE id=" + id);
                }
                try (rs) {
                    assertThat(rs.next()).isTrue();
                }
                sent++;
            }
            if (ps != null) {
                ps.close();
            }
            s.close();
        }
        return sent;
    }

    @Test
    void theAdminEndpointOrdersLimitsAndResets() throws Exception {
        try (Connection c = connect(JdbcDriver.MARIADB, "");
                Statement s = c.createStatement()) {
            for (int i = 0; i < 5; i++) {
                s.executeQuery("SELECT k FROM sbtest1 WHERE id = " + (i + 1)).close();
            }
            s.executeQuery("SELECT SLEEP(0.05)").close();
        }

        AdminClient.Response byCount = admin.get("/api/digests?orderBy=count&limit=2", TOKEN);
        assertThat(byCount.status()).isEqualTo(200);
        List<?> rows = (List<?>) Json.parse(byCount.body());
        assertThat(rows).hasSize(2);
        @SuppressWarnings("unchecked")
        Map<String, Object> first = (Map<String, Object>) rows.get(0);
        assertThat(first.keySet()).contains("digest", "digestText", "user", "schema", "count", "errors",
                "totalMicros", "maxMicros", "p99Micros");
        assertThat(((Number) first.get("count")).longValue())
                .isGreaterThanOrEqualTo(((Number) ((Map<?, ?>) rows.get(1)).get("count")).longValue());

        List<?> byTime = (List<?>) Json.parse(admin.get("/api/digests?orderBy=totalTime&limit=20", TOKEN).body());
        Map<?, ?> slowest = (Map<?, ?>) byTime.get(0);
        assertThat(slowest.get("digestText")).isEqualTo("select sleep (?)");
        assertThat(((Number) slowest.get("maxMicros")).longValue()).isGreaterThanOrEqualTo(50_000);
        assertThat(((Number) slowest.get("p99Micros")).longValue()).isGreaterThanOrEqualTo(50_000);

        assertThat(admin.get("/api/digests?orderBy=nonsense", TOKEN).status()).isEqualTo(400);
        assertThat(admin.get("/api/digests?limit=0", TOKEN).status()).isEqualTo(400);
        assertThat(admin.get("/api/digests").status()).as("a read of statements needs a token once one is set")
                .isEqualTo(401);
        assertThat(admin.post("/api/digests/reset", null).status()).isEqualTo(401);
        assertThat(admin.post("/api/digests/reset", "wrong").status()).isEqualTo(401);
        assertThat(admin.get("/api/digests/reset", TOKEN).status()).isEqualTo(405);
        assertThat(row("select k from sbtest1 where id = ?").count()).isEqualTo(5);

        AdminClient.Response reset = admin.post("/api/digests/reset", TOKEN);
        assertThat(reset.status()).isEqualTo(200);
        assertThat(row("select k from sbtest1 where id = ?").count()).isZero();
        assertThat(statistics().entries()).isZero();
        try (Connection c = connect(JdbcDriver.MARIADB, "");
                Statement s = c.createStatement()) {
            s.executeQuery("SELECT k FROM sbtest1 WHERE id = 9").close();
        }
        assertThat(row("select k from sbtest1 where id = ?").count()).isEqualTo(1);
    }

    @Test
    void theMetricsShowTheTopDigestsByTotalTime() throws SQLException {
        try (Connection c = connect(JdbcDriver.MARIADB, "");
                Statement s = c.createStatement()) {
            for (int i = 0; i < 3; i++) {
                s.executeQuery("SELECT pad FROM sbtest1 WHERE id = " + (i + 1)).close();
            }
        }
        PrometheusText metrics = PrometheusText.parse(proxy.metrics().scrape());
        String hash = io.sluice.sql.SqlDigest.of("select pad from sbtest1 where id = ?").hash();
        assertThat(metrics.value("sluice_digest_statements_total", "digest", hash, "user", ProxyUnderTest.USER))
                .isEqualTo(3);
        assertThat(metrics.find("sluice_digest_statements_total")).hasSizeLessThanOrEqualTo(
                StatisticsConfig.DEFAULT_METRICS_TOP_N);
        assertThat(metrics.value("sluice_digest_entries")).isPositive();
        assertThat(metrics.value("sluice_digest_memory_bytes")).isPositive();
    }

    /** Past the cap, further shapes count in one {@code other} row; every statement is counted somewhere. */
    @Test
    void shapesPastTheCapCountInOther() throws Exception {
        try (ProxyUnderTest capped = ProxyUnderTest.builder().workerThreads(1)
                .config(c -> c.withOperations(c.operations().withMetrics(c.operations().metrics()
                        .withStatistics(new StatisticsConfig(true, 3, 20)))))
                .start();
                RawMySqlClient client = RawMySqlClient.login("127.0.0.1", capped.port(), ProxyUnderTest.USER,
                        ProxyUnderTest.PASSWORD, db)) {
            String[] shapes = {"SELECT id FROM sbtest1 WHERE id = 1", "SELECT k FROM sbtest1 WHERE id = 1",
                "SELECT c FROM sbtest1 WHERE id = 1", "SELECT pad FROM sbtest1 WHERE id = 1",
                "SELECT id, k FROM sbtest1 WHERE id = 1", "SELECT k, c FROM sbtest1 WHERE id = 1"};
            for (String sql : shapes) {
                client.query(sql);
                client.query(sql);
            }
            DigestStatistics capStatistics = capped.sluice().statistics();
            List<DigestSummary> rows = capStatistics.summaries();
            assertThat(capStatistics.entries()).isEqualTo(3);
            assertThat(rows.stream().mapToLong(DigestSummary::count).sum()).isEqualTo(12);
            DigestSummary other = rows.stream().filter(DigestSummary::isOther).findFirst().orElseThrow();
            assertThat(other.count()).isEqualTo(6);
            assertThat(rows.stream().filter(r -> !r.isOther()).mapToLong(DigestSummary::count)).containsOnly(2L);
        }
    }

    /**
     * Transaction pooling shows clients statement ids of the session's own and prepares statements again on the
     * connection in use: executions still count once each, under the SQL's digest.
     */
    @Test
    void preparedStatementsCountOnceUnderTransactionPooling() throws Exception {
        try (ProxyUnderTest pooled = ProxyUnderTest.builder().transactionPooling().maxPoolSize(2).start()) {
            int executions = 0;
            for (JdbcDriver driver : JdbcDriver.values()) {
                try (Connection a = pooled.connect(driver, db, "useServerPrepStmts=true");
                        Connection b = pooled.connect(driver, db, "useServerPrepStmts=true");
                        PreparedStatement pa = a.prepareStatement("SELECT c FROM sbtest1 WHERE id = ?");
                        PreparedStatement pb = b.prepareStatement("SELECT k, c FROM sbtest1 WHERE id = ?")) {
                    for (int i = 1; i <= 20; i++) {
                        PreparedStatement ps = i % 2 == 0 ? pa : pb;
                        ps.setInt(1, i);
                        try (ResultSet rs = ps.executeQuery()) {
                            assertThat(rs.next()).isTrue();
                        }
                        executions++;
                    }
                }
            }
            List<DigestSummary> rows = pooled.sluice().statistics().summaries();
            long point = rows.stream().filter(r -> r.digestText().equals(POINT_SELECT)).mapToLong(DigestSummary::count)
                    .sum();
            long two = rows.stream().filter(r -> r.digestText().equals("select k, c from sbtest1 where id = ?"))
                    .mapToLong(DigestSummary::count).sum();
            assertThat(point).isEqualTo(executions / 2);
            assertThat(two).isEqualTo(executions / 2);
        }
    }

    /** In transaction pooling, the statement that pins a session is credited with the pin. */
    @Test
    void theStatementThatPinsASessionCountsThePin() throws Exception {
        try (ProxyUnderTest pooled = ProxyUnderTest.builder().transactionPooling().start();
                Connection c = pooled.connect(JdbcDriver.MARIADB, db, "");
                Statement s = c.createStatement()) {
            s.executeQuery("SELECT c FROM sbtest1 WHERE id = 1").close();
            s.execute("CREATE TEMPORARY TABLE dig_tmp (id INT)");
            s.executeQuery("SELECT c FROM sbtest1 WHERE id = 2").close();
            List<DigestSummary> rows = pooled.sluice().statistics().summaries();
            assertThat(rows.stream().filter(r -> r.digestText().equals("create temporary table dig_tmp (id int)"))
                    .mapToLong(DigestSummary::pins)).containsExactly(1L);
            assertThat(rows.stream().filter(r -> r.digestText().equals("select c from sbtest1 where id = ?"))
                    .mapToLong(DigestSummary::pins)).containsExactly(0L);
        }
    }

    @Test
    void statisticsOffHaveNoEndpointAndNoTable() throws SQLException {
        try (ProxyUnderTest off = ProxyUnderTest.builder().admin(AdminConfig.on("127.0.0.1", 0, TOKEN))
                .config(c -> c.withOperations(c.operations().withMetrics(c.operations().metrics()
                        .withStatistics(StatisticsConfig.off()))))
                .start()) {
            try (Connection c = off.connect(JdbcDriver.MARIADB, db, "");
                    Statement s = c.createStatement()) {
                s.executeQuery("SELECT c FROM sbtest1 WHERE id = 1").close();
            }
            assertThat(off.sluice().statistics()).isNull();
            AdminClient offAdmin = new AdminClient("127.0.0.1", off.adminPort());
            assertThat(offAdmin.get("/api/digests", TOKEN).status()).isEqualTo(404);
            assertThat(offAdmin.post("/api/digests/reset", TOKEN).status()).isEqualTo(404);
            assertThat(PrometheusText.parse(off.metrics().scrape()).has("sluice_digest_entries")).isFalse();
        }
    }
}
