package io.sluice.readwrite;

/**
 * A read/write split session's transaction, as its statements and the server's status flags tell it, and the route
 * of its next statement: a transaction runs whole on the connection it began on, so every statement of a read-write
 * transaction (or of any statement while {@code autocommit} is off) goes to the primary, and every statement of a
 * {@code START TRANSACTION READ ONLY} transaction to the replica it began on. Outside a transaction the statement's
 * own class decides ({@link StatementClassifier}).
 *
 * <p>One per session, used on its event loop only; {@link #route} allocates nothing.
 */
public final class TransactionState {

    /** MySQL's SERVER_STATUS_IN_TRANS, SERVER_STATUS_AUTOCOMMIT and SERVER_STATUS_IN_TRANS_READONLY. */
    private static final int IN_TRANS = 0x0001;
    private static final int AUTOCOMMIT = 0x0002;

    private final boolean readOnlyTransactionsOnReplicas;
    private boolean inTransaction;
    private boolean autocommit = true;
    private Route transactionRoute;
    /** The session's transaction access mode is READ ONLY ({@code SET SESSION TRANSACTION READ ONLY}). */
    private boolean sessionReadOnly;

    /**
     * @param readOnlyTransactionsOnReplicas whether a {@code START TRANSACTION READ ONLY} transaction may run on a
     *     replica: {@code false} for ShardingSphere's {@code transactionalReadQueryStrategy: PRIMARY}
     */
    public TransactionState(boolean readOnlyTransactionsOnReplicas) {
        this.readOnlyTransactionsOnReplicas = readOnlyTransactionsOnReplicas;
    }

    /**
     * The reason (and so the route) of the session's next statement, whose class is {@code statementClass}; then
     * follows what the statement does to the transaction. Call it once per statement, in order.
     */
    public RouteReason route(int statementClass) {
        RouteReason reason = StatementClassifier.reason(statementClass);
        TransactionEffect effect = StatementClassifier.transaction(statementClass);
        RouteReason result;
        if (inTransaction) {
            result = transactionRoute == Route.REPLICA ? RouteReason.READ_ONLY_TRANSACTION
                    : reason.route() == Route.PREVIOUS ? reason : RouteReason.IN_TRANSACTION;
        } else if (!autocommit && effect != TransactionEffect.AUTOCOMMIT_ON) {
            boolean readOnly = readOnlyTransaction(reason, effect);
            result = readOnly ? RouteReason.READ_ONLY_TRANSACTION
                    : reason.route() == Route.PREVIOUS ? reason : RouteReason.IN_TRANSACTION;
            if (effect == TransactionEffect.NONE) {
                begin(readOnly ? Route.REPLICA : Route.PRIMARY); // with autocommit off, any statement opens one
            }
        } else if (effect == TransactionEffect.BEGIN_READ_ONLY || effect == TransactionEffect.BEGIN) {
            result = readOnlyTransaction(reason, effect) ? RouteReason.READ_ONLY_TRANSACTION
                    : effect == TransactionEffect.BEGIN_READ_ONLY ? RouteReason.TRANSACTION : reason;
        } else {
            result = reason;
        }
        follow(effect, result.route());
        return result;
    }

    /**
     * Whether a transaction that {@code effect} begins (explicitly, or implicitly with autocommit off) is read-only
     * and may run on a replica: {@code START TRANSACTION READ ONLY}, or, while the session is {@code READ ONLY}, a
     * plain {@code BEGIN} / {@code START TRANSACTION} or a read that opens one. A write that opens one under
     * autocommit off goes to the primary, where the server refuses it (1792) as a replica would: no write is ever
     * sent to a replica on the strength of the session's mode.
     */
    private boolean readOnlyTransaction(RouteReason reason, TransactionEffect effect) {
        if (!readOnlyTransactionsOnReplicas) {
            return false;
        }
        return effect == TransactionEffect.BEGIN_READ_ONLY
                || sessionReadOnly && (effect == TransactionEffect.BEGIN && reason == RouteReason.TRANSACTION
                        || effect == TransactionEffect.NONE && reason.route() == Route.REPLICA);
    }

    /**
     * The session's transaction access mode as the server reported it ({@code tx_read_only} /
     * {@code transaction_read_only}, set by {@code SET SESSION TRANSACTION READ ONLY}, JDBC's
     * {@code setReadOnly(true)}): while it is READ ONLY, a transaction that begins is read-only, and so runs on a
     * replica as {@code START TRANSACTION READ ONLY} does. Call it before {@link #route}.
     */
    public void sessionReadOnly(boolean readOnly) {
        this.sessionReadOnly = readOnly;
    }

    private void follow(TransactionEffect effect, Route route) {
        switch (effect) {
            case BEGIN, BEGIN_READ_ONLY, BEGIN_READ_WRITE ->
                    begin(route == Route.REPLICA ? Route.REPLICA : Route.PRIMARY);
            case END, IMPLICIT_COMMIT -> inTransaction = false;
            case CHAIN -> {
                // the next transaction starts on the same connection, at once
            }
            case AUTOCOMMIT_OFF -> autocommit = false;
            case AUTOCOMMIT_ON -> {
                autocommit = true;
                inTransaction = false;
            }
            default -> {
            }
        }
    }

    private void begin(Route route) {
        inTransaction = true;
        transactionRoute = route;
    }

    /**
     * The status flags of the last OK or EOF the session's statement got: the server's word on whether a
     * transaction is open and autocommit is on corrects what the text suggested (a failed BEGIN, autocommit set by
     * an expression, a stored procedure that commits).
     */
    public void onServerStatus(int statusFlags) {
        autocommit = (statusFlags & AUTOCOMMIT) != 0;
        boolean open = (statusFlags & IN_TRANS) != 0;
        if (open && !inTransaction) {
            begin(Route.PRIMARY);
        } else if (!open) {
            inTransaction = false;
        }
    }

    /** Whether a transaction is open: its statements all go where it began. */
    public boolean inTransaction() {
        return inTransaction;
    }

    /** Where the open transaction runs, or {@code null} outside one. */
    public Route transactionRoute() {
        return inTransaction ? transactionRoute : null;
    }

    public boolean autocommit() {
        return autocommit;
    }

    /** COM_RESET_CONNECTION or COM_CHANGE_USER: no transaction, autocommit on. */
    public void reset() {
        inTransaction = false;
        autocommit = true;
        transactionRoute = null;
    }
}
