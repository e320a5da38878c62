/**
 * The Prometheus exporter ({@link io.sluice.ops.metrics.SluiceMetrics}): Micrometer's JVM, process and Netty meters,
 * and Sluice's own series read at scrape time from {@link io.sluice.api.MetricSources} (decision 020).
 *
 * <p>Layer: operations. It is fed by the proxy's suppliers and uses only the foundation (api, the metrics counters,
 * the balancer's state); the only package that uses Micrometer and the Prometheus client. {@code admin} serves it
 * and {@code ops} builds it.
 */
package io.sluice.ops.metrics;
