package io.sluice.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.sluice.config.AdminConfig;
import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.config.QueryRuleConfig.Block;
import io.sluice.testing.ProxyUnderTest;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code sluice-ctl rules list} and {@code rules explain} against a running Sluice with one block rule. */
@Tag("server")
class SluiceCtlRulesTest {
    private static final String TOKEN = "rules-token";

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int ctl(String... args) {
        out.reset();
        err.reset();
        return SluiceCtl.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of("SLUICE_ADMIN_TOKEN", TOKEN));
    }

    @Test
    void listsTheRulesAndExplainsAStatement() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "the admin API is Sluice's");
        QueryRuleConfig noSleep = new QueryRuleConfig("no-sleep", null, "^select sleep", List.of("app"), List.of(),
                List.of(), List.of(), Action.BLOCK, null, new Block(1148, "42000", "SLEEP is refused by no-sleep"));
        try (ProxyUnderTest proxy = ProxyUnderTest.builder().admin(AdminConfig.on("127.0.0.1", 0, TOKEN))
                .config(c -> c.withQueryRules(List.of(noSleep))).start()) {
            String admin = "127.0.0.1:" + proxy.adminPort();

            assertThat(ctl("rules", "list", "--admin", admin)).as(err.toString(StandardCharsets.UTF_8)).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8)).contains("\"rule\": \"no-sleep\"", "\"matched\": 0");

            assertThat(ctl("rules", "explain", "SELECT SLEEP(10)", "--user", "app", "--admin", admin)).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8)).contains("\"rule\": \"no-sleep\"",
                    "\"digestText\": \"select sleep (?)\"", "ERR 1148 (42000)");

            assertThat(ctl("rules", "explain", "SELECT SLEEP(10)", "--user", "web", "--admin", admin)).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8)).contains("\"rule\": null", "no rule matches");

            assertThat(ctl("rules", "explain", "SELECT 1", "--client", "not-an-address", "--admin", admin))
                    .isEqualTo(SluiceCtl.EXIT_FAILED);
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("HTTP 400", "client: not-an-address");
        }
    }
}
