/**
 * The counters the command path writes: per-loop command, error, latency and byte counts
 * ({@link io.sluice.metrics.LoopCounters}, {@link io.sluice.metrics.TrafficCounters}), their latency buckets and
 * command types, and the {@link io.sluice.metrics.CommandObserver} that feeds them and the slow-query log; and
 * {@link io.sluice.metrics.RateLimitedWarning}, which counts the WARN lines clients could cause at will instead of
 * logging each.
 *
 * <p>Layer: the foundation. It uses {@code protocol} and {@code slowlog} only; the Prometheus exporter that reads
 * these counters is in {@code ops.metrics}, at the top.
 */
package io.sluice.metrics;
