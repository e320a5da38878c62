/**
 * Query rules (issue #41 item 2): an ordered list of rules from config.yaml's {@code !QUERY_RULES}, each matching
 * statements by digest, digest text, user, schema, client network and statement class, and doing one thing to them
 * (refuse them, route them). Foundation layer: it knows the configuration, the SQL lexer and digest and the statement
 * shape hash, and nothing of sessions or connections, which ask it what to do with a statement's bytes.
 *
 * <p>A statement no rule matches pays one shape hash and one probe of its event loop's table of decisions; a reload
 * makes a new rule set, whose version makes every cached decision stale at its next use (decision 166).
 */
package io.sluice.rules;
