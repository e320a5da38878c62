package io.sluice;

import io.sluice.balancer.BackendState;

/**
 * One backend as the admin API and metrics show it: the balancer's view (status, weight, sessions, last health
 * check) and the pool's (connections open, idle and awaited).
 *
 * @param state status, weight, sessions and the last health check
 * @param openConnections backend connections open now (idle, lent, or logging in)
 * @param idleConnections of those, the ones idle in the pool
 * @param pendingAcquires sessions waiting for a connection because the pool is at {@code maxPoolSize}
 * @param maxPoolSize the pool's limit
 */
public record BackendSnapshot(BackendState state, int openConnections, int idleConnections, int pendingAcquires,
        int maxPoolSize) {
}
