package io.sluice.rules;

import io.netty.buffer.ByteBuf;
import io.sluice.sql.SqlDigest;
import io.sluice.statistics.StatementShape;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;

/**
 * One session's side of the query rules, on its event loop: finds the rule that acts on each statement it is about
 * to send, from its loop's cache of decisions, and decides (once per shape and scope and rule set) on a miss. Its
 * scope (user, schema, client address) is looked up again only when one of them, or the rule set, changes.
 */
public final class SessionRules {

    private final QueryRules owner;
    private final LoopDecisions table;
    private final InetAddress client;
    private String user;
    private String schema;
    private DecisionScope scope;
    private int scopeVersion = -1;
    /** The shape outside a {@code DRY_RUN} allow-list the last lookup found, until {@link #arrived} counts it. */
    private AllowList.Outside wouldRefuse;

    SessionRules(QueryRules owner, LoopDecisions table, InetAddress client) {
        this.owner = owner;
        this.table = table;
        this.client = client;
    }

    /** Whether a rule set is running now (one volatile read): a session asks for nothing else while there is none. */
    public boolean active() {
        return !owner.current().isEmpty();
    }

    /** Whether some running rule routes statements. */
    public boolean routes() {
        return owner.current().hasRoutes();
    }

    /** Whether some running rule routes statements to another group (decision 194). */
    public boolean routesToGroups() {
        return owner.current().hasGroupRoutes();
    }

    /** Whether some running rule times statements out or limits their rows (both act as the statement is sent). */
    public boolean timesOut() {
        return owner.current().hasTimeouts();
    }

    /**
     * The rule that acts on the statement text in {@code buf} from {@code from} to {@code to} (borrowed: a COM_QUERY's
     * or COM_STMT_PREPARE's), or {@code null}: none. On the session's loop.
     */
    public QueryRule ruleFor(ByteBuf buf, int from, int to, String user, String schema) {
        RuleSet set = owner.current();
        if (set.isEmpty()) {
            return null;
        }
        if (to - from > StatementShape.MAX_BYTES) {
            // Longer than the shape reads: two such statements may share a shape and differ after it (a DROP behind
            // a long SELECT), so each is decided alone, its classes read from its whole text.
            String sql = buf.toString(from, to - from, StandardCharsets.UTF_8);
            return decided(set, set.match(SqlDigest.of(sql), StatementClasses.of(sql), user, schema, client));
        }
        long shape = table.shapeOf(buf, from, to);
        DecisionScope at = scope(set, user, schema);
        int decision = table.decision(set, shape, at);
        if (decision == LoopDecisions.UNKNOWN) {
            // once per shape and scope: the digest is made from the bytes the shape read
            String sql = buf.toString(from, StatementShape.readLength(to - from), StandardCharsets.UTF_8);
            decision = set.match(SqlDigest.of(sql), user, schema, client);
            table.remember(set, shape, at, decision);
        }
        return decided(set, decision);
    }

    /**
     * The rule that acts on an execution of a prepared statement whose shape and digest the session knows, or
     * {@code null}. On the session's loop.
     */
    public QueryRule ruleFor(long shape, SqlDigest digest, String user, String schema) {
        RuleSet set = owner.current();
        if (set.isEmpty()) {
            return null;
        }
        DecisionScope at = scope(set, user, schema);
        int decision = table.decision(set, shape, at);
        if (decision == LoopDecisions.UNKNOWN) {
            decision = set.match(digest, user, schema, client);
            table.remember(set, shape, at, decision);
        }
        return decided(set, decision);
    }

    /**
     * A client command arrives: forgets what an earlier lookup found outside the allow-list (a lookup as a statement
     * is routed or sent), so that {@link #arrived} counts only this command's.
     */
    public void arriving() {
        wouldRefuse = null;
    }

    /**
     * The arriving command was looked up: a {@code DRY_RUN} allow-list counts and logs it when it is outside, once
     * per command however often it is looked up again.
     */
    public void arrived() {
        AllowList.Outside shape = wouldRefuse;
        if (shape != null) {
            wouldRefuse = null;
            AllowList.wouldRefuse(shape);
        }
    }

    /** The rule a decision names: a rule's index, none, or a shape outside the allow-list. */
    private QueryRule decided(RuleSet set, int decision) {
        if (decision < RuleSet.OUTSIDE) {
            return decision < 0 ? null : set.rule(decision);
        }
        AllowList list = set.allowList();
        AllowList.Outside shape = list.shape(decision - RuleSet.OUTSIDE);
        if (list.enforces()) {
            return shape.refusal;
        }
        wouldRefuse = shape;
        return shape.ruleIndex < 0 ? null : set.rule(shape.ruleIndex);
    }

    private DecisionScope scope(RuleSet set, String user, String schema) {
        // identity: the session's strings change object when they change value, and rarely
        if (scope == null || user != this.user || schema != this.schema || scopeVersion != set.version()) {
            this.user = user;
            this.schema = schema;
            this.scopeVersion = set.version();
            scope = table.scope(new DecisionScope(user, schema, set.hasNetworks() ? client : null));
        }
        return scope;
    }
}
