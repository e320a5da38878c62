package io.sluice.sql;

import io.sluice.sql.SqlLexer.Source;

/**
 * The bytes that {@link SqlLexer} may read otherwise than the server does in a session (decision 204): it assumes a
 * character set whose multi-byte characters never end in an ASCII byte, backslash escapes in strings and double
 * quotes around strings. A session breaks the first in sjis, cp932, gbk, gb18030 or big5 ({@link ClientCharsets}),
 * the second with {@code NO_BACKSLASH_ESCAPES} in its {@code sql_mode}, the third with {@code ANSI_QUOTES} (also part
 * of {@code ANSI}, {@code ORACLE}, {@code MSSQL}, {@code DB2}, {@code POSTGRESQL} and {@code MAXDB}). A statement
 * without such a byte is read alike in every case; one with such a byte counts as code the text does not show, but
 * for a double-quoted name that changes nothing Sluice reads ({@link #nameUnread}).
 */
public final class UnreadText {

    /** Bytes at or above 0x80: a two-byte character may end in a backslash or a back quote. */
    public static final int NON_ASCII = 1;
    /** Backslashes: a character in a string, not an escape ({@code NO_BACKSLASH_ESCAPES}). */
    public static final int BACKSLASH = 2;
    /** Double quotes: they delimit a name, in which a backslash is a character ({@code ANSI_QUOTES}). */
    public static final int DOUBLE_QUOTE = 4;
    /** What a {@code sql_mode} Sluice cannot name may make unread. */
    public static final int ANY_SQL_MODE = BACKSLASH | DOUBLE_QUOTE;

    private static final String[] ANSI_QUOTING = {"ANSI", "ORACLE", "MSSQL", "DB2", "POSTGRESQL", "MAXDB"};

    private UnreadText() {
    }

    /** What a {@code sql_mode} value (as {@code @@sql_mode} shows it) makes unread; {@code null}: nothing known, 0. */
    public static int ofSqlMode(String sqlMode) {
        if (sqlMode == null) {
            return 0;
        }
        return ofSqlMode(SqlLexer.CHARS, sqlMode, 0, sqlMode.length());
    }

    /** As {@link #ofSqlMode(String)}, for mode names in a text (a string literal of a {@code SET sql_mode}). */
    static <T> int ofSqlMode(Source<T> s, T text, int from, int to) {
        int unread = contains(s, text, from, to, "NO_BACKSLASH_ESCAPES") ? BACKSLASH : 0;
        for (String name : ANSI_QUOTING) {
            if (contains(s, text, from, to, name)) {
                return unread | DOUBLE_QUOTE;
            }
        }
        return unread;
    }

    /**
     * Whether the text has a byte of the kinds {@code unread} names. With none named it reads nothing: session
     * pooling asks for every statement its filter lets by, and nearly every session has none.
     */
    public static <T> boolean in(Source<T> s, T text, int from, int to, int unread) {
        if (unread == 0) {
            return false;
        }
        for (int i = from; i < to; i++) {
            int c = s.at(text, i);
            if (c >= 0x80 ? (unread & NON_ASCII) != 0
                    : c == '\\' ? (unread & BACKSLASH) != 0 : c == '"' && (unread & DOUBLE_QUOTE) != 0) {
                return true;
            }
        }
        return false;
    }

    /**
     * With {@code ANSI_QUOTES}: whether the token from {@code start} to {@code end}, which the lexer read as a string,
     * is a double-quoted name whose reading matters: one with a backslash (the lexer ended it elsewhere), one before
     * {@code (} (a function's call, maybe stored, maybe {@code GET_LOCK}), or one of {@code hidden}'s tables and
     * views. Other double-quoted names read as strings change nothing Sluice reads of the statement.
     */
    static <T> boolean nameUnread(Source<T> s, T text, int start, int end, int to, HiddenCodeNames hidden) {
        return s.at(text, start) == '"' && (in(s, text, start, end, BACKSLASH) || RouteWords.opensCall(s, text, end, to)
                || end - start > 2 && !hidden.isEmpty() && hidden.contains(s, text, start + 1, end - 1));
    }

    /** Whether {@code upper} (upper case) is in the text, in any case. */
    private static <T> boolean contains(Source<T> s, T text, int from, int to, String upper) {
        for (int i = from; i + upper.length() <= to; i++) {
            if (SqlLexer.is(s, text, i, i + upper.length(), upper)) {
                return true;
            }
        }
        return false;
    }
}
