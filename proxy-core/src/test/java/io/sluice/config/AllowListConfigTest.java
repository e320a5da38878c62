package io.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** config.yaml's {@code allowList} of a {@code !QUERY_RULES} item (issue #41 item 3, decision 188), and refusals. */
class AllowListConfigTest {

    private static final String DATA_SOURCES = """
            dataSources:
              ds_0:
                url: jdbc:mysql://127.0.0.1:3306/app
                username: root
                password:
            """;

    private static ProxyConfig parse(String rules) {
        return ConfigYaml.parse(DATA_SOURCES + "rules:\n" + rules, "config.yaml");
    }

    @Test
    void readsTheLearnedShapeBesideRules() {
        ProxyConfig config = parse("""
                - !QUERY_RULES
                  rules:
                    - name: no-drop
                      statementClass: DDL
                      block: {code: 1142}
                  allowList:
                    mode: ENFORCE
                    users:
                      'app':
                        - '49375545995D85B1'   # 40x select c from sbtest1 where id = ?
                        - 9505cacb7c710ed1
                      report: []
                """);
        assertThat(config.queryRules()).hasSize(1);
        assertThat(config.allowList().mode()).isEqualTo(AllowListConfig.Mode.ENFORCE);
        assertThat(config.allowList().users()).containsOnlyKeys("app", "report");
        assertThat(config.allowList().users().get("app")).isEqualTo(Set.of("49375545995d85b1", "9505cacb7c710ed1"));
        assertThat(config.allowList().users().get("report")).isEmpty();
        assertThat(parse("- !QUERY_RULES\n  rules: []\n").allowList()).isNull();
    }

    @Test
    void refusesWhatWouldSilentlyMisbehave() {
        assertRefused("- !QUERY_RULES\n  allowList:\n    users: {app: [9505cacb7c710ed1]}\n", "mode", "DRY_RUN");
        assertRefused("- !QUERY_RULES\n  allowList:\n    mode: LEARN\n    users: {}\n", "LEARN", "ENFORCE");
        assertRefused("- !QUERY_RULES\n  allowList:\n    mode: DRY_RUN\n    users: {app: [select 1]}\n",
                "allowList.users.app: select 1", "16 hex digits");
        assertRefused("- !QUERY_RULES\n  allowList:\n    mode: DRY_RUN\n    users: {app: 9505cacb7c710ed1}\n",
                "expected: a list of strings");
        assertRefused("""
                - !QUERY_RULES
                  allowList: {mode: DRY_RUN, users: {}}
                - !QUERY_RULES
                  allowList: {mode: ENFORCE, users: {}}
                """, "a second allow-list");
    }

    @Test
    void aRulesFileWithoutDataSourcesIsReadAsRulesLearnWritesIt(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("allow.yaml");
        Files.writeString(file, """
                # Learned by sluice-ctl rules learn
                rules:
                - !QUERY_RULES
                  allowList:
                    mode: DRY_RUN
                    users:
                      'app':
                        - '9505cacb7c710ed1'   # 10x commit
                """);
        QueryRulesFile rules = QueryRulesFile.load(file);
        assertThat(rules.rules()).isEmpty();
        assertThat(rules.allowList().users().get("app")).containsExactly("9505cacb7c710ed1");
        Files.writeString(file, "rules:\n- !READWRITE_SPLITTING\n  dataSources: {}\n");
        assertThatThrownBy(() -> QueryRulesFile.load(file)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("!READWRITE_SPLITTING");
    }

    private static void assertRefused(String rules, String... fragments) {
        assertThatThrownBy(() -> parse(rules)).isInstanceOf(ConfigException.class)
                .satisfies(e -> assertThat(e.getMessage()).contains(fragments));
    }
}
