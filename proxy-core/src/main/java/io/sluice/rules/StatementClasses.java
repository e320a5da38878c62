package io.sluice.rules;

import io.sluice.config.QueryRuleConfig.StatementClass;
import io.sluice.sql.SqlLexer;

/**
 * The statement classes of a digest text, as bits by {@link StatementClass} ordinal: the first word of each of its
 * statements (a multi-statement has the classes of all, so that {@code SELECT 1; DROP TABLE t} is DDL too). Read from
 * the digest, made once per shape, rather than from the statement's bytes: the command path never scans for it.
 */
final class StatementClasses {

    private static final int DML = bit(StatementClass.INSERT) | bit(StatementClass.UPDATE)
            | bit(StatementClass.DELETE) | bit(StatementClass.REPLACE) | bit(StatementClass.LOAD);

    private StatementClasses() {
    }

    /** The class bits of {@code digestText}; {@link StatementClass#DML} is set with any of its members. */
    static int of(String digestText) {
        int classes = 0;
        boolean first = true;
        int n = digestText.length();
        for (int i = 0; i < n; ) {
            long token = SqlLexer.next(SqlLexer.CHARS, digestText, i, n);
            int end = SqlLexer.end(token);
            SqlLexer.Kind kind = SqlLexer.kind(token);
            if (kind == SqlLexer.Kind.PUNCTUATION && digestText.charAt(i) == ';') {
                first = true;
            } else if (first && kind == SqlLexer.Kind.WORD) {
                classes |= bit(classOf(digestText.substring(i, end)));
                first = false;
            } else if (first && SqlLexer.isCode(kind) && kind != SqlLexer.Kind.PUNCTUATION) {
                classes |= bit(StatementClass.OTHER);
                first = false;
            }
            i = end;
        }
        if (classes == 0) {
            classes = bit(StatementClass.OTHER);
        }
        return (classes & DML) != 0 ? classes | bit(StatementClass.DML) : classes;
    }

    static int bit(StatementClass statementClass) {
        return 1 << statementClass.ordinal();
    }

    private static StatementClass classOf(String word) {
        return switch (word.toLowerCase(java.util.Locale.ROOT)) {
            case "select", "with", "values", "table" -> StatementClass.SELECT;
            case "insert" -> StatementClass.INSERT;
            case "update" -> StatementClass.UPDATE;
            case "delete" -> StatementClass.DELETE;
            case "replace" -> StatementClass.REPLACE;
            case "load" -> StatementClass.LOAD;
            case "call" -> StatementClass.CALL;
            case "create", "alter", "drop", "rename", "truncate" -> StatementClass.DDL;
            case "grant", "revoke" -> StatementClass.DCL;
            case "set" -> StatementClass.SET;
            case "show", "describe", "desc", "explain", "help" -> StatementClass.SHOW;
            case "begin", "start", "commit", "rollback", "savepoint", "release", "xa" -> StatementClass.TRANSACTION;
            default -> StatementClass.OTHER;
        };
    }
}
