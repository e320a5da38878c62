package io.sluice.config;

import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.config.QueryRuleConfig.Block;
import io.sluice.config.QueryRuleConfig.StatementClass;
import io.sluice.config.QueryRuleConfig.Target;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.PatternSyntaxException;

/**
 * Reads a {@code !QUERY_RULES} item of config.yaml's {@code rules:} list (issue #41, decision 165):
 *
 * <pre>
 * - !QUERY_RULES
 *   rules:
 *     - name: no-drop
 *       statementClass: DDL
 *       user: app
 *       block: {code: 1142, message: 'DDL through the app account is refused by rule no-drop'}
 * </pre>
 *
 * Every refusal names the rule as well as the key and the line, so that an operator who edits a long list during an
 * incident finds the rule at once.
 */
final class QueryRuleReader {

    static final String QUERY_RULES = "!QUERY_RULES";
    private final Set<String> names = new HashSet<>();
    /** The file's allow-list ({@code allowList:} of one item), or {@code null}: none. */
    private AllowListConfig allowList;

    /** The rules of one {@code !QUERY_RULES} item, in file order; its {@code allowList} goes to {@link #allowList}. */
    List<QueryRuleConfig> rules(YamlSection section) {
        List<QueryRuleConfig> rules = section.list("rules", "a list of rules, such as - {name: no-drop,"
                + " statementClass: DDL, block: {code: 1142}}", this::rule);
        if (section.has("allowList")) {
            if (allowList != null) {
                section.refuse("allowList", "a second allow-list (expected: one allowList in the file)");
            } else {
                allowList = section.section("allowList", "a mapping such as {mode: DRY_RUN, users: {app: [...]}}",
                        null, AllowListReader::read);
            }
        }
        section.done();
        return rules;
    }

    /** The file's allow-list, or {@code null}: none. */
    AllowListConfig allowList() {
        return allowList;
    }

    private QueryRuleConfig rule(YamlSection rule) {
        String name = rule.requiredString("name", "the rule's name, such as no-report-on-primary");
        String label = "rule " + name + ": ";
        if (name != null && !names.add(name)) {
            rule.refuse("name", label + "the name is used twice (expected: each rule name once)");
        }
        String digest = rule.string("digest", null);
        if (digest != null && !digest.matches("[0-9a-fA-F]{16}")) {
            rule.refuse("digest", label + digest + " (expected: 16 hex digits, as /api/digests shows a digest)");
            digest = null;
        }
        String pattern = rule.string("pattern", null);
        if (pattern != null) {
            try {
                QueryRuleConfig.compile(pattern);
            } catch (IllegalArgumentException e) {
                PatternSyntaxException syntax = (PatternSyntaxException) e.getCause();
                rule.refuse("pattern", label + "'" + pattern + "' (expected: a Java regular expression; "
                        + syntax.getDescription() + " at index " + syntax.getIndex() + ")");
                pattern = null;
            }
        }
        List<String> users = rule.strings("user", List.of());
        List<String> schemas = rule.strings("schema", List.of());
        List<String> networks = new ArrayList<>();
        for (String network : rule.strings("network", List.of())) {
            if (QueryRuleConfig.isNetwork(network.strip())) {
                networks.add(network.strip());
            } else {
                rule.refuse("network", label + network + " (expected: an address or a CIDR block such as"
                        + " 10.0.0.0/8 or fd00::/8)");
            }
        }
        List<StatementClass> classes = new ArrayList<>();
        for (String each : rule.strings("statementClass", List.of())) {
            StatementClass known = StatementClass.of(each);
            if (known == null) {
                rule.refuse("statementClass", label + each + " (expected: one of "
                        + Arrays.toString(StatementClass.values()) + ")");
            } else {
                classes.add(known);
            }
        }
        Target route = null;
        String routeGroup = null;
        if (rule.has("route") && !rule.isScalar("route")) {
            // another group, named (decision 194): a mapping, so that a data source called primary stays a name
            routeGroup = rule.section("route", "a target such as PRIMARY, REPLICA or {group: reports_rw}", null,
                    target -> {
                        String named = target.requiredString("group",
                                "the read/write splitting group or data source to run the statements on");
                        target.done();
                        return named;
                    });
            route = Target.GROUP;
        } else if (rule.has("route")) {
            route = rule.oneOf("route", Target.class, null);
            if (route == Target.GROUP) {
                rule.refuse("route", label + "GROUP (expected: PRIMARY, REPLICA, or {group: NAME} for another"
                        + " group)");
            }
        }
        Block block = rule.section("block", "a mapping such as {code: 1142, sqlState: 42000, message: '...'}",
                null, section -> block(section, name));
        long timeout = rule.milliseconds(Action.TIMEOUT.key(), -1);
        long maxRows = rule.integer(Action.MAX_ROWS.key(), -1);
        long concurrency = rule.integer(Action.MAX_CONCURRENCY.key(), -1);
        long perSecond = rule.integer(Action.MAX_PER_SECOND.key(), -1);
        long maxWait = rule.milliseconds("maxWaitMilliseconds", QueryRuleConfig.DEFAULT_MAX_WAIT);
        String mirror = rule.string(Action.MIRROR.key(), null);
        Action action = null;
        String expected = "exactly one of route, block, timeoutMilliseconds, maxRows, maxConcurrency,"
                + " maxPerSecond, mirror";
        for (Action each : Action.values()) {
            if (!rule.has(each.key())) {
                continue;
            }
            if (action != null) {
                rule.refuse(each.key(), label + "a second action beside " + action.key() + " (expected: "
                        + expected + ")");
            } else {
                action = each;
            }
        }
        if (action == null) {
            rule.missing("route", "an action for rule " + name + ": " + expected);
        }
        if (action == Action.TIMEOUT && timeout < 1) {
            rule.refuse(Action.TIMEOUT.key(), label + timeout + " (expected: at least 1 millisecond)");
        }
        Action chosen = action;
        if (action == Action.MAX_PER_SECOND && perSecond < 1) {
            rule.refuse(Action.MAX_PER_SECOND.key(), label + perSecond + " (expected: at least 1 statement a second)");
        }
        if (action == Action.MAX_CONCURRENCY && concurrency < 1) {
            rule.refuse(Action.MAX_CONCURRENCY.key(), label + concurrency + " (expected: at least 1 statement at once)");
        }
        if (action == Action.MAX_ROWS && maxRows < 1) {
            rule.refuse(Action.MAX_ROWS.key(), label + maxRows + " (expected: at least 1 row)");
        }
        boolean waits = action == Action.MAX_PER_SECOND || action == Action.MAX_CONCURRENCY;
        if (rule.has("maxWaitMilliseconds") && (!waits || maxWait < 0 || maxWait > 60_000)) {
            rule.refuse("maxWaitMilliseconds", label + maxWait + " (expected: 0..60000, with maxPerSecond or"
                    + " maxConcurrency)");
        }
        long limit = action == Action.TIMEOUT ? timeout : action == Action.MAX_PER_SECOND ? perSecond
                : action == Action.MAX_CONCURRENCY ? concurrency : action == Action.MAX_ROWS ? maxRows : 0;
        String target = action == Action.MIRROR ? mirror : null;
        String matchedDigest = digest == null ? null : digest.toLowerCase(java.util.Locale.ROOT);
        String matchedPattern = pattern;
        Target routed = route;
        String group = routeGroup;
        return rule.done(() -> new QueryRuleConfig(name, matchedDigest, matchedPattern, users, schemas, networks,
                classes, chosen, routed, block, limit, target, maxWait, group));
    }

    private static Block block(YamlSection section, String rule) {
        int code = section.integer("code", Block.DEFAULT_CODE);
        String sqlState = section.string("sqlState", Block.DEFAULT_SQL_STATE);
        String message = section.string("message", "Statement refused by query rule " + rule);
        if (!message.contains(rule)) {
            message = message + " (query rule " + rule + ")";
        }
        String text = message;
        return section.done(() -> new Block(code, sqlState, text));
    }
}
