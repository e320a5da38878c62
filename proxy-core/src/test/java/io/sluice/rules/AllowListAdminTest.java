package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.AdminConfig;
import io.sluice.config.AllowListConfig;
import io.sluice.json.Json;
import io.sluice.sql.SqlDigest;
import io.sluice.testing.AdminClient;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The allow-list as an operator watches it, with MariaDB Connector/J on the real server: {@code GET
 * /api/rules/allowlist} lists what a {@code DRY_RUN} list would have refused, with counts, while nothing is refused;
 * a reload to {@code ENFORCE} refuses exactly those shapes, and the endpoint counts the refusals.
 */
@Tag("server")
class AllowListAdminTest {
    private static final String TOKEN = "allow-token";
    private static final String LEARNED = "SELECT id FROM t WHERE id = 1";
    private static final String OTHER = "SELECT COUNT(*) FROM t";

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.admin(AdminConfig.on("127.0.0.1", 0, TOKEN)))
            .sluiceOnly("Sluice's own allow-list").database("allow_adm_", "CREATE TABLE t (id INT PRIMARY KEY)");

    private static AdminClient admin;

    @BeforeAll
    static void client() {
        admin = new AdminClient("127.0.0.1", proxy.adminPort());
    }

    @AfterEach
    void noList() {
        proxy.sluice().reload(proxy.sluice().config().withAllowList(null));
    }

    private static void use(AllowListConfig.Mode mode) {
        // what Connector/J sends at login and for autocommit is learned too, as rules learn would see it
        Set<String> learned = Set.of(SqlDigest.of(LEARNED).hash());
        proxy.sluice().reload(proxy.sluice().config().withAllowList(new AllowListConfig(mode,
                Map.of("allow_nobody", Set.of(), proxy.user(), learned))));
    }

    private static Map<?, ?> allowList() {
        AdminClient.Response response = admin.get("/api/rules/allowlist", TOKEN);
        assertThat(response.status()).isEqualTo(200);
        return (Map<?, ?>) Json.parse(response.body());
    }

    @Test
    void dryRunReportsThenEnforceRefuses() throws SQLException {
        assertThat(allowList().get("mode")).isNull();
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), ""); Statement s = c.createStatement()) {
            use(AllowListConfig.Mode.DRY_RUN);
            for (int i = 0; i < 3; i++) {
                s.executeQuery(OTHER).close();
                s.executeQuery(LEARNED).close();
            }
            Map<?, ?> dryRun = allowList();
            assertThat(dryRun.get("mode")).isEqualTo("DRY_RUN");
            assertThat(((Map<?, ?>) dryRun.get("users")).get(proxy.user())).isEqualTo(1L);
            List<?> outside = (List<?>) dryRun.get("outside");
            assertThat(outside).singleElement().satisfies(shape -> {
                Map<?, ?> entry = (Map<?, ?>) shape;
                assertThat(entry.get("digest")).isEqualTo(SqlDigest.of(OTHER).hash());
                assertThat(entry.get("digestText")).isEqualTo("select count (*) from t");
                assertThat(entry.get("user")).isEqualTo(proxy.user());
                assertThat(entry.get("count")).isEqualTo(3L);
            });

            use(AllowListConfig.Mode.ENFORCE);
            assertThatThrownBy(() -> s.executeQuery(OTHER)).isInstanceOfSatisfying(SQLException.class,
                    e -> assertThat(e.getErrorCode()).isEqualTo(1148));
            s.executeQuery(LEARNED).close();
            Map<?, ?> enforce = allowList();
            assertThat(enforce.get("mode")).isEqualTo("ENFORCE");
            assertThat((List<?>) enforce.get("outside")).singleElement()
                    .satisfies(shape -> assertThat(((Map<?, ?>) shape).get("count")).isEqualTo(1L));
        }
        assertThat(admin.get("/api/rules/allowlist").status()).as("a token is needed once one is set")
                .isEqualTo(401);
    }
}
