/**
 * One backend connection: its login ({@code BackendLogin}, {@code BackendAuthentication}), the relay of responses
 * to the client ({@link io.sluice.backend.BackendConnection}), and the queue of commands in flight with Sluice's own
 * commands as classes ({@code ResetConnection}, {@code SessionCheck}, {@code InitDb}...).
 *
 * <p>Layer: above {@code relay} and {@code codec}, whose tracker and frame reader it drives, and the foundation
 * (config, auth, tls, state, the metrics counters). It never knows the client side: a session reaches it through
 * {@link io.sluice.backend.BorrowingSession}. {@code backend.pool} sits above it.
 */
package io.sluice.backend;
