/**
 * TLS on both sides: the client side's server context and SSLRequest handler, the backend side's {@code sslMode},
 * and the self-signed certificates generated when none is configured.
 *
 * <p>Layer: the foundation; it uses {@code config} and {@code protocol} only.
 */
package io.sluice.tls;
