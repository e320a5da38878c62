package io.sluice.readwrite;

/** What a statement does to the session's transaction, as the classifier reads it from the text. */
public enum TransactionEffect {
    /** Nothing. */
    NONE,
    /** {@code BEGIN}, {@code START TRANSACTION} [{@code READ WRITE}], {@code XA START}: a read-write transaction. */
    BEGIN,
    /** {@code START TRANSACTION READ ONLY}: a transaction that may run on a replica, whole. */
    BEGIN_READ_ONLY,
    /** {@code COMMIT}, {@code ROLLBACK} (not {@code TO SAVEPOINT}), {@code XA COMMIT/ROLLBACK}: it ends. */
    END,
    /** {@code COMMIT AND CHAIN}, {@code ROLLBACK AND CHAIN}: it ends and another with the same mode begins. */
    CHAIN,
    /** {@code SET autocommit = 0}: every statement from the next one on is in a transaction. */
    AUTOCOMMIT_OFF,
    /** {@code SET autocommit = 1}: commits an open transaction; statements commit one by one again. */
    AUTOCOMMIT_ON,
    /**
     * A statement that commits the open transaction before it runs (DDL, {@code LOCK TABLES}, {@code GRANT}...): the
     * transaction ends, on the connection that ran it.
     */
    IMPLICIT_COMMIT
}
