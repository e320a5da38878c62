package io.sluice.readwrite;

import java.util.Locale;

/**
 * Why a statement goes where it goes: the statement classes of {@link StatementClassifier} and the reasons the
 * session's state adds ({@link TransactionState}, and the policy's own: lag, no replica, causal-read timeout). The
 * {@link #label()} is the metrics label and what the admin endpoint shows, such as {@code primary:locking_read}.
 */
public enum RouteReason {
    /** A plain read: SELECT, SHOW, DESCRIBE, EXPLAIN, WITH ... SELECT, VALUES, TABLE, HELP. */
    REPLICA(Route.REPLICA, "replica"),
    /** A read the client sent to a replica with {@code /* sluice: replica *}{@code /}: no causal-read wait. */
    REPLICA_HINT(Route.REPLICA, "replica:hint"),
    /**
     * A plain read with {@code causalReads: GLOBAL}: it runs on a replica once that replica has applied the
     * primary's position read at the time of the read ({@code primary:causal_timeout} when it has not in time).
     */
    CAUSAL_GLOBAL(Route.REPLICA, "replica:causal_global"),
    /** Any statement of a {@code START TRANSACTION READ ONLY} transaction, which runs whole on one replica. */
    READ_ONLY_TRANSACTION(Route.REPLICA, "replica:read_only_transaction"),
    /** The policy's: SET or USE while the group's primary is down, answered by a replica (decision 103). */
    SET_WHILE_PRIMARY_DOWN(Route.REPLICA, "replica:primary_down"),
    /** Reads what the previous statement left: SHOW WARNINGS, FOUND_ROWS(), ROW_COUNT(), @@warning_count... */
    DIAGNOSTICS(Route.PREVIOUS, "previous:diagnostics"),
    /** INSERT, UPDATE, DELETE, REPLACE, LOAD DATA, CALL, DDL, GRANT, SELECT ... INTO, ANALYZE TABLE... */
    WRITE(Route.PRIMARY, "primary:write"),
    /** SELECT ... FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE. */
    LOCKING_READ(Route.PRIMARY, "primary:locking_read"),
    /** Calls a function with an effect beyond its result: GET_LOCK, NEXTVAL, LAST_INSERT_ID(x), a stored function. */
    SIDE_EFFECT(Route.PRIMARY, "primary:side_effect"),
    /** Reads state only the session's primary connection has: LAST_INSERT_ID(), LASTVAL(), @@last_gtid... */
    SESSION_STATE(Route.PRIMARY, "primary:session_state"),
    /** More than one statement in one COM_QUERY. */
    MULTI_STATEMENT(Route.PRIMARY, "primary:multi_statement"),
    /** {@code /* sluice: primary *}{@code /}, or ShardingSphere's {@code WRITE_ROUTE_ONLY=true} hint. */
    HINT(Route.PRIMARY, "primary:hint"),
    /** State that lives on one server connection and cannot follow the session: user variables, LOCK TABLES... */
    PINNING(Route.PRIMARY, "primary:pinning"),
    /** SET and USE: run on the primary; the session state follower carries the change to replica connections. */
    SESSION_SET(Route.PRIMARY, "primary:set"),
    /** BEGIN, START TRANSACTION (read-write), COMMIT, ROLLBACK, SAVEPOINT outside a read-only transaction. */
    TRANSACTION(Route.PRIMARY, "primary:transaction"),
    /** Any statement inside a read-write transaction, or while autocommit is off. */
    IN_TRANSACTION(Route.PRIMARY, "primary:in_transaction"),
    /** Asks about the server rather than the data: SHOW PROCESSLIST, SHOW STATUS, SHOW MASTER STATUS... */
    SERVER_STATE(Route.PRIMARY, "primary:server_state"),
    /** A statement the classifier does not know, or none: the primary is never wrong. */
    OTHER(Route.PRIMARY, "primary:other"),
    /** The policy's: no replica of the group may take reads now (stopped, lagging, unreachable). */
    NO_REPLICA(Route.PRIMARY, "primary:no_replica"),
    /** The policy's: every usable replica lags more than the threshold. */
    LAG(Route.PRIMARY, "primary:lag"),
    /** The policy's: a causal read's wait on the replica timed out, so the read ran on the primary. */
    CAUSAL_TIMEOUT(Route.PRIMARY, "primary:causal_timeout"),
    /**
     * The policy's: a replica refused the statement as a write (ERR 1792 or 1290, nothing done) and it ran again, on
     * the primary (decision 110): a stored function that writes, called from a view. The replica's try is counted
     * under its own reason too.
     */
    REPLICA_REFUSED(Route.PRIMARY, "primary:replica_refused"),
    /**
     * The policy's: the primary refused a plain autocommit write as read-only (ERR 1290, nothing done: it was fenced
     * or demoted since the group's last round) and it ran again on the group's next primary (decision 178).
     */
    PRIMARY_REFUSED(Route.PRIMARY, "primary:primary_refused");

    private static final RouteReason[] VALUES = values();

    private final Route route;
    private final String label;

    RouteReason(Route route, String label) {
        this.route = route;
        this.label = label;
    }

    /** Where a statement with this reason runs. */
    public Route route() {
        return route;
    }

    /** The metrics label: {@code replica}, {@code primary:write}... */
    public String label() {
        return label;
    }

    /** The reason of an ordinal, as packed by {@link StatementClassifier}. */
    static RouteReason of(int ordinal) {
        return VALUES[ordinal];
    }

    @Override
    public String toString() {
        return label;
    }

    /** The reason with {@code label}, in any case, or {@code null}. */
    public static RouteReason byLabel(String label) {
        String wanted = label.toLowerCase(Locale.ROOT);
        for (RouteReason reason : VALUES) {
            if (reason.label.equals(wanted)) {
                return reason;
            }
        }
        return null;
    }
}
