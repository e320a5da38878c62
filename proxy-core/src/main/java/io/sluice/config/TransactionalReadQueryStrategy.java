package io.sluice.config;

/**
 * ShardingSphere's {@code transactionalReadQueryStrategy}: where reads inside a transaction go. Sluice runs a
 * transaction whole on one connection, so a read-write transaction always runs on the primary (a read on a replica
 * would not see the transaction's own writes); the strategy decides where a {@code START TRANSACTION READ ONLY}
 * transaction runs (decision 096).
 */
public enum TransactionalReadQueryStrategy {
    /** Read-only transactions run on the primary too. */
    PRIMARY,
    /** A read-only transaction runs on one replica, the same for all its statements. */
    FIXED,
    /**
     * ShardingSphere's default, any replica per read; in Sluice as {@link #FIXED}, since a transaction cannot span
     * connections.
     */
    DYNAMIC;

    /** Whether a read-only transaction may run on a replica. */
    public boolean readOnlyTransactionsOnReplicas() {
        return this != PRIMARY;
    }
}
