/**
 * SQL text as MySQL's lexer reads it, without parsing: {@link io.sluice.sql.SqlLexer} walks words, literals,
 * identifiers, variables, comments and punctuation, and {@link io.sluice.sql.SqlDigest} gives a statement's shape
 * without its values.
 *
 * <p>The bottom layer: it depends on nothing of Sluice (nor on Netty), so that whatever reads SQL, from transaction
 * pooling's sniffing on the event loop to the slow-query log and traffic replay, reads it here, one way. See decision
 * 063.
 */
package io.sluice.sql;
