/**
 * JMH micro benchmarks of the hot path: framing, response tracking, the backend relay, the pool, the balancer and
 * the scramble.
 *
 * <p>Layer: outside the product, over proxy-core's and proxy-balancer's lower packages ({@code protocol},
 * {@code codec}, {@code relay}, {@code backend}, {@code backend.pool}, the foundation); nothing uses it.
 */
package io.sluice.benchmark;
