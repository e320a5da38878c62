package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.AdminConfig;
import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.config.QueryRuleConfig.Block;
import io.sluice.config.QueryRuleConfig.StatementClass;
import io.sluice.json.Json;
import io.sluice.testing.AdminClient;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.PrometheusText;
import io.sluice.testing.SluiceExtension;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * What an operator reads of the query rules: {@code GET /api/rules} (each rule, its action and counters),
 * {@code GET /api/rules/explain} (which rule would act on a statement and what it would do) and the Prometheus
 * series per rule, after real statements through Sluice.
 */
@Tag("server")
class QueryRulesAdminTest {
    private static final String TOKEN = "rules-token";

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.admin(AdminConfig.on("127.0.0.1", 0, TOKEN))
                    .config(c -> c.withQueryRules(List.of(
                            new QueryRuleConfig("no-ddl", null, null, List.of(), List.of(), List.of(),
                                    List.of(StatementClass.DDL), Action.BLOCK, null,
                                    new Block(1142, "42000", "DDL is refused by rule no-ddl")),
                            new QueryRuleConfig("reports", null, "from report_", List.of("rules_reporting"),
                                    List.of(), List.of("10.0.0.0/8"), List.of(), Action.ROUTE,
                                    QueryRuleConfig.Target.REPLICA, null)))))
            .sluiceOnly("Sluice's own admin API").database("rules_adm_", "CREATE TABLE t (id INT PRIMARY KEY)");

    private static AdminClient admin;

    @BeforeAll
    static void client() {
        admin = new AdminClient("127.0.0.1", proxy.adminPort());
    }

    @Test
    void listsTheRulesWithTheirCountersAndExportsThem() throws SQLException {
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), ""); Statement s = c.createStatement()) {
            for (int i = 0; i < 2; i++) {
                assertThatThrownBy(() -> s.execute("DROP TABLE t"))
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1142));
            }
            s.execute("SELECT COUNT(*) FROM t");
        }
        AdminClient.Response response = admin.get("/api/rules", TOKEN);
        assertThat(response.status()).isEqualTo(200);
        List<?> rules = (List<?>) Json.parse(response.body());
        assertThat(rules).hasSize(2);
        Map<?, ?> noDdl = (Map<?, ?>) rules.get(0);
        assertThat(noDdl.get("rule")).isEqualTo("no-ddl");
        assertThat(noDdl.get("action")).isEqualTo("block");
        assertThat(((Number) noDdl.get("matched")).longValue()).isEqualTo(2);
        assertThat(((Number) noDdl.get("acted")).longValue()).isEqualTo(2);
        assertThat(((Number) noDdl.get("errors")).longValue()).isZero();
        assertThat(((Map<?, ?>) noDdl.get("block")).get("code")).isEqualTo(1142L);
        assertThat(((Map<?, ?>) rules.get(1)).get("route")).isEqualTo("REPLICA");
        assertThat(admin.get("/api/rules").status()).as("a token is needed once one is set").isEqualTo(401);

        PrometheusText metrics = PrometheusText.parse(proxy.metrics().scrape());
        assertThat(metrics.value("sluice_query_rule_matched_total", "rule", "no-ddl", "action", "block"))
                .isEqualTo(2.0);
        assertThat(metrics.value("sluice_query_rule_acted_total", "rule", "no-ddl", "action", "block"))
                .isEqualTo(2.0);
        assertThat(metrics.value("sluice_query_rule_errors_total", "rule", "reports", "action", "route"))
                .isZero();
    }

    @Test
    void explainsWhichRuleWouldActAndWhatItWouldDo() {
        Map<?, ?> drop = explain("sql=" + encode("DROP TABLE orders") + "&user=app");
        assertThat(drop.get("rule")).isEqualTo("no-ddl");
        assertThat(drop.get("position")).isEqualTo(0L);
        assertThat(drop.get("digestText")).isEqualTo("drop table orders");
        assertThat((String) drop.get("does")).contains("ERR 1142 (42000)").contains("no server sees it");

        Map<?, ?> report = explain("sql=" + encode("SELECT * FROM report_daily WHERE day = '2026-12-06'")
                + "&user=rules_reporting&client=10.1.2.3");
        assertThat(report.get("rule")).isEqualTo("reports");
        assertThat((String) report.get("does")).contains("replicas");
        // the same statement from another network, or another user: no rule
        assertThat(explain("sql=" + encode("SELECT * FROM report_daily") + "&user=rules_reporting&client=192.0.2.1")
                .get("rule")).isNull();
        assertThat(explain("sql=" + encode("SELECT * FROM report_daily") + "&user=app&client=10.1.2.3")
                .get("rule")).isNull();

        assertThat(admin.get("/api/rules/explain", TOKEN).status()).isEqualTo(400);
        assertThat(admin.get("/api/rules/explain?sql=x&client=example.com", TOKEN).status()).isEqualTo(400);
    }

    private static Map<?, ?> explain(String query) {
        AdminClient.Response response = admin.get("/api/rules/explain?" + query, TOKEN);
        assertThat(response.status()).as(response.body()).isEqualTo(200);
        return (Map<?, ?>) Json.parse(response.body());
    }

    private static String encode(String text) {
        return URLEncoder.encode(text, StandardCharsets.UTF_8);
    }
}
