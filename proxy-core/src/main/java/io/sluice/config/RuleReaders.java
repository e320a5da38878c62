package io.sluice.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads config.yaml's {@code rules:} list. Sluice runs one kind of ShardingSphere rule, read/write splitting, in
 * ShardingSphere 5.4's format (and 5.5's, which renamed {@code dataSources} to {@code dataSourceGroups}):
 *
 * <pre>
 * rules:
 * - !READWRITE_SPLITTING
 *   dataSources:
 *     readwrite_ds:
 *       writeDataSourceName: write_ds
 *       readDataSourceNames: [read_ds_0, read_ds_1]
 *       transactionalReadQueryStrategy: PRIMARY      # PRIMARY, FIXED, DYNAMIC (the default)
 *       loadBalancerName: random
 *       maxReplicationLagMilliseconds: 10000         # Sluice's own keys from here
 *       causalReads: LOCAL                           # NONE, LOCAL (the default), GLOBAL
 *       causalReadsTimeoutMilliseconds: 1000
 *   loadBalancers:
 *     random:
 *       type: RANDOM                                 # ROUND_ROBIN, RANDOM, WEIGHT
 * </pre>
 *
 * Other rules ({@code !SHARDING}, {@code !ENCRYPT}...) are refused: Sluice does not rewrite SQL, and accepting them to
 * ignore them would send queries where the file's author did not intend. References are checked here, at the line
 * of the key that makes them: a data source that {@code dataSources} does not define, a load balancer that
 * {@code loadBalancers} does not.
 */
final class RuleReaders {

    static final String READWRITE_SPLITTING = "!READWRITE_SPLITTING";

    private final Set<String> dataSourceNames;
    private final SectionReaders sections;
    /** One for the file: rule names are unique across its {@code !QUERY_RULES} items. */
    private final QueryRuleReader queryRuleReader = new QueryRuleReader();

    /**
     * @param dataSourceNames the names of the file's {@code dataSources}, which groups may refer to
     * @param sections the readers of accounts ({@code administration}, {@code replication}) and their secret files
     */
    RuleReaders(Set<String> dataSourceNames, SectionReaders sections) {
        this.dataSourceNames = dataSourceNames;
        this.sections = sections;
    }

    /** The allow-list of the file's {@code !QUERY_RULES} items, or {@code null}: none. */
    AllowListConfig allowList() {
        return queryRuleReader.allowList();
    }

    /**
     * One item of {@code rules:}: the groups of a {@code !READWRITE_SPLITTING} rule, in file order; a
     * {@code !QUERY_RULES} item adds its rules to {@code queryRules} and has no groups.
     */
    List<ReadWriteSplittingConfig> rule(YamlSection rule, List<QueryRuleConfig> queryRules) {
        String tag = rule.tag();
        if (QueryRuleReader.QUERY_RULES.equals(tag)) {
            queryRules.addAll(queryRuleReader.rules(rule));
            return List.of();
        }
        if (!READWRITE_SPLITTING.equals(tag)) {
            throw rule.refusal((tag == null ? "a rule without a type" : tag)
                    + " (expected: " + READWRITE_SPLITTING + " or " + QueryRuleReader.QUERY_RULES
                    + "; Sluice does not rewrite SQL, so sharding, encryption"
                    + " and the other ShardingSphere rules are not supported)");
        }
        Map<String, ReadLoadBalancer> balancers = rule.namedSections("loadBalancers",
                "a mapping of load balancer names, such as random: {type: RANDOM}", RuleReaders::loadBalancer);
        Map<String, ReadLoadBalancer> known = balancers == null ? Map.of() : balancers;
        String shape = "a mapping of group names, such as readwrite_ds: {writeDataSourceName: ds_0,"
                + " readDataSourceNames: [ds_1]}";
        Map<String, ReadWriteSplittingConfig> groups = rule.namedSections("dataSources", shape,
                (name, group) -> group(name, group, known));
        Map<String, ReadWriteSplittingConfig> renamed = rule.namedSections("dataSourceGroups", shape,
                (name, group) -> group(name, group, known));
        if (groups != null && renamed != null) {
            rule.refuse("dataSourceGroups", "(expected: dataSources or dataSourceGroups, not both)");
        } else if (groups == null && renamed == null) {
            rule.missing("dataSources", "at least one group, such as readwrite_ds: {writeDataSourceName: ds_0,"
                    + " readDataSourceNames: [ds_1]}");
        }
        rule.done();
        return new ArrayList<>((groups != null ? groups : renamed).values());
    }

    private ReadWriteSplittingConfig group(String name, YamlSection group, Map<String, ReadLoadBalancer> balancers) {
        // Required unless primaryDiscovery is on (read below): then it only names the server preferred at start.
        String write = group.string("writeDataSourceName", null);
        List<String> reads = group.strings("readDataSourceNames", null);
        TransactionalReadQueryStrategy strategy = group.oneOf("transactionalReadQueryStrategy",
                TransactionalReadQueryStrategy.class,
                ReadWriteSplittingConfig.DEFAULT_TRANSACTIONAL_READ_QUERY_STRATEGY);
        String balancerName = group.string("loadBalancerName", null);
        long lag = group.milliseconds("maxReplicationLagMilliseconds",
                ReadWriteSplittingConfig.DEFAULT_MAX_REPLICATION_LAG.toMillis());
        CausalReads causalReads = group.oneOf("causalReads", CausalReads.class,
                ReadWriteSplittingConfig.DEFAULT_CAUSAL_READS);
        long timeout = group.milliseconds("causalReadsTimeoutMilliseconds",
                ReadWriteSplittingConfig.DEFAULT_CAUSAL_READS_TIMEOUT.toMillis());
        PrimaryDiscovery discovery = group.oneOf("primaryDiscovery", PrimaryDiscovery.class, PrimaryDiscovery.NONE);
        long primaryWait = group.milliseconds("primaryWaitMilliseconds",
                ReadWriteSplittingConfig.DEFAULT_PRIMARY_WAIT.toMillis());
        ServerAccount administration = group.section("administration", "a mapping such as {username: sluice_admin,"
                + " passwordFile: admin.secret}", null, sections::account);
        ServerAccount replication = group.section("replication", "a mapping such as {username: repl,"
                + " passwordFile: repl.secret}", null, sections::account);
        boolean failover = group.flag("autoFailover", false);
        int afterChecks = group.integer("failoverAfterChecks", AutoFailover.DEFAULT_AFTER_CHECKS);
        long applyTimeout = group.milliseconds("failoverApplyTimeoutMilliseconds",
                AutoFailover.DEFAULT_APPLY_TIMEOUT.toMillis());
        boolean failoverDryRun = group.flag("failoverDryRun", false);
        if (afterChecks < 1) {
            group.refuse("failoverAfterChecks", afterChecks + " (expected: 1 or more)");
        }
        if (failover && discovery != PrimaryDiscovery.READ_ONLY) {
            group.refuse("autoFailover", "true (expected: with primaryDiscovery: READ_ONLY)");
        } else if (failover && administration == null) {
            group.refuse("autoFailover", "true (expected: with an administration account to promote with)");
        }
        if (write == null && discovery == PrimaryDiscovery.NONE) {
            group.missing("writeDataSourceName", "the primary's data source name");
        }
        if (write != null && !dataSourceNames.contains(write)) {
            group.refuse("writeDataSourceName", unknownDataSource(write));
        }
        List<String> readNames = new ArrayList<>();
        if (reads == null) {
            group.missing("readDataSourceNames", "the replicas' data source names, such as [ds_1, ds_2]");
        } else {
            for (String each : reads) {
                for (String read : each.split(",")) { // ShardingSphere also takes "ds_1,ds_2" as one string
                    if (!read.isBlank()) {
                        readNames.add(read.strip());
                    }
                }
            }
            String unknown = readNames.stream().filter(read -> !dataSourceNames.contains(read)).findFirst()
                    .orElse(null);
            if (unknown != null) {
                group.refuse("readDataSourceNames", unknownDataSource(unknown));
            }
        }
        ReadLoadBalancer balancer = ReadLoadBalancer.DEFAULT;
        if (balancerName != null) {
            balancer = balancers.get(balancerName);
            if (balancer == null) {
                group.refuse("loadBalancerName", "\"" + balancerName + "\" (expected: "
                        + (balancers.isEmpty() ? "a load balancer defined under loadBalancers"
                        : "one of the loadBalancers: " + String.join(", ", balancers.keySet())) + ")");
            }
        }
        ReadLoadBalancer chosen = balancer;
        if (write == null && discovery == PrimaryDiscovery.READ_ONLY && !readNames.isEmpty()) {
            write = readNames.remove(0); // preferred at start: the first server listed
        }
        String preferred = write;
        return group.done(() -> new ReadWriteSplittingConfig(name, preferred, readNames, strategy, chosen,
                Duration.ofMillis(lag), causalReads, Duration.ofMillis(timeout), discovery,
                Duration.ofMillis(primaryWait), administration, replication,
                new AutoFailover(failover, afterChecks, Duration.ofMillis(applyTimeout), failoverDryRun)));
    }

    private String unknownDataSource(String name) {
        return "\"" + name + "\" (expected: one of the dataSources: " + String.join(", ", dataSourceNames) + ")";
    }

    private static ReadLoadBalancer loadBalancer(String name, YamlSection section) {
        String typeName = section.requiredString("type", "ROUND_ROBIN, RANDOM or WEIGHT");
        Map<String, String> props = section.stringMap("props");
        ReadLoadBalancer.Type type = typeName == null ? null : ReadLoadBalancer.Type.of(typeName);
        if (typeName != null && type == null) {
            section.refuse("type", "\"" + typeName + "\" (expected: one of ROUND_ROBIN, RANDOM, WEIGHT)");
        }
        Map<String, String> kept = new LinkedHashMap<>(props);
        return section.done(() -> new ReadLoadBalancer(name, type, kept));
    }
}
