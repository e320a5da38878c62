package io.sluice.rules;

import io.netty.util.concurrent.EventExecutor;
import io.sluice.config.QueryRuleConfig;
import io.sluice.sql.SqlDigest;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The running query rules (issue #41 item 2): the current {@link RuleSet}, replaced whole by a reload, and each event
 * loop's cache of decisions. Sessions read the set with one volatile read per statement; with no rules configured
 * that read is all a statement pays.
 */
public final class QueryRules {

    private final Map<EventExecutor, LoopDecisions> loops = new ConcurrentHashMap<>();
    private volatile RuleSet current = RuleSet.EMPTY;
    private int versions;

    /** Rules from {@code rules}, in order. */
    public QueryRules(List<QueryRuleConfig> rules) {
        update(rules);
    }

    /**
     * Makes {@code rules} the running set, from the next statement of every session. A rule whose configuration did
     * not change keeps its counters.
     */
    public synchronized void update(List<QueryRuleConfig> rules) {
        Map<QueryRuleConfig, QueryRule.Counters> kept = new HashMap<>();
        for (QueryRule rule : current.rules()) {
            kept.put(rule.config(), rule.counters());
        }
        QueryRule[] made = new QueryRule[rules.size()];
        for (int i = 0; i < made.length; i++) {
            QueryRuleConfig config = rules.get(i);
            QueryRule.Counters counters = kept.get(config);
            made[i] = new QueryRule(config, counters != null ? counters : new QueryRule.Counters());
        }
        current = new RuleSet(++versions, made);
    }

    RuleSet current() {
        return current;
    }

    /** The running rules, in order. */
    public List<QueryRule> rules() {
        return current.rules();
    }

    /** A new session's view of the rules, on its event loop; {@code client} is its address ({@code null}: none). */
    public SessionRules forSession(EventExecutor loop, InetAddress client) {
        return new SessionRules(this, loops.computeIfAbsent(loop, l -> new LoopDecisions()), client);
    }

    /**
     * What the running rules would do with {@code sql} from {@code user} on {@code schema} from {@code client}
     * ({@code GET /api/rules/explain}).
     */
    public Explanation explain(String sql, String user, String schema, InetAddress client) {
        RuleSet set = current;
        SqlDigest digest = SqlDigest.of(sql);
        int index = set.match(digest, user, schema, client);
        return new Explanation(digest, index < 0 ? null : set.rule(index), index);
    }

    /**
     * The answer of {@link #explain}.
     *
     * @param digest the statement's digest
     * @param rule the rule that would act, or {@code null}: none, the statement runs as it would without rules
     * @param position the rule's place in the list, from 0; -1 with none
     */
    public record Explanation(SqlDigest digest, QueryRule rule, int position) {
    }
}
