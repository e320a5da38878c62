/**
 * Transaction pooling ({@code pooling: TRANSACTION}, issue #8): what lets a client session give its backend
 * connection back between transactions and carry on, on another connection, as if nothing had changed.
 *
 * <ul>
 *   <li>{@link io.sluice.multiplexing.SessionTrackers} reads the session state the server reports in OK packets;
 *   <li>{@link io.sluice.multiplexing.SessionVariables} holds what a session or a connection has set, and writes the
 *       one {@code SET} statement that makes a connection match a session;
 *   <li>{@link io.sluice.multiplexing.QuerySniffer} is the light lexer that spots state the trackers do not move
 *       (user variables, locks, temporary tables...);
 *   <li>{@link io.sluice.multiplexing.StatementCache} maps prepared statements onto each backend connection.
 * </ul>
 *
 * See docs/design/2026-11-22-transaction-pooling.md.
 */
package io.sluice.multiplexing;
