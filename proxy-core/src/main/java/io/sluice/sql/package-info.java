/**
 * SQL text as MySQL's lexer reads it, without parsing: {@link io.sluice.sql.SqlLexer} walks words, literals,
 * identifiers, variables, comments and punctuation.
 *
 * <p>The bottom layer: it depends on nothing of Sluice (nor on Netty), so that whatever reads SQL, from transaction
 * pooling's sniffing on the event loop to the slow-query log and traffic replay, reads it here, one way.
 */
package io.sluice.sql;
