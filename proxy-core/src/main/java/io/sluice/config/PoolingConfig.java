package io.sluice.config;

import java.time.Duration;
import java.util.Objects;

/**
 * The {@code pooling} section of config.yaml: whether sessions share backend connections.
 *
 * @param mode {@link PoolingMode#SESSION} (the default) or {@link PoolingMode#TRANSACTION}
 * @param preparedStatementCacheSize in TRANSACTION mode (and in SESSION mode for a session that moved to another
 *     server, decision 106), how many prepared statements each backend connection keeps; the least recently used one
 *     beyond it is closed on the server
 * @param sessionMovesPerSecond how many sessions per second move to a backend that comes (back) into rotation, to
 *     spread them as the balancer would; 0 turns rebalancing off (sessions still leave a drained or down backend
 *     between their transactions; in SESSION mode on MariaDB only, decision 104)
 * @param moveGtidWaitMilliseconds how long a moved session's new server may take to apply the session's last write
 *     (GTID) before the session runs there; 0, the default, moves without waiting. Only for a group whose servers
 *     replicate from one another by GTID (a primary and its replicas): on independent servers, or Galera (which does
 *     not advance {@code gtid_slave_pos}), the wait can never succeed and the session would stay (decision 105)
 */
public record PoolingConfig(PoolingMode mode, int preparedStatementCacheSize, int sessionMovesPerSecond,
        int moveGtidWaitMilliseconds) {

    public static final int DEFAULT_PREPARED_STATEMENT_CACHE_SIZE = 256;
    public static final int DEFAULT_SESSION_MOVES_PER_SECOND = 100;

    public PoolingConfig {
        Objects.requireNonNull(mode, "mode");
        if (preparedStatementCacheSize < 1) {
            throw new IllegalArgumentException("pooling.preparedStatementCacheSize: " + preparedStatementCacheSize
                    + " (expected: at least 1)");
        }
        if (sessionMovesPerSecond < 0) {
            throw new IllegalArgumentException("pooling.sessionMovesPerSecond: " + sessionMovesPerSecond
                    + " (expected: 0 or more)");
        }
        if (moveGtidWaitMilliseconds < 0) {
            throw new IllegalArgumentException("pooling.moveGtidWaitMilliseconds: " + moveGtidWaitMilliseconds
                    + " (expected: 0 or more)");
        }
    }

    /** Moved sessions do not wait for their last write on the new server. */
    public PoolingConfig(PoolingMode mode, int preparedStatementCacheSize, int sessionMovesPerSecond) {
        this(mode, preparedStatementCacheSize, sessionMovesPerSecond, 0);
    }

    /** How long a moved session waits for its last write on its new server; {@link Duration#ZERO}: it does not. */
    public Duration moveGtidWait() {
        return Duration.ofMillis(moveGtidWaitMilliseconds);
    }

    /** With the default rate of session moves. */
    public PoolingConfig(PoolingMode mode, int preparedStatementCacheSize) {
        this(mode, preparedStatementCacheSize, DEFAULT_SESSION_MOVES_PER_SECOND);
    }

    /** One backend connection per session. */
    public static PoolingConfig defaults() {
        return new PoolingConfig(PoolingMode.SESSION, DEFAULT_PREPARED_STATEMENT_CACHE_SIZE);
    }

    /** Transaction pooling with the default statement cache. */
    public static PoolingConfig transaction() {
        return new PoolingConfig(PoolingMode.TRANSACTION, DEFAULT_PREPARED_STATEMENT_CACHE_SIZE);
    }

    /** Whether sessions give their backend connection back between transactions. */
    public boolean transactionPooling() {
        return mode == PoolingMode.TRANSACTION;
    }
}
