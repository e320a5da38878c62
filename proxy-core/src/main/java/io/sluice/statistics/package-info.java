/**
 * Statement statistics by digest (issue #41): per event loop, a table of counters for each statement shape, user,
 * schema and backend group, written by the loop alone and merged when read (the admin API, {@code sluice-ctl top},
 * the metrics). Foundation layer: it knows the SQL lexer and digest, and nothing of sessions or connections, which
 * hand it bytes and outcomes.
 */
package io.sluice.statistics;
