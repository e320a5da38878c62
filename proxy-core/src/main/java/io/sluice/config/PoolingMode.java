package io.sluice.config;

/** How long a client session holds a backend connection. */
public enum PoolingMode {
    /**
     * From login to disconnect: one backend connection per client connection, everything passes through unchanged.
     * The default.
     */
    SESSION,
    /**
     * For one transaction, or one statement in autocommit: between transactions the session holds no backend
     * connection, its session state moves with it, and state that cannot move pins it to its connection.
     */
    TRANSACTION
}
