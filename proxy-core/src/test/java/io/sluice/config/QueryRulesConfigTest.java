package io.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.config.QueryRuleConfig.StatementClass;
import io.sluice.config.QueryRuleConfig.Target;
import java.util.List;
import org.junit.jupiter.api.Test;

/** config.yaml's {@code !QUERY_RULES} (issue #41 item 2): the issue's example as written, and each refusal. */
class QueryRulesConfigTest {

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
    void readsTheIssuesExampleInOrder() {
        ProxyConfig config = parse("""
                - !QUERY_RULES
                  rules:
                    - name: no-report-on-primary
                      pattern: '^select .* from orders_report'
                      user: reporting
                      route: REPLICA
                    - name: no-drop
                      statementClass: DDL
                      user: app
                      block: {code: 1142, message: 'DDL through the app account is refused by rule no-drop'}
                    - name: by-digest
                      digest: 0123456789ABCDEF
                      network: [10.0.0.0/8, '::1']
                      schema: [app, reports]
                      statementClass: [select, DML]
                      block: {}
                """);
        List<QueryRuleConfig> rules = config.queryRules();
        assertThat(rules).extracting(QueryRuleConfig::name)
                .containsExactly("no-report-on-primary", "no-drop", "by-digest");
        QueryRuleConfig report = rules.get(0);
        assertThat(report.action()).isEqualTo(Action.ROUTE);
        assertThat(report.route()).isEqualTo(Target.REPLICA);
        assertThat(report.pattern()).isEqualTo("^select .* from orders_report");
        assertThat(report.users()).containsExactly("reporting");
        QueryRuleConfig noDrop = rules.get(1);
        assertThat(noDrop.action()).isEqualTo(Action.BLOCK);
        assertThat(noDrop.block().code()).isEqualTo(1142);
        assertThat(noDrop.block().sqlState()).isEqualTo("42000");
        assertThat(noDrop.block().message()).isEqualTo("DDL through the app account is refused by rule no-drop");
        assertThat(noDrop.statementClasses()).containsExactly(StatementClass.DDL);
        QueryRuleConfig byDigest = rules.get(2);
        assertThat(byDigest.digest()).isEqualTo("0123456789abcdef");
        assertThat(byDigest.networks()).containsExactly("10.0.0.0/8", "::1");
        assertThat(byDigest.schemas()).containsExactly("app", "reports");
        assertThat(byDigest.statementClasses()).containsExactly(StatementClass.SELECT, StatementClass.DML);
        assertThat(byDigest.block().code()).isEqualTo(1148);
        assertThat(byDigest.block().message()).isEqualTo("Statement refused by query rule by-digest");
        assertThat(config.readWriteSplitting()).isEmpty();
    }

    @Test
    void aMessageThatDoesNotNameTheRuleGetsItsName() {
        QueryRuleConfig rule = parse("""
                - !QUERY_RULES
                  rules:
                    - {name: quiet, pattern: 'x', block: {message: 'Not now', sqlState: HY000, code: 1105}}
                """).queryRules().get(0);
        assertThat(rule.block().message()).isEqualTo("Not now (query rule quiet)");
        assertThat(rule.block().sqlState()).isEqualTo("HY000");
    }

    @Test
    void liesBesideReadWriteSplitting() {
        ProxyConfig config = ConfigYaml.parse("""
                dataSources:
                  ds_0: {url: 'jdbc:mysql://127.0.0.1:3306/app', username: root, password: }
                  ds_1: {url: 'jdbc:mysql://127.0.0.1:3307/app', username: root, password: }
                rules:
                - !READWRITE_SPLITTING
                  dataSources:
                    app_rw: {writeDataSourceName: ds_0, readDataSourceNames: [ds_1]}
                - !QUERY_RULES
                  rules:
                    - {name: reports, pattern: 'from orders_report', route: replica}
                """, "config.yaml");
        assertThat(config.readWriteSplitting()).hasSize(1);
        assertThat(config.queryRules()).singleElement().extracting(QueryRuleConfig::route).isEqualTo(Target.REPLICA);
    }

    @Test
    void refusalsNameTheRuleTheKeyAndTheLine() {
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: a, pattern: 'x', route: REPLICA, block: {}}
                """, "line 9", "rule a: a second action beside route");
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - name: lonely
                      pattern: 'x'
                """, "an action for rule lonely");
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: bad-re, pattern: 'select (', block: {}}
                """, "rule bad-re: 'select ('", "expected: a Java regular expression");
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: net, network: 10.0.0.0/33, block: {}}
                """, "rule net: 10.0.0.0/33");
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: cls, statementClass: DROP, block: {}}
                """, "rule cls: DROP", "DDL");
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: twice, pattern: a, block: {}}
                    - {name: twice, pattern: b, block: {}}
                """, "rule twice: the name is used twice");
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: d, digest: 'not-hex', block: {}}
                """, "rule d: not-hex");
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: code, pattern: a, block: {code: 70000}}
                """, "code: 70000");
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: where, pattern: a, route: ELSEWHERE}
                """, "ELSEWHERE", "PRIMARY, REPLICA");
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: typo, patern: a, block: {}}
                """, "patern", "unknown key");
    }

    @Test
    void aLimitBelowItsLeastIsRefusedNotIgnored() {
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: cap-sleep, pattern: '^select sleep', timeoutMilliseconds: 0}
                """, "rule cap-sleep: 0 (expected: at least 1 millisecond)");
    }

    @Test
    void aMirrorNamesADataSourceOrAGroup() {
        QueryRuleConfig rule = parse("""
                - !QUERY_RULES
                  rules:
                    - {name: shadow, pattern: '^insert', mirror: ds_0}
                """).queryRules().get(0);
        assertThat(rule.action()).isEqualTo(Action.MIRROR);
        assertThat(rule.mirror()).isEqualTo("ds_0");
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: shadow, pattern: '^insert', mirror: nowhere}
                """, "query rule shadow mirrors to nowhere", "a data source or a read/write splitting group");
    }

    @Test
    void readsARateWithItsWait() {
        QueryRuleConfig rule = parse("""
                - !QUERY_RULES
                  rules:
                    - {name: slow-down, pattern: '^select', maxPerSecond: 50, maxWaitMilliseconds: 200}
                    - {name: default-wait, pattern: '^update', maxPerSecond: 5}
                """).queryRules().get(0);
        assertThat(rule.action()).isEqualTo(Action.MAX_PER_SECOND);
        assertThat(rule.limit()).isEqualTo(50);
        assertThat(rule.maxWait()).isEqualTo(200);
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: w, pattern: '^select', block: {}, maxWaitMilliseconds: 200}
                """, "rule w: 200 (expected: 0..60000, with maxPerSecond or maxConcurrency)");
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: z, pattern: '^select', maxPerSecond: 0}
                """, "rule z: 0 (expected: at least 1 statement a second)");
    }

    @Test
    void readsAConcurrencyLimitWithItsWait() {
        List<QueryRuleConfig> rules = parse("""
                - !QUERY_RULES
                  rules:
                    - {name: two-reports, pattern: '^select .* from orders_report', maxConcurrency: 2,
                       maxWaitMilliseconds: 300}
                    - {name: default-wait, pattern: '^select sleep', maxConcurrency: 1}
                """).queryRules();
        assertThat(rules.get(0).action()).isEqualTo(Action.MAX_CONCURRENCY);
        assertThat(rules.get(0).limit()).isEqualTo(2);
        assertThat(rules.get(0).maxWait()).isEqualTo(300);
        assertThat(rules.get(1).maxWait()).isEqualTo(QueryRuleConfig.DEFAULT_MAX_WAIT);
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: none, pattern: '^select', maxConcurrency: 0}
                """, "rule none: 0 (expected: at least 1 statement at once)");
    }

    @Test
    void readsARowLimit() {
        QueryRuleConfig rule = parse("""
                - !QUERY_RULES
                  rules:
                    - {name: cap-rows, pattern: '^select', maxRows: 500}
                """).queryRules().get(0);
        assertThat(rule.action()).isEqualTo(Action.MAX_ROWS);
        assertThat(rule.limit()).isEqualTo(500);
        assertRefused("""
                - !QUERY_RULES
                  rules:
                    - {name: no-rows, pattern: '^select', maxRows: 0}
                """, "rule no-rows: 0 (expected: at least 1 row)");
    }

    @Test
    void readsATimeout() {
        QueryRuleConfig rule = parse("""
                - !QUERY_RULES
                  rules:
                    - {name: cap-sleep, pattern: '^select sleep', timeoutMilliseconds: 500}
                """).queryRules().get(0);
        assertThat(rule.action()).isEqualTo(Action.TIMEOUT);
        assertThat(rule.limit()).isEqualTo(500);
    }

    private static void assertRefused(String rules, String... fragments) {
        assertThatThrownBy(() -> parse(rules)).isInstanceOf(ConfigException.class)
                .satisfies(e -> assertThat(e.getMessage()).contains(fragments));
    }
}
