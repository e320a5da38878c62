/**
 * Read/write splitting's look at a statement (issue #28): {@link io.sluice.readwrite.StatementClassifier} reads a
 * COM_QUERY's SQL text with the shared lexer ({@link io.sluice.sql.SqlLexer}) and says where it may run and why
 * ({@link io.sluice.readwrite.RouteReason}, whose labels the metrics use), and what it does to the session's
 * transaction ({@link io.sluice.readwrite.TransactionEffect}); {@link io.sluice.readwrite.TransactionState} follows a
 * session's transaction and gives the route of its next statement.
 *
 * <p>Foundation layer: it uses {@code sql} only (and Netty's {@code ByteBuf} as a text), so that the policy, the admin
 * endpoint that answers where a statement would go, and the benchmarks all classify one way. See decision 096.
 */
package io.sluice.readwrite;
