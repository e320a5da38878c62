package io.sluice.api;

import io.sluice.balancer.BackendState;
import java.util.Map;

/**
 * One backend as the admin API and metrics show it: the balancer's view (status, weight, sessions, last health
 * check) and the pool's (connections open, idle and awaited).
 *
 * @param state status, weight, sessions and the last health check
 * @param openConnections backend connections open now (idle, lent, or logging in)
 * @param idleConnections of those, the ones idle in the pool
 * @param pendingAcquires sessions waiting for a connection because the pool is at {@code maxPoolSize}
 * @param maxPoolSize the pool's limit
 * @param createdConnections connections that logged in, since start
 * @param closedConnections of those, the ones closed since
 * @param connectionErrors connects and logins that failed, since start
 * @param acquireWaitBuckets acquires that got a connection, per {@link io.sluice.metrics.LatencyBuckets} bucket of
 *     their wait (not cumulative)
 * @param acquireWaitNanos the sum of those waits
 * @param accountConnections open connections per server account of the sessions' own (mapped {@code backendUser}s,
 *     {@code users: FROM_BACKEND}), by user name; the data source's own account is not in it
 */
public record BackendSnapshot(BackendState state, int openConnections, int idleConnections, int pendingAcquires,
        int maxPoolSize, long createdConnections, long closedConnections, long connectionErrors,
        long[] acquireWaitBuckets, long acquireWaitNanos, Map<String, Integer> accountConnections) {

    public BackendSnapshot {
        accountConnections = accountConnections == null ? Map.of() : Map.copyOf(accountConnections);
    }

    /** A backend whose sessions all run as the data source's own account. */
    public BackendSnapshot(BackendState state, int openConnections, int idleConnections, int pendingAcquires,
            int maxPoolSize, long createdConnections, long closedConnections, long connectionErrors,
            long[] acquireWaitBuckets, long acquireWaitNanos) {
        this(state, openConnections, idleConnections, pendingAcquires, maxPoolSize, createdConnections,
                closedConnections, connectionErrors, acquireWaitBuckets, acquireWaitNanos, Map.of());
    }

    /** Connections lent to sessions or logging in: open but not idle. */
    public int activeConnections() {
        return Math.max(0, openConnections - idleConnections);
    }
}
