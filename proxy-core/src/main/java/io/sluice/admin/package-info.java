/**
 * The admin HTTP API ({@code /health}, {@code /metrics}, backends, drain, sessions, reload, traffic capture) on the
 * JDK's HTTP server, on a thread of its own (decisions 021 and 060).
 *
 * <p>Layer: operations, started by {@code ops.SluiceServer}. It knows the proxy only as
 * {@link io.sluice.api.ProxyControl}; besides that it uses the foundation, {@code capture}'s endpoints and the
 * exporter in {@code ops.metrics}. Only this package uses {@code com.sun.net.httpserver}.
 */
package io.sluice.admin;
