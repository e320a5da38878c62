package io.sluice.rules;

import io.netty.util.concurrent.EventExecutor;
import io.sluice.config.AllowListConfig;
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
        this(rules, null);
    }

    /** Rules from {@code rules}, in order, and the allow-list {@code allowList} ({@code null}: none). */
    public QueryRules(List<QueryRuleConfig> rules, AllowListConfig allowList) {
        update(rules, allowList);
    }

    /**
     * Makes {@code rules} the running set, from the next statement of every session. A rule whose configuration did
     * not change keeps its counters.
     */
    public synchronized void update(List<QueryRuleConfig> rules) {
        update(rules, allowListConfig());
    }

    /**
     * Makes {@code rules} and {@code allowList} ({@code null}: none) the running set, from the next statement of every
     * session. A rule whose configuration did not change keeps its counters; the allow-list's counts start again.
     */
    public synchronized void update(List<QueryRuleConfig> rules, AllowListConfig allowList) {
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
        current = new RuleSet(++versions, made, allowList == null ? null : new AllowList(allowList));
    }

    /** The running allow-list's configuration, or {@code null}: none. */
    public AllowListConfig allowListConfig() {
        AllowList list = current.allowList();
        return list == null ? null : list.config();
    }

    /**
     * The statement shapes the running allow-list found outside itself since it started (a reload starts it again):
     * in {@code DRY_RUN} those it would have refused, in {@code ENFORCE} those it refused, with how often.
     */
    public List<OutsideShape> outsideAllowList() {
        AllowList list = current.allowList();
        if (list == null) {
            return List.of();
        }
        return list.shapes().stream().map(s -> new OutsideShape(s.user, s.digest, s.text, s.count())).toList();
    }

    /**
     * What the running rules and allow-list decide for a statement, with no session: for {@code sluice-ctl rules
     * check}, which tries a rule set against a capture offline.
     *
     * @param digest the statement's digest
     * @param user the client user
     * @param schema the default schema, or {@code null}
     */
    public Verdict judge(SqlDigest digest, String user, String schema) {
        RuleSet set = current;
        int decision = set.match(digest, user, schema, null);
        if (decision >= RuleSet.OUTSIDE) {
            AllowList.Outside shape = set.allowList().shape(decision - RuleSet.OUTSIDE);
            QueryRule rule = shape.ruleIndex < 0 ? null : set.rule(shape.ruleIndex);
            return new Verdict(set.allowList().enforces() ? shape.refusal : rule, true);
        }
        return new Verdict(decision < 0 ? null : set.rule(decision), false);
    }

    /**
     * The answer of {@link #judge}.
     *
     * @param rule the rule that acts on the statement ({@code ENFORCE}: the allow-list's refusal), or {@code null}
     * @param outsideAllowList whether the statement's digest is outside its user's allow-list
     */
    public record Verdict(QueryRule rule, boolean outsideAllowList) {
    }

    /**
     * A statement shape outside the allow-list.
     *
     * @param user the client user
     * @param digest its digest hash
     * @param digestText its digest text
     * @param count the statements of it since the allow-list started
     */
    public record OutsideShape(String user, String digest, String digestText, long count) {
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
        if (index >= RuleSet.OUTSIDE) {
            AllowList.Outside shape = set.allowList().shape(index - RuleSet.OUTSIDE);
            if (set.allowList().enforces()) {
                return new Explanation(digest, shape.refusal, set.rules().size());
            }
            index = shape.ruleIndex;
        }
        return new Explanation(digest, index < 0 ? null : set.rule(index), index);
    }

    /**
     * The answer of {@link #explain}.
     *
     * @param digest the statement's digest
     * @param rule the rule that would act, or {@code null}: none, the statement runs as it would without rules
     * @param position the rule's place in the list, from 0; -1 with none; the list's size for the allow-list's
     *     refusal of a statement outside it
     */
    public record Explanation(SqlDigest digest, QueryRule rule, int position) {
    }
}
