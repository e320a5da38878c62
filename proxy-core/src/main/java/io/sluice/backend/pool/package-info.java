/**
 * The connection pools: one {@link io.sluice.backend.pool.BackendPool} per data source, made of one
 * {@link io.sluice.backend.pool.EventLoopPool} per event loop (idle connections, waiters, the reset hand-off), and
 * the connector that opens and logs in new connections (decision 003).
 *
 * <p>Layer: above {@code backend}, whose connections it holds; below {@code pooling} and {@code frontend}, which
 * acquire from it.
 */
package io.sluice.backend.pool;
