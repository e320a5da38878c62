package io.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** config.yaml's {@code !READWRITE_SPLITTING} rule, in ShardingSphere 5.4's words and Sluice's own. */
class ReadWriteSplittingConfigTest {

    /**
     * ShardingSphere-Proxy 5.4's example {@code conf/config-readwrite-splitting.yaml} (its MySQL part, uncommented),
     * unchanged: the file is Apache-2.0, as ShardingSphere.
     */
    private static final String SHARDINGSPHERE_EXAMPLE = """
            databaseName: readwrite_splitting_db

            dataSources:
              write_ds:
                url: jdbc:mysql://127.0.0.1:3306/demo_write_ds?serverTimezone=UTC&useSSL=false
                username: root
                password:
                connectionTimeoutMilliseconds: 30000
                idleTimeoutMilliseconds: 60000
                maxLifetimeMilliseconds: 1800000
                maxPoolSize: 50
                minPoolSize: 1
              read_ds_0:
                url: jdbc:mysql://127.0.0.1:3306/demo_read_ds_0?serverTimezone=UTC&useSSL=false
                username: root
                password:
                connectionTimeoutMilliseconds: 30000
                idleTimeoutMilliseconds: 60000
                maxLifetimeMilliseconds: 1800000
                maxPoolSize: 50
                minPoolSize: 1
              read_ds_1:
                url: jdbc:mysql://127.0.0.1:3306/demo_read_ds_1?serverTimezone=UTC&useSSL=false
                username: root
                password:
                connectionTimeoutMilliseconds: 30000
                idleTimeoutMilliseconds: 60000
                maxLifetimeMilliseconds: 1800000
                maxPoolSize: 50
                minPoolSize: 1

            rules:
            - !READWRITE_SPLITTING
              dataSources:
                readwrite_ds:
                  writeDataSourceName: write_ds
                  readDataSourceNames:
                    - read_ds_0
                    - read_ds_1
                  loadBalancerName: random
              loadBalancers:
                random:
                  type: RANDOM
            """;

    /** The data sources of the example, for tests that write their own rule (lines 1 to 12). */
    private static final String DATA_SOURCES = """
            dataSources:
              p:
                url: jdbc:mysql://127.0.0.1:3306/app
                username: root
              r0:
                url: jdbc:mysql://127.0.0.1:3307/app
                username: root
              r1:
                url: jdbc:mysql://127.0.0.1:3308/app
                username: root
            rules:
            - !READWRITE_SPLITTING
            """;

    private static ProxyConfig parse(String yaml) {
        return ConfigYaml.parse(yaml, "config.yaml");
    }

    private static void assertRefused(String yaml, String message) {
        assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class).hasMessage(message);
    }

    @Test
    void readsShardingSpheresExampleUnchanged() {
        ProxyConfig config = parse(SHARDINGSPHERE_EXAMPLE);
        assertThat(config.readWriteSplitting()).hasSize(1);
        ReadWriteSplittingConfig group = config.readWriteSplitting().get(0);
        assertThat(group.name()).isEqualTo("readwrite_ds");
        assertThat(group.writeDataSourceName()).isEqualTo("write_ds");
        assertThat(group.readDataSourceNames()).containsExactly("read_ds_0", "read_ds_1");
        assertThat(group.loadBalancer()).isEqualTo(new ReadLoadBalancer("random", ReadLoadBalancer.Type.RANDOM,
                Map.of()));
        assertThat(group.transactionalReadQueryStrategy()).isEqualTo(TransactionalReadQueryStrategy.DYNAMIC);
        assertThat(group.maxReplicationLag()).isEqualTo(Duration.ofSeconds(10));
        assertThat(group.causalReads()).isEqualTo(CausalReads.LOCAL);
        assertThat(group.causalReadsTimeout()).isEqualTo(Duration.ofSeconds(1));
        assertThat(group.dataSourceNames()).containsExactly("write_ds", "read_ds_0", "read_ds_1");
        // A session asks for the group by its name, or (one group: every table goes there) by databaseName.
        assertThat(config.readWriteGroupFor("readwrite_ds")).isSameAs(group);
        assertThat(config.readWriteGroupFor("readwrite_splitting_db")).isSameAs(group);
        assertThat(config.readWriteGroupFor("other")).isNull();
        assertThat(config.readWriteGroupFor(null)).isNull();
    }

    @Test
    void readsEveryKeyOfShardingSphereAndSluice() {
        ProxyConfig config = parse(DATA_SOURCES.replace("rules:", """
                  q0:
                    url: jdbc:mysql://127.0.0.1:3309/app
                    username: root
                  q1:
                    url: jdbc:mysql://127.0.0.1:3310/app
                    username: root
                  q2:
                    url: jdbc:mysql://127.0.0.1:3311/app
                    username: root
                rules:""") + """
                  dataSources:
                    app:
                      writeDataSourceName: p
                      readDataSourceNames: [r0, r1]
                      transactionalReadQueryStrategy: PRIMARY
                      loadBalancerName: weighted
                      maxReplicationLagMilliseconds: 2500
                      causalReads: global
                      causalReadsTimeoutMilliseconds: 300
                    other:
                      writeDataSourceName: q0
                      readDataSourceNames: "q2, q1"
                      causalReads: NONE
                  loadBalancers:
                    weighted:
                      type: WEIGHT
                      props:
                        r0: 2
                        r1: 0.5
                """);
        ReadWriteSplittingConfig app = config.readWriteGroupFor("app");
        assertThat(app.transactionalReadQueryStrategy()).isEqualTo(TransactionalReadQueryStrategy.PRIMARY);
        assertThat(app.transactionalReadQueryStrategy().readOnlyTransactionsOnReplicas()).isFalse();
        assertThat(app.loadBalancer().type()).isEqualTo(ReadLoadBalancer.Type.WEIGHT);
        assertThat(app.loadBalancer().weight("r0")).isEqualTo(2.0);
        assertThat(app.loadBalancer().weight("r1")).isEqualTo(0.5);
        assertThat(app.maxReplicationLag()).isEqualTo(Duration.ofMillis(2500));
        assertThat(app.causalReads()).isEqualTo(CausalReads.GLOBAL);
        assertThat(app.causalReadsTimeout()).isEqualTo(Duration.ofMillis(300));
        ReadWriteSplittingConfig other = config.readWriteGroupFor("other");
        assertThat(other.readDataSourceNames()).containsExactly("q2", "q1");
        assertThat(other.loadBalancer()).isEqualTo(ReadLoadBalancer.DEFAULT);
        assertThat(other.causalReads()).isEqualTo(CausalReads.NONE);
        assertThat(config.readWriteGroupFor(null)).isNull();
    }

    /** Decision 110: a replica's connections are read-only, so no data source is a replica and a primary. */
    @Test
    void refusesADataSourceThatIsAReplicaOfOneGroupAndThePrimaryOfAnother() {
        assertThatThrownBy(() -> parse(DATA_SOURCES + """
                  dataSources:
                    app:
                      writeDataSourceName: p
                      readDataSourceNames: [r0]
                    other:
                      writeDataSourceName: r0
                      readDataSourceNames: [r1]
                """)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("the data source r0 is a replica of the read/write splitting group app and the"
                        + " primary of other");
    }

    @Test
    void acceptsShardingSphere55sDataSourceGroups() {
        ProxyConfig config = parse(DATA_SOURCES + """
                  dataSourceGroups:
                    app:
                      writeDataSourceName: p
                      readDataSourceNames: [r0]
                """);
        assertThat(config.readWriteGroupFor("app").readDataSourceNames()).containsExactly("r0");
    }

    /** Sluice's keys of issue #40: the primary found by read_only, how long writes wait for it, the accounts. */
    @Test
    void readsPrimaryDiscoveryAndTheSwitchoverAccounts() {
        ProxyConfig config = parse(DATA_SOURCES + """
                  dataSources:
                    app:
                      readDataSourceNames: [p, r0, r1]
                      primaryDiscovery: READ_ONLY
                      primaryWaitMilliseconds: 2500
                      administration: {username: sluice_admin, password: s3cret}
                      replication: {username: repl, password: r3pl}
                """);
        ReadWriteSplittingConfig group = config.readWriteSplitting().get(0);
        assertThat(group.followsPrimary()).isTrue();
        assertThat(group.writeDataSourceName()).isEqualTo("p"); // the first listed, preferred at start
        assertThat(group.readDataSourceNames()).containsExactly("r0", "r1");
        assertThat(group.primaryWait()).isEqualTo(Duration.ofMillis(2500));
        assertThat(group.administration()).isEqualTo(new ServerAccount("sluice_admin", "s3cret"));
        assertThat(group.replicationAccount()).isEqualTo(new ServerAccount("repl", "r3pl"));
        assertThat(group.administration().toString()).doesNotContain("s3cret");

        ReadWriteSplittingConfig fixed = parse(DATA_SOURCES + """
                  dataSources:
                    app: {writeDataSourceName: p, readDataSourceNames: [r0]}
                """).readWriteSplitting().get(0);
        assertThat(fixed.primaryDiscovery()).isEqualTo(PrimaryDiscovery.NONE);
        assertThat(fixed.primaryWait()).isEqualTo(ReadWriteSplittingConfig.DEFAULT_PRIMARY_WAIT);
        assertThat(fixed.administration()).isNull();
        assertThat(fixed.autoFailover().enabled()).isFalse();
        assertThatThrownBy(() -> parse(DATA_SOURCES + """
                  dataSources:
                    app: {readDataSourceNames: [r0]}
                """)).isInstanceOf(ConfigException.class).hasMessageContaining("writeDataSourceName");
    }

    @Test
    void readsAutoFailoverOnlyWithDiscoveryAndAnAdministrationAccount() {
        ReadWriteSplittingConfig group = parse(DATA_SOURCES + """
                  dataSources:
                    app:
                      readDataSourceNames: [p, r0, r1]
                      primaryDiscovery: READ_ONLY
                      administration: {username: sluice_admin, password: s3cret}
                      autoFailover: true
                      failoverAfterChecks: 5
                      failoverApplyTimeoutMilliseconds: 3000
                      failoverDryRun: true
                """).readWriteSplitting().get(0);
        assertThat(group.autoFailover()).isEqualTo(new AutoFailover(true, 5, Duration.ofSeconds(3), true));
        ReadWriteSplittingConfig defaults = parse(DATA_SOURCES + """
                  dataSources:
                    app:
                      readDataSourceNames: [p, r0, r1]
                      primaryDiscovery: READ_ONLY
                      administration: {username: sluice_admin, password: s3cret}
                      autoFailover: true
                """).readWriteSplitting().get(0);
        assertThat(defaults.autoFailover()).isEqualTo(AutoFailover.on());
        assertThatThrownBy(() -> parse(DATA_SOURCES + """
                  dataSources:
                    app: {writeDataSourceName: p, readDataSourceNames: [r0], autoFailover: true,
                          administration: {username: a, password: b}}
                """)).isInstanceOf(ConfigException.class).hasMessageContaining("autoFailover: true (expected: with"
                + " primaryDiscovery: READ_ONLY)");
        assertThatThrownBy(() -> parse(DATA_SOURCES + """
                  dataSources:
                    app: {readDataSourceNames: [p, r0], primaryDiscovery: READ_ONLY, autoFailover: true}
                """)).isInstanceOf(ConfigException.class).hasMessageContaining("with an administration account");
        assertThatThrownBy(() -> parse(DATA_SOURCES + """
                  dataSources:
                    app: {readDataSourceNames: [p, r0], primaryDiscovery: READ_ONLY, failoverAfterChecks: 0}
                """)).isInstanceOf(ConfigException.class).hasMessageContaining("failoverAfterChecks: 0");
    }

    @Test
    void refusesUnknownKeysNamingTheKeysItReads() {
        assertRefused(DATA_SOURCES + """
                  dataSources:
                    app:
                      writeDataSourceName: p
                      readDataSourceNames: [r0]
                      maxReplicationLag: 10
                """, "config.yaml line 17: rules[0].dataSources.app.maxReplicationLag: unknown key (expected: one"
                + " of writeDataSourceName, readDataSourceNames, transactionalReadQueryStrategy, loadBalancerName,"
                + " maxReplicationLagMilliseconds, causalReads, causalReadsTimeoutMilliseconds, primaryDiscovery,"
                + " primaryWaitMilliseconds, administration, replication, autoFailover, failoverAfterChecks,"
                + " failoverApplyTimeoutMilliseconds, failoverDryRun)");
        assertRefused(DATA_SOURCES + """
                  dataSource:
                    app: {}
                """, "config.yaml line 13: rules[0].dataSource: unknown key (expected: one of loadBalancers,"
                + " dataSources, dataSourceGroups)");
        assertRefused(DATA_SOURCES + """
                  dataSources:
                    app: {writeDataSourceName: p, readDataSourceNames: [r0], loadBalancerName: lb}
                  loadBalancers:
                    lb: {type: RANDOM, weight: 2}
                """, "config.yaml line 16: rules[0].loadBalancers.lb.weight: unknown key (expected: one of type,"
                + " props)");
    }

    @Test
    void refusesReferencesToWhatTheFileDoesNotDefine() {
        assertRefused(DATA_SOURCES + """
                  dataSources:
                    app:
                      writeDataSourceName: primary
                      readDataSourceNames: [r0]
                """, "config.yaml line 15: rules[0].dataSources.app.writeDataSourceName: \"primary\" (expected:"
                + " one of the dataSources: p, r0, r1)");
        assertRefused(DATA_SOURCES + """
                  dataSources:
                    app:
                      writeDataSourceName: p
                      readDataSourceNames:
                        - r0
                        - r2
                """, "config.yaml line 17: rules[0].dataSources.app.readDataSourceNames: \"r2\" (expected: one of"
                + " the dataSources: p, r0, r1)");
        assertRefused(DATA_SOURCES + """
                  dataSources:
                    app:
                      writeDataSourceName: p
                      readDataSourceNames: [r0]
                      loadBalancerName: random
                """, "config.yaml line 17: rules[0].dataSources.app.loadBalancerName: \"random\" (expected: a load"
                + " balancer defined under loadBalancers)");
        assertRefused(DATA_SOURCES + """
                  dataSources:
                    app: {writeDataSourceName: p, readDataSourceNames: [r0], loadBalancerName: w}
                  loadBalancers:
                    w: {type: WEIGHT, props: {r1: 1}}
                """, "config.yaml line 14: rules[0].dataSources.app.loadBalancerName: \"w\" weighs \"r1\" (expected:"
                + " weights of this group's readDataSourceNames [r0])");
    }

    @Test
    void refusesGroupsThatCannotWork() {
        assertRefused(DATA_SOURCES + """
                  dataSources:
                    app:
                      writeDataSourceName: p
                      readDataSourceNames: [r0, p]
                """, "config.yaml line 16: rules[0].dataSources.app.readDataSourceNames: \"p\" (expected: replicas"
                + " only; it is the writeDataSourceName)");
        assertRefused(DATA_SOURCES + """
                  dataSources:
                    app:
                      writeDataSourceName: p
                """, "config.yaml line 14: rules[0].dataSources.app.readDataSourceNames: missing (expected: the"
                + " replicas' data source names, such as [ds_1, ds_2])");
        assertRefused(DATA_SOURCES + """
                  dataSources:
                    app:
                      writeDataSourceName: p
                      readDataSourceNames: [r0]
                      causalReads: ALWAYS
                      causalReadsTimeoutMilliseconds: 0
                """, "config.yaml line 17: rules[0].dataSources.app.causalReads: \"ALWAYS\" (expected: one of NONE,"
                + " LOCAL, GLOBAL)");
        assertRefused(DATA_SOURCES + """
                  dataSources:
                    app:
                      writeDataSourceName: p
                      readDataSourceNames: [r0]
                      causalReadsTimeoutMilliseconds: 0
                """, "config.yaml line 17: rules[0].dataSources.app.causalReadsTimeoutMilliseconds: PT0S (expected:"
                + " above 0)");
        assertRefused(DATA_SOURCES + """
                  loadBalancers:
                    lb: {type: LEAST_LAG}
                  dataSources:
                    app: {writeDataSourceName: p, readDataSourceNames: [r0]}
                """, "config.yaml line 14: rules[0].loadBalancers.lb.type: \"LEAST_LAG\" (expected: one of"
                + " ROUND_ROBIN, RANDOM, WEIGHT)");
        assertRefused(DATA_SOURCES + """
                  loadBalancers: {}
                """, "config.yaml line 12: rules[0].dataSources: missing (expected: at least one group, such as"
                + " readwrite_ds: {writeDataSourceName: ds_0, readDataSourceNames: [ds_1]})");
    }

    @Test
    void refusesOtherRulesAndGroupsTwice() {
        assertRefused(DATA_SOURCES.replace("!READWRITE_SPLITTING", "!SHARDING") + """
                  tables: {}
                """, "config.yaml line 12: rules[0]: !SHARDING (expected: !READWRITE_SPLITTING or"
                + " !QUERY_RULES; Sluice does not rewrite SQL, so sharding, encryption and the other ShardingSphere rules are not supported)");
        assertRefused(DATA_SOURCES + """
                  dataSources:
                    app: {writeDataSourceName: p, readDataSourceNames: [r0]}
                - !READWRITE_SPLITTING
                  dataSources:
                    app: {writeDataSourceName: p, readDataSourceNames: [r1]}
                """, "config.yaml: rules: the read/write splitting group app is defined twice (expected: each"
                + " group once)");
    }

    @Test
    void groupsBuiltInCode() {
        ProxyConfig config = ProxyConfig.builder().dataSource("p", "jdbc:mysql://h:1/a", "u", "")
                .dataSource("r", "jdbc:mysql://h:2/a", "u", "")
                .readWriteSplitting(ReadWriteSplittingConfig.of("app", "p", List.of("r"))).build();
        assertThat(config.readWriteGroupFor("app").replicaEligibility()).isNotNull();
        assertThat(config.withPooling(PoolingConfig.defaults()).readWriteSplitting()).hasSize(1);
        assertThatThrownBy(() -> ProxyConfig.builder().dataSource("p", "jdbc:mysql://h:1/a", "u", "")
                .readWriteSplitting(ReadWriteSplittingConfig.of("app", "p", List.of("x"))).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("names the data source x");
    }
}
