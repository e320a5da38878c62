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
            result = reason.route() == Route.PREVIOUS ? reason : RouteReason.IN_TRANSACTION;
            if (effect == TransactionEffect.NONE) {
                begin(Route.PRIMARY); // with autocommit off, any statement opens a transaction
            }
        } else if (reason == RouteReason.READ_ONLY_TRANSACTION && !readOnlyTransactionsOnReplicas) {
            result = RouteReason.TRANSACTION;
        } else {
            result = reason;
        }
        follow(effect, result.route());
        return result;
    }

    private void follow(TransactionEffect effect, Route route) {
        switch (effect) {
            case BEGIN, BEGIN_READ_ONLY -> begin(route == Route.REPLICA ? Route.REPLICA : Route.PRIMARY);
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
