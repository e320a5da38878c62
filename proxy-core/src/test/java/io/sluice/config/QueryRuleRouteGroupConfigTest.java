package io.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.QueryRuleConfig.Target;
import org.junit.jupiter.api.Test;

/**
 * The config.yaml shape of a {@code route} rule that names another group (decision 194): {@code route: {group: NAME}},
 * a read/write splitting group or a data source; an unknown name, {@code route: GROUP} and a group without a name
 * are refused at load with the rule's name.
 */
class QueryRuleRouteGroupConfigTest {

    private static final String CONFIG = """
            dataSources:
              primary:
                url: jdbc:mysql://127.0.0.1:3306/app
                username: root
                password:
              replica_0:
                url: jdbc:mysql://127.0.0.1:3307/app
                username: root
                password:
              reports:
                url: jdbc:mysql://127.0.0.1:3308/app
                username: root
                password:
            rules:
            - !READWRITE_SPLITTING
              dataSources:
                app_rw:
                  writeDataSourceName: primary
                  readDataSourceNames: [replica_0]
            - !QUERY_RULES
              rules:
            """;

    private static ProxyConfig parse(String rule) {
        return ConfigYaml.parse(CONFIG + rule, "config.yaml");
    }

    @Test
    void aRouteToAGroupOrADataSourceIsReadByName() {
        ProxyConfig config = parse("""
                    - {name: to-group, pattern: '^select', route: {group: app_rw}}
                    - {name: to-source, pattern: '^insert', route: {group: primary}}
                    - {name: hint, pattern: '^update', route: primary}
                """);
        QueryRuleConfig toGroup = config.queryRules().get(0);
        assertThat(toGroup.route()).isEqualTo(Target.GROUP);
        assertThat(toGroup.routeGroup()).isEqualTo("app_rw");
        assertThat(config.queryRules().get(1).routeGroup()).isEqualTo("primary"); // the data source, not the role
        assertThat(config.queryRules().get(2).route()).isEqualTo(Target.PRIMARY); // the scalar form is the role
        assertThat(config.queryRules().get(2).routeGroup()).isNull();
    }

    @Test
    void anUnknownNameIsRefusedWithWhatIsKnown() {
        assertThatThrownBy(() -> parse("""
                    - {name: lost, pattern: '^select', route: {group: reporting}}
                """)).hasMessageContaining("lost").hasMessageContaining("reporting")
                .hasMessageContaining("app_rw").hasMessageContaining("reports");
    }

    @Test
    void groupAsAScalarAndAGroupWithoutANameAreRefused() {
        assertThatThrownBy(() -> parse("""
                    - {name: bare, pattern: '^select', route: GROUP}
                """)).hasMessageContaining("bare").hasMessageContaining("{group: NAME}");
        assertThatThrownBy(() -> parse("""
                    - {name: empty, pattern: '^select', route: {}}
                """)).hasMessageContaining("group");
    }
}
