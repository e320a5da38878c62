package io.sluice.readwrite;

/** What a statement does to the session's transaction, as the classifier reads it from the text. */
public enum TransactionEffect {
    /** Nothing. */
    NONE,
    /**
     * {@code BEGIN}, {@code START TRANSACTION}, {@code XA START}: a transaction in the session's access mode,
     * read-write unless the session is {@code READ ONLY} ({@link TransactionState#sessionReadOnly}; never for XA).
     */
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
    IMPLICIT_COMMIT,
    /** {@code START TRANSACTION READ WRITE}: a read-write transaction, whatever the session's access mode. */
    BEGIN_READ_WRITE
}
