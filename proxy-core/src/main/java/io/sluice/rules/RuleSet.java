package io.sluice.rules;

import io.sluice.config.QueryRuleConfig;
import io.sluice.sql.SqlDigest;
import java.net.InetAddress;
import java.util.List;

/**
 * One version of the query rules, as a reload made it: immutable, tried in order, the first match acts (as
 * ProxySQL's rules without {@code apply: 0} chains and MaxScale's filters in a row; decision 165). Its version tags
 * the decisions sessions cache, so that a reload makes them all stale at once without touching them.
 */
final class RuleSet {

    static final RuleSet EMPTY = new RuleSet(0, new QueryRule[0]);
    /**
     * Added to the number of a shape outside the allow-list ({@link AllowList#outside}) to make a decision of it,
     * distinct from a rule's index and from the table's markers.
     */
    static final int OUTSIDE = 1 << 30;

    private final int version;
    private final QueryRule[] rules;
    /** The allow-list, or {@code null}: none. */
    private final AllowList allowList;
    private final boolean networks;
    private final boolean routes;
    private final boolean groupRoutes;
    private final boolean timeouts;

    RuleSet(int version, QueryRule[] rules) {
        this(version, rules, null);
    }

    RuleSet(int version, QueryRule[] rules, AllowList allowList) {
        this.version = version;
        this.rules = rules;
        this.allowList = allowList;
        boolean anyNetwork = false;
        boolean anyRoute = false;
        boolean anyGroupRoute = false;
        boolean anyTimeout = false;
        for (QueryRule rule : rules) {
            anyNetwork |= rule.hasNetworks();
            anyRoute |= rule.config().action() == QueryRuleConfig.Action.ROUTE;
            anyGroupRoute |= rule.config().routeGroup() != null;
            anyTimeout |= rule.config().action() == QueryRuleConfig.Action.TIMEOUT
                    || rule.config().action() == QueryRuleConfig.Action.MAX_ROWS;
        }
        this.networks = anyNetwork;
        this.routes = anyRoute;
        this.groupRoutes = anyGroupRoute;
        this.timeouts = anyTimeout;
    }

    int version() {
        return version;
    }

    boolean isEmpty() {
        return rules.length == 0 && allowList == null;
    }

    /** The allow-list, or {@code null}: none. */
    AllowList allowList() {
        return allowList;
    }

    /** Whether some rule names networks: the client's address is then part of a decision's scope. */
    boolean hasNetworks() {
        return networks;
    }

    /** Whether some rule routes to another group (decision 194). */
    boolean hasGroupRoutes() {
        return groupRoutes;
    }

    /** Whether some rule routes: only then does a read/write split session ask for a statement's route. */
    boolean hasRoutes() {
        return routes;
    }

    /** Whether some rule times statements out or limits their rows (maxRows): only then is a statement looked up again as it is sent. */
    boolean hasTimeouts() {
        return timeouts;
    }

    QueryRule rule(int index) {
        return rules[index];
    }

    List<QueryRule> rules() {
        return List.of(rules);
    }

    /**
     * The decision for the statement of {@code digest}: the index of the first rule that matches it, or -1; or, when
     * it is outside the allow-list of {@code user}, {@link #OUTSIDE} plus its shape's number.
     */
    int match(SqlDigest digest, String user, String schema, InetAddress client) {
        return match(digest, StatementClasses.of(digest.text()), user, schema, client);
    }

    /**
     * The decision for the statement of {@code digest} whose class bits are {@code classes} (read from its whole text
     * when the digest was cut), as {@link #match(SqlDigest, String, String, InetAddress)} says.
     */
    int match(SqlDigest digest, int classes, String user, String schema, InetAddress client) {
        int index = firstMatch(digest, classes, user, schema, client);
        if (allowList == null || allowList.allows(user, digest)) {
            return index;
        }
        return OUTSIDE + allowList.outside(user, digest, index);
    }

    private int firstMatch(SqlDigest digest, int classes, String user, String schema, InetAddress client) {
        String text = digest.text();
        String hash = null;
        for (int i = 0; i < rules.length; i++) {
            QueryRule rule = rules[i];
            if (hash == null && rule.config().digest() != null) {
                hash = digest.hash();
            }
            if (rule.matches(hash, text, classes, user, schema, client)) {
                return i;
            }
        }
        return -1;
    }
}
