/**
 * The admin HTTP API ({@code /metrics}, the probes {@code /livez} and {@code /readyz}, {@code /health}, the
 * version, backends, drain, sessions, the masked configuration, reload, traffic capture): HTTP/1.1 read without
 * blocking by {@code AdminPort}, with limits against hostile clients, and answered on a few threads
 * of its own (decisions 021, 060, 078 and 132).
 *
 * <p>Layer: operations, started by {@code ops.SluiceServer}. It knows the proxy only as
 * {@link io.sluice.api.ProxyControl}; besides that it uses the foundation, {@code capture}'s endpoints and the
 * exporter in {@code ops.metrics}. It uses no HTTP library (neither Netty's, decision 060, nor the JDK's, 132).
 */
package io.sluice.admin;
