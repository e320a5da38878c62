package io.sluice.pooling;

import io.sluice.sql.SessionEffects;
import io.sluice.sql.SqlLexer.Kind;
import io.sluice.sql.SqlLexer;

/**
 * The statements transaction pooling sends in place of a client's, when what the server would do on whichever
 * connection the session has is not what it would do on a connection of the session's own: every
 * {@code session_track_system_variables} assignment followed by one of {@code '*'}, unscoped {@code @@x} assignments
 * scoped, and {@code LAST_INSERT_ID()}, {@code ROW_COUNT()} and {@code FOUND_ROWS()} replaced by the session's own
 * values (issue #38). {@link SessionEffects} says which statements need it; these run only for those, off the common
 * path, and may allocate.
 */
final class QueryRewrites {

    private QueryRewrites() {
    }

    /**
     * Follows every session assignment of {@code session_track_system_variables} in a SET statement with one of
     * {@code '*'}: {@code x = expr} becomes {@code x = expr, x = '*'}. Transaction pooling needs the server to report
     * every variable a session sets; a client that narrows the list (MariaDB Connector/J adds {@code tx_isolation} to
     * the global list at connect) still gets every variable it asked for, and more. The client's own value is still
     * assigned first, so the server refuses what it would refuse directly ({@code NULL}: ERR 1231) and the statement
     * fails whole. Global assignments ({@code GLOBAL}, {@code PERSIST}, {@code @@global.}) are left alone.
     *
     * @return the rewritten statement, or {@code null} when it assigns none
     */
    static String trackAllVariables(String sql) {
        StringBuilder out = null;
        int copied = 0;
        boolean global = false; // the last word was GLOBAL, PERSIST or PERSIST_ONLY
        int n = sql.length();
        for (int i = 0; i < n; ) {
            long token = SqlLexer.next(SqlLexer.CHARS, sql, i, n);
            int start = i;
            i = SqlLexer.end(token);
            Kind kind = SqlLexer.kind(token);
            boolean tracked = kind == Kind.WORD
                    ? !global && is(sql, start, i, SessionEffects.TRACKED_VARIABLES_NAME) && !qualifiedGlobal(sql, start)
                    : kind == Kind.VARIABLE && isSessionTrackedVariables(sql, start, i);
            if (kind == Kind.WORD) {
                global = is(sql, start, i, "GLOBAL") || is(sql, start, i, "PERSIST")
                        || is(sql, start, i, "PERSIST_ONLY");
            }
            if (!tracked) {
                continue;
            }
            int operator = SqlLexer.skipToCode(SqlLexer.CHARS, sql, i, n);
            int valueStart = operator < n ? SqlLexer.end(SqlLexer.next(SqlLexer.CHARS, sql, operator, n)) : n;
            if (is(sql, operator, valueStart, "=") || is(sql, operator, valueStart, ":=")) {
                int valueEnd = expressionEnd(sql, valueStart);
                if (out == null) {
                    out = new StringBuilder(n + 8);
                }
                out.append(sql, copied, valueEnd).append(", ").append(sql, start, operator).append("= '*'");
                copied = valueEnd;
                i = valueEnd;
            }
        }
        return out == null ? null : out.append(sql, copied, n).toString();
    }

    /**
     * Whether the word at {@code start} is the name part of {@code @@global.name} (or {@code @@persist.name}...),
     * which the lexer reads as a variable, a dot and a word.
     */
    private static boolean qualifiedGlobal(String sql, int start) {
        if (start == 0 || sql.charAt(start - 1) != '.') {
            return false;
        }
        int scopeStart = start - 1;
        while (scopeStart > 0 && Character.isLetter(sql.charAt(scopeStart - 1))) {
            scopeStart--;
        }
        return !(is(sql, scopeStart, start - 1, "SESSION") || is(sql, scopeStart, start - 1, "LOCAL"));
    }

    /**
     * Gives every {@code @@name} a SET statement assigns without a scope an explicit {@code @@SESSION.}, which is what
     * the unscoped form means: MariaDB's session tracker reports the assignment only then, and transaction pooling
     * follows session variables through it. Reads ({@code @@name} on the right of {@code =}) are left as written.
     *
     * @return the rewritten statement, or {@code null} when it assigns none
     */
    static String scopeAssignments(String sql) {
        StringBuilder out = null;
        int copied = 0;
        int n = sql.length();
        for (int i = 0; i < n; ) {
            long token = SqlLexer.next(SqlLexer.CHARS, sql, i, n);
            int start = i;
            i = SqlLexer.end(token);
            if (SqlLexer.kind(token) != Kind.VARIABLE || !sql.startsWith("@@", start)
                    || sql.indexOf('.', start) >= 0 && sql.indexOf('.', start) < i || (i < n && sql.charAt(i) == '.')) {
                continue;
            }
            int operator = SqlLexer.skipToCode(SqlLexer.CHARS, sql, i, n);
            int operatorEnd = operator < n ? SqlLexer.end(SqlLexer.next(SqlLexer.CHARS, sql, operator, n)) : n;
            if (is(sql, operator, operatorEnd, "=") || is(sql, operator, operatorEnd, ":=")) {
                if (out == null) {
                    out = new StringBuilder(n + 16);
                }
                out.append(sql, copied, start + 2).append("SESSION.");
                copied = start + 2;
            }
        }
        return out == null ? null : out.append(sql, copied, n).toString();
    }

    /** {@code @@session_track_system_variables}, with {@code session.} or {@code local.} or no scope. */
    private static boolean isSessionTrackedVariables(String sql, int start, int end) {
        int dot = sql.lastIndexOf('.', end - 1);
        int name = dot >= start ? dot + 1 : start + 2;
        return sql.startsWith("@@", start) && is(sql, name, end, SessionEffects.TRACKED_VARIABLES_NAME)
                && (name == start + 2 || is(sql, start + 2, dot, "SESSION") || is(sql, start + 2, dot, "LOCAL"));
    }

    /** Where an expression of a SET list ends: at a comma or semicolon outside parentheses, or the end. */
    private static int expressionEnd(String sql, int i) {
        int depth = 0;
        int n = sql.length();
        while (i < n) {
            long token = SqlLexer.next(SqlLexer.CHARS, sql, i, n);
            if (SqlLexer.kind(token) == Kind.PUNCTUATION) {
                char c = sql.charAt(i);
                if (c == '(') {
                    depth++;
                } else if (c == ')') {
                    depth--;
                } else if ((c == ',' || c == ';') && depth <= 0) {
                    return i;
                }
            }
            i = SqlLexer.end(token);
        }
        return n;
    }

    /**
     * Rewrites each {@code LAST_INSERT_ID()} of a SELECT to {@code LAST_INSERT_ID(<id> | 0)}: the session's own
     * last insert id, with the function's type and width (LAST_INSERT_ID with an argument returns it). A call that
     * is a whole item of the select list keeps its column name with an alias. In any other statement (an INSERT of a
     * child row with its parent's id) to {@code IF(1, CAST(<id> AS UNSIGNED), LAST_INSERT_ID())}, the same value and
     * type without the argument form's side effect: in an INSERT it would become the id the OK packet reports.
     *
     * @param select whether the statement is a SELECT
     * @return the rewritten statement ({@code sql} itself when nothing matched)
     */
    static String withLastInsertId(String sql, long lastInsertId, boolean select) {
        String id = Long.toUnsignedString(lastInsertId);
        return withValue(sql, "LAST_INSERT_ID", select ? "LAST_INSERT_ID(" + id + " | 0)"
                : "IF(1, CAST(" + id + " AS UNSIGNED), LAST_INSERT_ID())", true);
    }

    /**
     * {@code sql} with the session's own {@code FOUND_ROWS()} and {@code ROW_COUNT()} written in, those of them that
     * {@code calls} names ({@link SessionEffects#CALLS_FOUND_ROWS}, {@link SessionEffects#CALLS_ROW_COUNT}).
     */
    static String withPreviousValues(String sql, int calls, long foundRows, long rowCount) {
        String out = (calls & SessionEffects.CALLS_FOUND_ROWS) != 0 ? withFoundRows(sql, foundRows) : sql;
        return (calls & SessionEffects.CALLS_ROW_COUNT) != 0 ? withRowCount(out, rowCount) : out;
    }

    /**
     * Rewrites each {@code ROW_COUNT()} of a SELECT to the session's own count, as {@link #withLastInsertId} does: the
     * server's is the previous statement run on the connection, which may be another session's.
     */
    static String withRowCount(String sql, long rowCount) {
        // IF keeps ROW_COUNT()'s type (BIGINT, 21 wide) without evaluating it: a CAST of a small number is an INT
        return withValue(sql, "ROW_COUNT", "IF(1, " + rowCount + ", ROW_COUNT())", false);
    }

    /** As {@link #withRowCount}, for {@code FOUND_ROWS()}: the rows of the session's own last SELECT. */
    static String withFoundRows(String sql, long foundRows) {
        return withValue(sql, "FOUND_ROWS", "IF(1, " + foundRows + ", FOUND_ROWS())", false);
    }

    /**
     * Rewrites each call {@code name()} (or {@code `name`()}) to {@code replacement}, keeping a whole select item's
     * column name; with {@code identity}, also each read of {@code @@last_insert_id} and {@code @@identity} (with or
     * without {@code session.}), the same value, but not a SET's assignment to one.
     */
    private static String withValue(String sql, String name, String replacement, boolean identity) {
        StringBuilder out = new StringBuilder(sql.length() + 32);
        int depth = 0;
        boolean afterFrom = false;
        boolean itemStart = false; // the last code token was SELECT, DISTINCT or a comma of a select list
        boolean selects = false; // a SELECT came: commas part its items (not a DO's or a SET's)
        int copied = 0;
        int n = sql.length();
        for (int i = 0; i < n; ) {
            long token = SqlLexer.next(SqlLexer.CHARS, sql, i, n);
            int start = i;
            i = SqlLexer.end(token);
            Kind kind = SqlLexer.kind(token);
            if (!SqlLexer.isCode(kind)) {
                continue;
            }
            char c = sql.charAt(start);
            if (kind == Kind.PUNCTUATION && c == '(') {
                depth++;
            } else if (kind == Kind.PUNCTUATION && c == ')') {
                depth--;
            } else if (kind == Kind.WORD && depth == 0 && is(sql, start, i, "FROM")) {
                afterFrom = true;
            }
            int close = kind == Kind.WORD && is(sql, start, i, name)
                    || kind == Kind.QUOTED_IDENTIFIER && i - start > 2 && is(sql, start + 1, i - 1, name)
                    ? emptyCallEnd(sql, i) : identity && kind == Kind.VARIABLE && isIdentity(sql, start, i) ? i : -1;
            if (close < 0) {
                selects |= kind == Kind.WORD && is(sql, start, i, "SELECT");
                itemStart = kind == Kind.WORD && (is(sql, start, i, "SELECT") || is(sql, start, i, "DISTINCT"))
                        || selects && kind == Kind.PUNCTUATION && c == ',';
                continue;
            }
            int next = SqlLexer.skipToCode(SqlLexer.CHARS, sql, close, n);
            int nextEnd = next < n ? SqlLexer.end(SqlLexer.next(SqlLexer.CHARS, sql, next, n)) : n;
            if (close == i && (is(sql, next, nextEnd, "=") || is(sql, next, nextEnd, ":=")) && startsWithSet(sql)) {
                itemStart = false;
                continue; // SET @@last_insert_id = n assigns it
            }
            boolean itemEnd = next == n || is(sql, next, nextEnd, ",") || is(sql, next, nextEnd, ";")
                    || is(sql, next, nextEnd, "FROM");
            out.append(sql, copied, start).append(replacement);
            if (depth == 0 && !afterFrom && itemStart && itemEnd) {
                out.append(" AS `").append(sql.substring(start, close).replace("`", "``")).append('`');
            }
            copied = close;
            i = close;
            itemStart = false;
        }
        return out.append(sql, copied, n).toString();
    }

    /** Whether the variable token is {@code @@last_insert_id} or {@code @@identity}, {@code session.} or not. */
    private static boolean isIdentity(String sql, int start, int end) {
        if (end - start < 3 || sql.charAt(start + 1) != '@') {
            return false;
        }
        int name = start + 2;
        if (end - name > 8 && is(sql, name, name + 8, "SESSION.")) {
            name += 8;
        }
        return is(sql, name, end, "LAST_INSERT_ID") || is(sql, name, end, "IDENTITY");
    }

    private static boolean startsWithSet(String sql) {
        int first = SqlLexer.skipToCode(SqlLexer.CHARS, sql, 0, sql.length());
        int end = first < sql.length() ? SqlLexer.end(SqlLexer.next(SqlLexer.CHARS, sql, first, sql.length())) : first;
        return is(sql, first, end, "SET");
    }

    /** Past the {@code )} of an empty argument list that follows {@code i}, or -1. */
    private static int emptyCallEnd(String sql, int i) {
        int n = sql.length();
        int open = SqlLexer.skipToCode(SqlLexer.CHARS, sql, i, n);
        if (open >= n || sql.charAt(open) != '(') {
            return -1;
        }
        int close = SqlLexer.skipToCode(SqlLexer.CHARS, sql, open + 1, n);
        return close < n && sql.charAt(close) == ')' ? close + 1 : -1;
    }

    private static boolean is(String sql, int start, int end, String upperCaseWord) {
        return SqlLexer.is(SqlLexer.CHARS, sql, start, end, upperCaseWord);
    }
}
