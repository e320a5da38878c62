/**
 * The client side: the pipeline ({@code FrontendInitializer}), the login stage ({@code ClientHandshakeHandler},
 * {@code ClientLogin}, the login back-off), the command relay ({@link io.sluice.frontend.CommandRelayHandler}), the
 * session's lease on a backend, and the {@link io.sluice.frontend.SessionRegistry} of open sessions.
 *
 * <p>Layer: the top of the data path. It uses {@code pooling} (the policy seam), {@code backend.pool},
 * {@code backend}, {@code capture}, {@code relay}, {@code codec}, {@code protocol} and the foundation; only
 * {@code io.sluice} uses it.
 */
package io.sluice.frontend;
