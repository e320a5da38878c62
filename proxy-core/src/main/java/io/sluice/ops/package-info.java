/**
 * The composition root: {@link io.sluice.ops.SluiceServer} starts the proxy, then its metrics exporter and admin
 * port, as the configuration asks, and closes them in order.
 *
 * <p>Layer: the top of proxy-core; it may use every package below. Only proxy-bootstrap uses it.
 */
package io.sluice.ops;
