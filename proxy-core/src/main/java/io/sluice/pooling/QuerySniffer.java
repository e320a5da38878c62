package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * The light lexer of transaction pooling: one pass over a COM_QUERY's SQL text that finds what pins a session to its
 * backend connection, without parsing. It reads words outside string literals, quoted identifiers and comments
 * (MySQL's executable comments {@code /*!...*}{@code /} count as code), and compares them with a few keywords.
 *
 * <p>It errs on the side of pinning: a user variable merely read pins the session too, because the session that
 * reads one has usually set it. It allocates nothing.
 */
public final class QuerySniffer {

    /** {@code @name} (not {@code @@name}): a user variable. */
    public static final int USER_VARIABLE = 1;
    /** The word TEMPORARY: CREATE or DROP TEMPORARY TABLE. */
    public static final int TEMPORARY = 1 << 1;
    /** Starts with LOCK: LOCK TABLES. */
    public static final int LOCK_TABLES = 1 << 2;
    /** Starts with UNLOCK: UNLOCK TABLES. */
    public static final int UNLOCK_TABLES = 1 << 3;
    /** Calls GET_LOCK(). */
    public static final int GET_LOCK = 1 << 4;
    /** Calls RELEASE_LOCK(). */
    public static final int RELEASE_LOCK = 1 << 5;
    /** Calls RELEASE_ALL_LOCKS(). */
    public static final int RELEASE_ALL_LOCKS = 1 << 6;
    /** XA START or XA BEGIN. */
    public static final int XA_START = 1 << 7;
    /** XA COMMIT or XA ROLLBACK. */
    public static final int XA_END = 1 << 8;
    /** SQL_CALC_FOUND_ROWS. */
    public static final int CALC_FOUND_ROWS = 1 << 9;
    /** Starts with PREPARE: an SQL-level prepared statement. */
    public static final int SQL_PREPARE = 1 << 10;
    /** SET TRANSACTION ... (for the next transaction only, unlike SET SESSION TRANSACTION). */
    public static final int SET_TRANSACTION = 1 << 11;
    /** A SELECT that calls {@code LAST_INSERT_ID()} without argument somewhere: see {@link #withLastInsertId}. */
    public static final int SELECT_CALLS_LAST_INSERT_ID = 1 << 14;
    /** Calls {@code LAST_INSERT_ID(expr)}, which sets the value {@code LAST_INSERT_ID()} returns next. */
    public static final int SETS_LAST_INSERT_ID = 1 << 15;
    /** Names {@code session_track_system_variables}: a client choosing what the server reports (MariaDB Connector/J). */
    public static final int TRACKED_VARIABLES = 1 << 13;

    private static final String TRACKED_VARIABLES_NAME = "session_track_system_variables";

    private static final byte[] W_TEMPORARY = bytes("TEMPORARY");
    private static final byte[] W_GET_LOCK = bytes("GET_LOCK");
    private static final byte[] W_RELEASE_LOCK = bytes("RELEASE_LOCK");
    private static final byte[] W_RELEASE_ALL_LOCKS = bytes("RELEASE_ALL_LOCKS");
    private static final byte[] W_SQL_CALC_FOUND_ROWS = bytes("SQL_CALC_FOUND_ROWS");
    private static final byte[] W_LAST_INSERT_ID = bytes("LAST_INSERT_ID");
    private static final byte[] W_TRACKED_VARIABLES = bytes("SESSION_TRACK_SYSTEM_VARIABLES");
    private static final byte[] W_LOCK = bytes("LOCK");
    private static final byte[] W_UNLOCK = bytes("UNLOCK");
    private static final byte[] W_XA = bytes("XA");
    private static final byte[] W_PREPARE = bytes("PREPARE");
    private static final byte[] W_SET = bytes("SET");
    private static final byte[] W_SELECT = bytes("SELECT");
    private static final byte[] W_TRANSACTION = bytes("TRANSACTION");
    private static final byte[] W_START = bytes("START");
    private static final byte[] W_BEGIN = bytes("BEGIN");
    private static final byte[] W_COMMIT = bytes("COMMIT");
    private static final byte[] W_ROLLBACK = bytes("ROLLBACK");

    private QuerySniffer() {
    }

    /**
     * Sniffs the SQL text in {@code buf} between {@code from} and {@code to} (borrowed: indexes are not moved).
     *
     * @return a combination of this class's flags
     */
    public static int sniff(ByteBuf buf, int from, int to) {
        int flags = 0;
        int words = 0; // words seen so far, to know the first and the second
        byte[] first = null;
        int lastWordEnd = -1;
        int i = from;
        while (i < to) {
            int c = buf.getUnsignedByte(i);
            if (c == '\'' || c == '"' || c == '`') {
                i = skipQuoted(buf, i + 1, to, c);
                continue;
            }
            if (c == '#' || (c == '-' && i + 2 < to && buf.getByte(i + 1) == '-' && isSpace(buf.getByte(i + 2)))) {
                while (i < to && buf.getByte(i) != '\n') {
                    i++;
                }
                continue;
            }
            if (c == '/' && i + 1 < to && buf.getByte(i + 1) == '*') {
                int bang = i + 2 < to ? buf.getByte(i + 2) : 0;
                if (bang == '!' || (bang == 'M' && i + 3 < to && buf.getByte(i + 3) == '!')) {
                    i += bang == '!' ? 3 : 4; // executable comment: its body is SQL; skip the version number
                    while (i < to && Character.isDigit(buf.getByte(i))) {
                        i++;
                    }
                    continue;
                }
                i = skipComment(buf, i + 2, to);
                continue;
            }
            if (c == '@') {
                if (i + 1 < to && buf.getByte(i + 1) == '@') {
                    i += 2; // a system variable: skip its name
                    while (i < to && (isWordByte(buf.getByte(i)) || buf.getByte(i) == '.')) {
                        i++;
                    }
                    continue;
                }
                flags |= USER_VARIABLE;
                i++;
                continue;
            }
            if (isWordByte((byte) c)) {
                int start = i;
                while (i < to && isWordByte(buf.getByte(i))) {
                    i++;
                }
                int length = i - start;
                words++;
                if (words == 1) {
                    first = matches(buf, start, length, W_LOCK) ? W_LOCK
                            : matches(buf, start, length, W_UNLOCK) ? W_UNLOCK
                            : matches(buf, start, length, W_XA) ? W_XA
                            : matches(buf, start, length, W_PREPARE) ? W_PREPARE
                            : matches(buf, start, length, W_SET) ? W_SET
                            : matches(buf, start, length, W_SELECT) ? W_SELECT : null;
                    if (first == W_LOCK) {
                        flags |= LOCK_TABLES;
                    } else if (first == W_UNLOCK) {
                        flags |= UNLOCK_TABLES;
                    } else if (first == W_PREPARE) {
                        flags |= SQL_PREPARE;
                    }
                } else if (words == 2 && first == W_XA) {
                    if (matches(buf, start, length, W_START) || matches(buf, start, length, W_BEGIN)) {
                        flags |= XA_START;
                    } else if (matches(buf, start, length, W_COMMIT) || matches(buf, start, length, W_ROLLBACK)) {
                        flags |= XA_END;
                    }
                } else if (words == 2 && first == W_SET && matches(buf, start, length, W_TRANSACTION)) {
                    flags |= SET_TRANSACTION;
                }
                if (matches(buf, start, length, W_LAST_INSERT_ID)) {
                    int open = skipSpaces(buf, i, to);
                    if (open < to && buf.getByte(open) == '(') {
                        if (isCallWithoutArgument(buf, i, to)) {
                            if (first == W_SELECT) {
                                flags |= SELECT_CALLS_LAST_INSERT_ID;
                            }
                        } else {
                            flags |= SETS_LAST_INSERT_ID;
                        }
                    }
                }
                if (length >= 8) {
                    if (matches(buf, start, length, W_TEMPORARY)) {
                        flags |= TEMPORARY;
                    } else if (matches(buf, start, length, W_GET_LOCK)) {
                        flags |= GET_LOCK;
                    } else if (matches(buf, start, length, W_RELEASE_LOCK)) {
                        flags |= RELEASE_LOCK;
                    } else if (matches(buf, start, length, W_RELEASE_ALL_LOCKS)) {
                        flags |= RELEASE_ALL_LOCKS;
                    } else if (matches(buf, start, length, W_SQL_CALC_FOUND_ROWS)) {
                        flags |= CALC_FOUND_ROWS;
                    } else if (matches(buf, start, length, W_TRACKED_VARIABLES)) {
                        flags |= TRACKED_VARIABLES;
                    }
                }
                lastWordEnd = i;
                continue;
            }
            i++;
        }
        return lastWordEnd < 0 ? 0 : flags;
    }

    /**
     * Rewrites every session assignment of {@code session_track_system_variables} in a SET statement to {@code '*'}.
     * Transaction pooling needs the server to report every variable a session sets; a client that narrows the list
     * (MariaDB Connector/J adds {@code tx_isolation} to the global list at connect) still gets every variable it asked
     * for, and more. Global assignments are left alone.
     *
     * @return the rewritten statement, or {@code null} when it assigns none
     */
    public static String trackAllVariables(String sql) {
        StringBuilder out = null;
        int copied = 0;
        String previousWord = "";
        int i = 0;
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '"' || c == '`') {
                i = skipQuoted(sql, i + 1, c);
                continue;
            }
            if (!isWordChar(c)) {
                i++;
                continue;
            }
            int start = i;
            while (i < n && isWordChar(sql.charAt(i))) {
                i++;
            }
            String word = sql.substring(start, i);
            if (word.equalsIgnoreCase(TRACKED_VARIABLES_NAME) && !previousWord.equalsIgnoreCase("GLOBAL")) {
                int j = i;
                while (j < n && Character.isWhitespace(sql.charAt(j))) {
                    j++;
                }
                if (j < n && sql.charAt(j) == ':') {
                    j++;
                }
                if (j < n && sql.charAt(j) == '=') {
                    int valueStart = j + 1;
                    int valueEnd = expressionEnd(sql, valueStart);
                    if (out == null) {
                        out = new StringBuilder(n + 8);
                    }
                    out.append(sql, copied, valueStart).append(" '*'");
                    copied = valueEnd;
                    i = valueEnd;
                }
            }
            previousWord = word;
        }
        return out == null ? null : out.append(sql, copied, n).toString();
    }

    /** Where an expression of a SET list ends: at a comma or semicolon outside parentheses and quotes, or the end. */
    private static int expressionEnd(String sql, int i) {
        int depth = 0;
        while (i < sql.length()) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '"' || c == '`') {
                i = skipQuoted(sql, i + 1, c);
                continue;
            }
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if ((c == ',' || c == ';') && depth <= 0) {
                return i;
            }
            i++;
        }
        return i;
    }

    private static int skipQuoted(String sql, int i, char quote) {
        while (i < sql.length()) {
            char c = sql.charAt(i);
            if (c == '\\' && quote != '`') {
                i += 2;
                continue;
            }
            i++;
            if (c == quote) {
                if (i < sql.length() && sql.charAt(i) == quote) {
                    i++;
                    continue;
                }
                return i;
            }
        }
        return sql.length();
    }

    private static boolean isWordChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '$';
    }

    private static boolean isCallWithoutArgument(ByteBuf buf, int i, int to) {
        int j = skipSpaces(buf, i, to);
        if (j >= to || buf.getByte(j) != '(') {
            return false;
        }
        j = skipSpaces(buf, j + 1, to);
        return j < to && buf.getByte(j) == ')';
    }

    /**
     * Rewrites each {@code LAST_INSERT_ID()} of a SELECT to {@code LAST_INSERT_ID(<id> | 0)}: the session's own
     * last insert id, with the function's type and width (LAST_INSERT_ID with an argument returns it). A call that
     * is a whole item of the select list keeps its column name with an alias.
     *
     * @return the rewritten statement ({@code sql} itself when nothing matched)
     */
    public static String withLastInsertId(String sql, long lastInsertId) {
        String value = Long.toUnsignedString(lastInsertId) + " | 0";
        StringBuilder out = new StringBuilder(sql.length() + 32);
        int depth = 0;
        boolean afterFrom = false;
        String previousWord = "";
        char previousSymbol = 0;
        int copied = 0;
        int i = 0;
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            if (c == '\'' || c == '"' || c == '`') {
                i = skipQuoted(sql, i + 1, c);
                previousSymbol = c;
                continue;
            }
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            }
            if (!isWordChar(c)) {
                if (!Character.isWhitespace(c)) {
                    previousSymbol = c;
                    previousWord = "";
                }
                i++;
                continue;
            }
            int start = i;
            while (i < n && isWordChar(sql.charAt(i))) {
                i++;
            }
            String word = sql.substring(start, i);
            if (depth == 0 && word.equalsIgnoreCase("FROM")) {
                afterFrom = true;
            }
            if (word.equalsIgnoreCase("LAST_INSERT_ID")) {
                int open = skipSpaces(sql, i);
                int close = open < n && sql.charAt(open) == '(' ? skipSpaces(sql, open + 1) : -1;
                if (close >= 0 && close < n && sql.charAt(close) == ')') {
                    int end = close + 1;
                    String call = sql.substring(start, end);
                    int next = skipSpaces(sql, end);
                    boolean itemStart = previousWord.equalsIgnoreCase("SELECT")
                            || previousWord.equalsIgnoreCase("DISTINCT") || previousSymbol == ',';
                    boolean itemEnd = next >= n || sql.charAt(next) == ',' || sql.charAt(next) == ';'
                            || sql.regionMatches(true, next, "FROM", 0, 4);
                    out.append(sql, copied, start).append("LAST_INSERT_ID(").append(value).append(')');
                    if (depth == 0 && !afterFrom && itemStart && itemEnd) {
                        out.append(" AS `").append(call.replace("`", "``")).append('`');
                    }
                    copied = end;
                    i = end;
                    previousWord = "";
                    previousSymbol = ')';
                    continue;
                }
            }
            previousWord = word;
            previousSymbol = 0;
        }
        return out.append(sql, copied, n).toString();
    }

    private static int skipSpaces(String sql, int i) {
        while (i < sql.length() && Character.isWhitespace(sql.charAt(i))) {
            i++;
        }
        return i;
    }

    private static int skipSpaces(ByteBuf buf, int i, int to) {
        while (i < to && isSpace(buf.getByte(i))) {
            i++;
        }
        return i;
    }

    private static int skipQuoted(ByteBuf buf, int i, int to, int quote) {
        while (i < to) {
            int c = buf.getUnsignedByte(i);
            if (c == '\\' && quote != '`') {
                i += 2;
                continue;
            }
            i++;
            if (c == quote) {
                if (i < to && buf.getUnsignedByte(i) == quote) {
                    i++; // a doubled quote stands for itself
                    continue;
                }
                return i;
            }
        }
        return to;
    }

    private static int skipComment(ByteBuf buf, int i, int to) {
        while (i + 1 < to) {
            if (buf.getByte(i) == '*' && buf.getByte(i + 1) == '/') {
                return i + 2;
            }
            i++;
        }
        return to;
    }

    private static boolean matches(ByteBuf buf, int start, int length, byte[] word) {
        if (length != word.length) {
            return false;
        }
        for (int k = 0; k < length; k++) {
            int b = buf.getByte(start + k);
            if (b >= 'a' && b <= 'z') {
                b -= 'a' - 'A';
            }
            if (b != word[k]) {
                return false;
            }
        }
        return true;
    }

    private static boolean isWordByte(byte b) {
        return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '_' || b == '$'
                || b < 0; // UTF-8 bytes of non-ASCII identifiers
    }

    private static boolean isSpace(byte b) {
        return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f';
    }

    private static byte[] bytes(String word) {
        return word.getBytes(StandardCharsets.US_ASCII);
    }
}
