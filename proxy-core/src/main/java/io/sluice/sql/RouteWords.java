package io.sluice.sql;

import io.sluice.sql.SqlLexer.Kind;
import io.sluice.sql.SqlLexer.Source;

/** What a word, a variable or a quoted call adds to a statement's {@link RouteFacts}: {@link StatementScan}'s rules. */
final class RouteWords {

    private RouteWords() {
    }

    /**
     * A name in back quotes followed by {@code (}: MariaDB calls a built-in so named as it calls it unquoted
     * ({@code `GET_LOCK`('x', 0)} takes a lock), so it is looked at as the word; anything not on the read-only list
     * is a call that may write.
     */
    static <T> int quotedCall(Source<T> s, T text, int start, int end, int to, boolean dotBefore, int depth) {
        int nameStart = start + 1;
        int nameEnd = end - 1;
        if (dotBefore || nameEnd <= nameStart || !Functions.isReadOnly(s, text, nameStart, nameEnd)) {
            return RouteFacts.SIDE_EFFECT;
        }
        Keyword word = Keyword.of(s, text, nameStart, nameEnd);
        if (word == null) {
            return 0;
        }
        switch (word) {
            case LAST_INSERT_ID, LASTVAL, CONNECTION_ID, FOUND_ROWS, ROW_COUNT:
                return word(s, text, word, null, end, to, depth);
            default:
                return 0;
        }
    }

    /** What a word other than the first adds. */
    static <T> int word(Source<T> s, T text, Keyword word, Keyword previous, int end, int to, int depth) {
        switch (word) {
            case FOR:
                Keyword next = nextWord(s, text, end, to);
                return next == Keyword.UPDATE || next == Keyword.SHARE ? RouteFacts.LOCKING : 0;
            case LOCK:
                return nextWord(s, text, end, to) == Keyword.IN ? RouteFacts.LOCKING : RouteFacts.LOCK_WORD;
            case INTO:
                return RouteFacts.INTO;
            case GLOBAL, PERSIST, PERSIST_ONLY:
                return RouteFacts.SERVER_WIDE;
            case ONLY:
                return previous == Keyword.READ ? RouteFacts.READ_ONLY : 0;
            case WRITE:
                return previous == Keyword.READ ? RouteFacts.READ_WRITE : 0;
            case CHAIN:
                return previous == Keyword.AND ? RouteFacts.CHAIN : 0;
            case TO:
                return RouteFacts.TO;
            case ANALYZE:
                return RouteFacts.ANALYZE;
            case EXPORT:
                return RouteFacts.LOCK_WORD;
            case SQL_CALC_FOUND_ROWS:
                return RouteFacts.PINNING;
            case TEMPORARY:
                return RouteFacts.TEMPORARY;
            case INSERT, UPDATE, DELETE, REPLACE:
                // INSERT(str, ...) and REPLACE(str, ...) are also string functions
                return depth == 0 && !opensCall(s, text, end, to) ? RouteFacts.WRITE_WORD : 0;
            case AUTOCOMMIT:
                return autocommit(s, text, end, to);
            case TX_READ_ONLY, TRANSACTION_READ_ONLY:
                return accessMode(s, text, end, to);
            case VALUE:
                return previous == Keyword.NEXT ? RouteFacts.SIDE_EFFECT
                        : previous == Keyword.PREVIOUS ? RouteFacts.SESSION_STATE : 0;
            case GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK, IS_USED_LOCK, NEXTVAL, SETVAL:
                return opensCall(s, text, end, to) ? RouteFacts.SIDE_EFFECT : 0;
            case LASTVAL, CONNECTION_ID:
                return opensCall(s, text, end, to) ? RouteFacts.SESSION_STATE : 0;
            case FOUND_ROWS, ROW_COUNT:
                return opensCall(s, text, end, to) ? RouteFacts.DIAGNOSTICS : 0;
            case LAST_INSERT_ID:
                if (!opensCall(s, text, end, to)) {
                    return 0;
                }
                int open = SqlLexer.skipToCode(s, text, end, to);
                int close = SqlLexer.skipToCode(s, text, open + 1, to);
                return close < to && s.at(text, close) == ')' ? RouteFacts.SESSION_STATE : RouteFacts.SIDE_EFFECT;
            default:
                return 0;
        }
    }

    /** {@code @name} pins; {@code @@warning_count}, {@code @@last_insert_id}, {@code @@autocommit = 0} tell. */
    static <T> int variable(Source<T> s, T text, int start, int end, int to) {
        if (end - start < 2 || s.at(text, start + 1) != '@') {
            return RouteFacts.PINNING;
        }
        int name = end;
        while (name > start && s.at(text, name - 1) != '.' && s.at(text, name - 1) != '@') {
            name--;
        }
        if (name > start + 3 && s.at(text, name - 1) == '.' && (SqlLexer.is(s, text, start + 2, name - 1, "GLOBAL")
                || SqlLexer.is(s, text, start + 2, name - 1, "PERSIST")
                || SqlLexer.is(s, text, start + 2, name - 1, "PERSIST_ONLY"))) {
            return RouteFacts.SERVER_WIDE;
        }
        if (SqlLexer.is(s, text, name, end, "WARNING_COUNT") || SqlLexer.is(s, text, name, end, "ERROR_COUNT")) {
            return RouteFacts.DIAGNOSTICS;
        }
        if (SqlLexer.is(s, text, name, end, "LAST_INSERT_ID") || SqlLexer.is(s, text, name, end, "IDENTITY")
                || SqlLexer.is(s, text, name, end, "LAST_GTID")) {
            return RouteFacts.SESSION_STATE;
        }
        if (SqlLexer.is(s, text, name, end, "TX_READ_ONLY")
                || SqlLexer.is(s, text, name, end, "TRANSACTION_READ_ONLY")) {
            return accessMode(s, text, end, to);
        }
        return SqlLexer.is(s, text, name, end, "AUTOCOMMIT") ? autocommit(s, text, end, to) : 0;
    }

    /**
     * After the name {@code tx_read_only} or {@code transaction_read_only}: an assignment of anything but 1, ON or
     * TRUE (0, OFF, DEFAULT, an expression) may make the access mode READ WRITE. A mere mention (a SELECT of it) is
     * nothing.
     */
    private static <T> int accessMode(Source<T> s, T text, int end, int to) {
        int value = assignedValue(s, text, end, to);
        if (value < 0) {
            return 0;
        }
        int valueEnd = value >= to ? to : SqlLexer.end(SqlLexer.next(s, text, value, to));
        int after = SqlLexer.skipToCode(s, text, valueEnd, to);
        boolean plain = after >= to || s.at(text, after) == ',' || s.at(text, after) == ';';
        boolean readOnly = value < to && (SqlLexer.is(s, text, value, valueEnd, "1")
                || SqlLexer.is(s, text, value, valueEnd, "ON") || SqlLexer.is(s, text, value, valueEnd, "TRUE"));
        return plain && readOnly ? 0 : RouteFacts.ACCESS_READ_WRITE;
    }

    /** Where the value starts after a variable's name ending at {@code end}: past {@code =} or {@code :=}; else -1. */
    private static <T> int assignedValue(Source<T> s, T text, int end, int to) {
        int operator = SqlLexer.skipToCode(s, text, end, to);
        if (operator >= to) {
            return -1;
        }
        int operatorEnd = SqlLexer.end(SqlLexer.next(s, text, operator, to));
        if (!SqlLexer.is(s, text, operator, operatorEnd, "=") && !SqlLexer.is(s, text, operator, operatorEnd, ":=")) {
            return -1;
        }
        return SqlLexer.skipToCode(s, text, operatorEnd, to);
    }

    /** After the name {@code autocommit}: {@code = 0} or {@code := OFF} turns it off, 1, ON, TRUE, DEFAULT on. */
    private static <T> int autocommit(Source<T> s, T text, int end, int to) {
        int value = assignedValue(s, text, end, to);
        if (value < 0 || value >= to) {
            return 0;
        }
        int valueEnd = SqlLexer.end(SqlLexer.next(s, text, value, to));
        if (SqlLexer.is(s, text, value, valueEnd, "0") || SqlLexer.is(s, text, value, valueEnd, "OFF")
                || SqlLexer.is(s, text, value, valueEnd, "FALSE")) {
            return RouteFacts.AUTOCOMMIT_OFF;
        }
        if (SqlLexer.is(s, text, value, valueEnd, "1") || SqlLexer.is(s, text, value, valueEnd, "ON")
                || SqlLexer.is(s, text, value, valueEnd, "TRUE") || SqlLexer.is(s, text, value, valueEnd, "DEFAULT")) {
            return RouteFacts.AUTOCOMMIT_ON;
        }
        return 0; // an expression: the server's status flags will tell
    }

    /** Whether the next code after {@code end} is {@code (}: the word before it is a function's name. */
    static <T> boolean opensCall(Source<T> s, T text, int end, int to) {
        int next = SqlLexer.skipToCode(s, text, end, to);
        return next < to && s.at(text, next) == '(';
    }

    /** The next code token after {@code end} as a keyword, or {@code null}. */
    private static <T> Keyword nextWord(Source<T> s, T text, int end, int to) {
        int next = SqlLexer.skipToCode(s, text, end, to);
        if (next >= to) {
            return null;
        }
        long token = SqlLexer.next(s, text, next, to);
        return SqlLexer.kind(token) == Kind.WORD ? Keyword.of(s, text, next, SqlLexer.end(token)) : null;
    }
}
