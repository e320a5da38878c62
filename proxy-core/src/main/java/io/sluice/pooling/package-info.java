/**
 * How a client session uses backend connections: the {@link io.sluice.pooling.CommandPolicy} seam between the
 * command relay and the pooling policies, and transaction pooling ({@code pooling: TRANSACTION}), which gives a
 * session's backend connection back between transactions and carries the session on, on another connection, as if
 * nothing had changed.
 *
 * <ul>
 *   <li>{@link io.sluice.pooling.TransactionPooling} is built from {@code Pins} (what keeps a session on its
 *       connection), {@code StatementIds} (prepared statements across connections) and {@code SessionStateFollower}
 *       (the state the server's trackers report);
 *   <li>{@link io.sluice.pooling.SessionPooling} is session pooling for a session that may move to another server:
 *       it records its prepared statements, and drives them by {@code StatementIds} once it moved (decision 106);
 *   <li>{@link io.sluice.sql.StatementScan} (the one analysis of a statement) is the light lexer that spots state the trackers do not move (user
 *       variables, locks, temporary tables...);
 *   <li>{@link io.sluice.pooling.SessionPort} is what a policy may ask of its session.
 * </ul>
 *
 * <p>Layer: above {@code backend} (it runs commands on connections) and {@code backend.pool}, below {@code frontend}
 * (which implements the port and picks the policy). See docs/design/2026-11-22-transaction-pooling.md and
 * docs/design/2026-11-27-session-core.md.
 */
package io.sluice.pooling;
