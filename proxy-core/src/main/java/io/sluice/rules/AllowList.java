package io.sluice.rules;

import io.sluice.config.AllowListConfig;
import io.sluice.config.QueryRuleConfig;
import io.sluice.sql.SqlDigest;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The running allow-list of one rule set (issue #41 item 3, decisions 188 and 189): which digests each listed user may
 * run, and the statement shapes it found outside the list, each once per user, digest and acting rule. A decision
 * outside the list is cached as that shape's number (see {@link RuleSet#OUTSIDE}), so that a known shape, inside or
 * outside, costs no more than the rules' lookup; the counting happens on the shape's entry.
 *
 * <p>In {@code ENFORCE} each shape's entry is a {@code block} rule of its own, whose ERR names the allow-list, the
 * user and the digest; in {@code DRY_RUN} the statement runs as the rules say, and its shape's entry counts it and
 * logs it at most once a minute.
 */
final class AllowList {

    /** Distinct user × digest shapes outside the list one rule set keeps; further ones share one entry. */
    static final int MAX_SHAPES = 10_000;
    /** ER_NOT_ALLOWED_COMMAND, as a {@code block} rule's default and ProxySQL's firewall (decision 189). */
    static final int REFUSAL_CODE = 1148;
    private static final Logger log = LoggerFactory.getLogger(AllowList.class);
    private static final long LOG_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);
    private static final int LOG_LINES_PER_SECOND = 20;
    private final AtomicLong logSecond = new AtomicLong();
    private final AtomicInteger logLines = new AtomicInteger();

    private final AllowListConfig config;
    private final boolean enforce;
    private final Map<Key, Integer> numbers = new ConcurrentHashMap<>();
    /** The shapes outside, by number; replaced whole under the lock as one is added, read without it. */
    private volatile Outside[] shapes = new Outside[0];

    AllowList(AllowListConfig config) {
        this.config = config;
        this.enforce = config.mode() == AllowListConfig.Mode.ENFORCE;
    }

    AllowListConfig config() {
        return config;
    }

    boolean enforces() {
        return enforce;
    }

    /** Whether {@code user} may run {@code digest}: always when the list does not name the user. */
    boolean allows(String user, SqlDigest digest) {
        Set<String> digests = user == null ? null : config.users().get(user);
        return digests == null || digests.contains(digest.hash());
    }

    /**
     * The number of the shape outside the list of {@code user} running {@code digest}, whose acting rule otherwise
     * is {@code ruleIndex} (-1: none); made at the first decision for it.
     */
    int outside(String user, SqlDigest digest, int ruleIndex) {
        Key key = new Key(user, digest.hash(), ruleIndex);
        Integer known = numbers.get(key);
        return known != null ? known : register(key, digest.text());
    }

    private synchronized int register(Key key, String text) {
        Integer known = numbers.get(key);
        if (known != null) {
            return known;
        }
        Outside[] now = shapes;
        if (now.length >= MAX_SHAPES) {
            Key other = new Key("*", "other", key.ruleIndex);
            Integer shared = numbers.get(other);
            if (shared != null) {
                return shared;
            }
            key = other;
            text = "(more than " + MAX_SHAPES + " shapes outside the allow-list)";
        }
        Outside made = new Outside(this, key.user, key.digest, text, key.ruleIndex,
                refusal(key.user, key.digest, text));
        Outside[] grown = Arrays.copyOf(now, now.length + 1);
        grown[now.length] = made;
        shapes = grown;
        numbers.put(key, now.length);
        return now.length;
    }

    /** The shape of number {@code number}. */
    Outside shape(int number) {
        return shapes[number];
    }

    /** The shapes found outside the list so far, in the order they were found. */
    List<Outside> shapes() {
        return List.of(shapes);
    }

    /** A statement of {@code shape} ran in {@code DRY_RUN}: counted, and logged at most once a minute per shape. */
    static void wouldRefuse(Outside shape) {
        shape.refusal.counters().matched();
        long now = System.nanoTime();
        long next = shape.nextLog;
        if ((next == 0 || now - next >= 0) && shape.list.logBudget(now)) {
            shape.nextLog = now + LOG_EVERY_NANOS;
            log.warn("Allow-list (DRY_RUN) would refuse user {} digest {}: {} ({} so far)", shape.user, shape.digest,
                    shape.text, shape.refusal.counters().matchedCount());
        }
    }

    /**
     * Whether one more line fits in this second's budget of {@value #LOG_LINES_PER_SECOND}: many new shapes at once
     * (a scan, an attack) must not flood the log; a shape not logged now is logged at a later statement. Only shapes
     * due a line get here, so the atomics are not touched per statement.
     */
    private boolean logBudget(long now) {
        long second = logSecond.get();
        if (now - second >= 1_000_000_000L && logSecond.compareAndSet(second, now)) {
            logLines.set(0);
        }
        return logLines.incrementAndGet() <= LOG_LINES_PER_SECOND;
    }

    private static QueryRule refusal(String user, String digest, String text) {
        String shown = text.length() > 200 ? text.substring(0, 200) + "..." : text;
        QueryRuleConfig.Block block = new QueryRuleConfig.Block(REFUSAL_CODE, QueryRuleConfig.Block.DEFAULT_SQL_STATE,
                "Statement refused by the allow-list: user " + user + " has no digest " + digest + " (" + shown
                        + ") in allowList of !QUERY_RULES");
        QueryRuleConfig config = new QueryRuleConfig("allow-list", null, null, List.of(), List.of(), List.of(),
                List.of(), QueryRuleConfig.Action.BLOCK, null, block);
        return new QueryRule(config, new QueryRule.Counters());
    }

    private record Key(String user, String digest, int ruleIndex) {
    }

    /**
     * A statement shape outside the allow-list: its user, digest and text, the rule that acts on it otherwise, and in
     * {@code ENFORCE} the refusal it gets. Its count is the refusal's matched counter, in both modes.
     */
    static final class Outside {
        final AllowList list;
        final String user;
        final String digest;
        final String text;
        final int ruleIndex;
        final QueryRule refusal;
        /** When it may be logged again (nanoTime); 0: not logged yet. Racy on purpose: a log line more is harmless. */
        volatile long nextLog;

        Outside(AllowList list, String user, String digest, String text, int ruleIndex, QueryRule refusal) {
            this.list = list;
            this.user = user;
            this.digest = digest;
            this.text = text;
            this.ruleIndex = ruleIndex;
            this.refusal = refusal;
        }

        long count() {
            return refusal.counters().matchedCount();
        }
    }
}
