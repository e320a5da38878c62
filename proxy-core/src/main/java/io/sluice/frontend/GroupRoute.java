package io.sluice.frontend;

import io.sluice.pooling.CommandPolicy;
import io.sluice.readwrite.RouteReason;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.routing.ReadWriteGroup;
import io.sluice.rules.QueryRule;
import io.sluice.sql.Keyword;
import io.sluice.sql.RouteFacts;
import io.sluice.sql.SessionEffects;
import io.sluice.sql.StatementScan;

/**
 * A {@code route} rule that names another group (decision 194), as ProxySQL's {@code destination_hostgroup}: the
 * statement it matches runs on a connection of that group, taken for it alone, the session's state applied there as
 * on any pooled connection, and given back to that group's pool after it. Only where that keeps the session whole:
 * in transaction pooling, with nothing outstanding, no connection held (outside a transaction, not pinned),
 * autocommit on, and a statement that leaves nothing behind on its connection (a plain read or a write, not a SET,
 * a transaction's bounds, a lock or a user variable). Anywhere else it runs where it would, and the rule counts an
 * error. On the session's loop.
 */
final class GroupRoute {

    private GroupRoute() {
    }

    /**
     * Sends the statement being looked at to the group {@code rule} names, or counts why not.
     *
     * @param sql its text, or the digest text of the SQL an execute runs; {@code null}: unknown (statistics off)
     */
    static void route(FrontendContext context, CommandRelayHandler relay, ClientSession session, QueryRule rule,
            String sql) {
        BackendLease lease = relay.lease();
        CommandPolicy policy = relay.policy();
        String named = rule.config().routeGroup();
        RouteReason reason = sql == null ? RouteReason.OTHER : StatementClassifier.reason(StatementClassifier.classify(
                sql));
        if (reason == RouteReason.PINNING && context.serverInfo().hasMariaDbCapabilities()) {
            reason = withUserVariables(sql); // MariaDB's user variables move with the session: not a pin there
        }
        boolean read = reason == RouteReason.REPLICA || reason == RouteReason.REPLICA_HINT;
        if (!policy.followsSession() || lease.connection() != null || !relay.isQuiet()
                || lease.moves().awaitingLastWrite() || autocommitOff(policy) || !read && reason != RouteReason.WRITE
                && reason != RouteReason.LOCKING_READ) {
            rule.counters().failed(); // it runs where it would: moving it would take the session's state with it
            return;
        }
        ReadWriteGroup group = context.readWriteGroup(named);
        String target;
        if (group != null && group.name().equals(named)) {
            ReadWriteGroup own = context.readWriteGroup(session.requestedSchema());
            if (own == group) {
                rule.counters().acted(); // the session's own group: its policy routes the statement there
                return;
            }
            // A replica's connection is read-only from its login on, unless it logs in with the client's own account
            // (FROM_BACKEND): then the read runs on the primary, never on a replica connection that could write.
            String replica = read && session.key().account() == null ? group.pickReplica() : null;
            target = replica != null ? replica : group.primary();
        } else if (context.pool(named) != null) {
            target = named;
        } else {
            rule.counters().failed(); // reloaded away meanwhile
            return;
        }
        if (target.equals(lease.dataSource()) && group == null) {
            rule.counters().acted(); // the session's own data source
            return;
        }
        lease.visit(target, lease.schemaOn(target, session.schema()));
        rule.counters().acted();
    }

    /**
     * What a statement the classifier pins for is, when what pins is only user variables, which transaction pooling
     * carries on MariaDB (applied to the connection before, read back after): a plain read ({@code SELECT ... @v}) or
     * a write; {@link RouteReason#PINNING} for anything else (SQL_CALC_FOUND_ROWS, a temporary table, SET).
     */
    private static RouteReason withUserVariables(String sql) {
        StatementScan scan = new StatementScan().scan(sql);
        int facts = scan.routeFacts();
        if ((scan.effects() & ~(SessionEffects.USER_VARIABLE | SessionEffects.QUALIFIERS)) != 0
                || (facts & (RouteFacts.TEMPORARY | RouteFacts.MULTI | RouteFacts.SIDE_EFFECT
                | RouteFacts.SESSION_STATE | RouteFacts.DIAGNOSTICS | RouteFacts.HINT_PRIMARY)) != 0) {
            return RouteReason.PINNING;
        }
        Keyword first = scan.first();
        if (first == Keyword.SELECT) {
            return (facts & (RouteFacts.INTO | RouteFacts.LOCKING | RouteFacts.WRITE_WORD)) == 0 ? RouteReason.REPLICA
                    : RouteReason.WRITE;
        }
        return first == Keyword.INSERT || first == Keyword.UPDATE || first == Keyword.DELETE
                || first == Keyword.REPLACE ? RouteReason.WRITE : RouteReason.PINNING;
    }

    /** Whether the session runs with autocommit off: its statement would begin a transaction on the other group. */
    private static boolean autocommitOff(CommandPolicy policy) {
        String value = policy.variables() == null ? null : policy.variables().get("autocommit");
        return value != null && (value.equals("0") || value.equalsIgnoreCase("OFF") || value.equalsIgnoreCase(
                "FALSE"));
    }
}
