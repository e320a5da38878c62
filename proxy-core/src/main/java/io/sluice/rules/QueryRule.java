package io.sluice.rules;

import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.StatementClass;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Pattern;

/**
 * One rule of the running set, ready to match: its pattern compiled, its networks parsed, its statement classes as
 * bits; and its counters. The counters are kept across a reload that leaves the rule as it was, so that an operator
 * who adds one rule does not lose the figures of the others.
 */
public final class QueryRule {

    private final QueryRuleConfig config;
    private final Pattern pattern;
    private final List<ClientNetwork> networks;
    private final int classes;
    private final Counters counters;
    private final RateLimit rate;
    private final ConcurrencyLimit concurrency;

    QueryRule(QueryRuleConfig config, Counters counters) {
        this.config = config;
        this.pattern = config.pattern() == null ? null : QueryRuleConfig.compile(config.pattern());
        List<ClientNetwork> parsed = new ArrayList<>();
        for (String network : config.networks()) {
            parsed.add(ClientNetwork.of(network));
        }
        this.networks = List.copyOf(parsed);
        int bits = 0;
        for (StatementClass each : config.statementClasses()) {
            bits |= StatementClasses.bit(each);
        }
        this.classes = bits;
        this.counters = counters;
        this.rate = config.action() == QueryRuleConfig.Action.MAX_PER_SECOND ? new RateLimit(config.limit()) : null;
        this.concurrency = config.action() == QueryRuleConfig.Action.MAX_CONCURRENCY
                ? new ConcurrencyLimit((int) config.limit(), counters.running) : null;
    }

    /** A {@code maxConcurrency} rule's permits; {@code null} for any other rule. */
    public ConcurrencyLimit concurrency() {
        return concurrency;
    }

    /** A {@code maxPerSecond} rule's buckets; {@code null} for any other rule. */
    public RateLimit rate() {
        return rate;
    }

    /** The rule as configured. */
    public QueryRuleConfig config() {
        return config;
    }

    /** The rule's name. */
    public String name() {
        return config.name();
    }

    /** Its counters: matched, acted, errors. */
    public Counters counters() {
        return counters;
    }

    /** Whether the rule has network matchers: then the client's address is part of a decision's scope. */
    boolean hasNetworks() {
        return !networks.isEmpty();
    }

    /**
     * Whether the rule matches a statement.
     *
     * @param digestHash the 16 hex digits of its digest
     * @param digestText its digest text
     * @param statementClasses its class bits ({@link StatementClasses#of})
     */
    boolean matches(String digestHash, String digestText, int statementClasses, String user, String schema,
            InetAddress client) {
        if (config.digest() != null && !config.digest().equals(digestHash)) {
            return false;
        }
        if (classes != 0 && (classes & statementClasses) == 0) {
            return false;
        }
        if (!config.users().isEmpty() && !config.users().contains(user)) {
            return false;
        }
        if (!config.schemas().isEmpty() && (schema == null || !config.schemas().contains(schema))) {
            return false;
        }
        if (!networks.isEmpty() && networks.stream().noneMatch(network -> network.contains(client))) {
            return false;
        }
        return pattern == null || pattern.matcher(digestText).find();
    }

    /**
     * A rule's counters, from any thread: how often it was the first rule to match a statement, how often it did what
     * it says, and how often it could not (a {@code route} outside a read/write split group).
     */
    public static final class Counters {
        private final LongAdder matched = new LongAdder();
        private final LongAdder acted = new LongAdder();
        private final LongAdder errors = new LongAdder();
        /** A {@code maxConcurrency} rule's statements running now. */
        private final java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger();

        /** Statements of a {@code maxConcurrency} rule running now; 0 for any other rule. */
        public int runningCount() {
            return running.get();
        }

        public void matched() {
            matched.increment();
        }

        public void acted() {
            acted.increment();
        }

        public void failed() {
            errors.increment();
        }

        public long matchedCount() {
            return matched.sum();
        }

        public long actedCount() {
            return acted.sum();
        }

        public long errorCount() {
            return errors.sum();
        }
    }
}
