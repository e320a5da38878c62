/**
 * The proxy: {@link io.sluice.Sluice}, the embedding facade, and what it is made of: the start-up wiring
 * ({@code Startup}, {@code ProbeResult}), the backends and their pools ({@code Backends}), config reload and graceful
 * shutdown.
 *
 * <p>Layer: above {@code frontend}, and so above everything of the data path, which it assembles. Below the operations
 * ({@code admin}, {@code ops.metrics}, {@code ops}), which it does not know: they reach it through
 * {@link io.sluice.api.ProxyControl} and {@link io.sluice.api.MetricSources}. See docs/decisions/065-layering.md.
 */
package io.sluice;
