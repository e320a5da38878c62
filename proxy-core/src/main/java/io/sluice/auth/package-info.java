/**
 * Password hashes and credentials: mysql_native_password, caching_sha2_password and the SHA-256 crypt inside its
 * stored form, and the RSA key pair for passwords sent without TLS.
 *
 * <p>Layer: the foundation; it uses {@code protocol}'s scramble only.
 */
package io.sluice.auth;
