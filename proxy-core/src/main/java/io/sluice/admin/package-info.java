/**
 * The admin HTTP API ({@code /metrics}, the probes {@code /livez} and {@code /readyz}, {@code /health}, the
 * version, backends, drain, sessions, the masked configuration, reload, traffic capture) on the JDK's HTTP server, on
 * a few threads of its own (decisions 021, 060 and 078).
 *
 * <p>Layer: operations, started by {@code ops.SluiceServer}. It knows the proxy only as
 * {@link io.sluice.api.ProxyControl}; besides that it uses the foundation, {@code capture}'s endpoints and the
 * exporter in {@code ops.metrics}. Only this package uses {@code com.sun.net.httpserver}.
 */
package io.sluice.admin;
