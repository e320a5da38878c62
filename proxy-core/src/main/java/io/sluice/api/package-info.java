/**
 * What the proxy shows of itself: snapshots and results ({@link io.sluice.api.BackendSnapshot},
 * {@link io.sluice.api.SessionSnapshot}, {@link io.sluice.api.ReloadResult}) and the narrow views the operations
 * layer reaches it through ({@link io.sluice.api.ProxyControl}, {@link io.sluice.api.MetricSources},
 * {@link io.sluice.api.ClientCounts}).
 *
 * <p>Layer: the foundation. It may use the other foundation packages (the balancer's state, the metrics counters,
 * config's exceptions) and {@code protocol}, nothing above.
 */
package io.sluice.api;
