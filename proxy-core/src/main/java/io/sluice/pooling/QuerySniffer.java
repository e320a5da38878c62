package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.sluice.sql.Functions;
import io.sluice.sql.SqlLexer;
import io.sluice.sql.SqlLexer.Kind;
import io.sluice.sql.SqlLexer.Source;

/**
 * Transaction pooling's look at a COM_QUERY: one pass of {@link SqlLexer} over its SQL text that finds what pins a
 * session to its backend connection, without parsing. It reads words outside string literals, quoted identifiers and
 * comments (MySQL's executable comments {@code /*!...*}{@code /} count as code), and compares them with a few
 * keywords.
 *
 * <p>It errs on the side of pinning: a user variable merely read pins the session too, because the session that
 * reads one has usually set it. {@link #sniff} runs on the event loop for every statement and allocates nothing.
 */
public final class QuerySniffer {

    /** {@code @name} (not {@code @@name}): a user variable. */
    public static final int USER_VARIABLE = 1;
    /** The word TEMPORARY: CREATE or DROP TEMPORARY TABLE. */
    public static final int TEMPORARY = 1 << 1;
    /**
     * Starts with LOCK (LOCK TABLES), or a FLUSH that takes table locks held until UNLOCK TABLES: FLUSH TABLES WITH
     * READ LOCK, FLUSH TABLES ... FOR EXPORT.
     */
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
    /** A SELECT that calls {@code LAST_INSERT_ID()} without argument somewhere: see {@link QueryRewrites#withLastInsertId}. */
    public static final int SELECT_CALLS_LAST_INSERT_ID = 1 << 14;
    /** Calls {@code LAST_INSERT_ID(expr)}, which sets the value {@code LAST_INSERT_ID()} returns next. */
    public static final int SETS_LAST_INSERT_ID = 1 << 15;
    /**
     * A SET statement names a system variable as {@code @@name}, without {@code SESSION.} or {@code GLOBAL.}: MariaDB's
     * tracker does not report such an assignment (10.11: {@code SET @@autocommit = 0} is silent where
     * {@code SET autocommit = 0} and {@code SET @@session.autocommit = 0} are reported). See {@link QueryRewrites#scopeAssignments}.
     */
    public static final int UNSCOPED_SYSTEM_VARIABLE = 1 << 16;
    /** SHOW WARNINGS, SHOW ERRORS, SHOW COUNT(*) ...: reads the last statement's diagnostics, which it leaves. */
    public static final int DIAGNOSTICS = 1 << 17;
    /** Names {@code session_track_system_variables}: a client choosing what the server reports (MariaDB Connector/J). */
    public static final int TRACKED_VARIABLES = 1 << 13;
    /**
     * Runs code the text does not show: CALL (a procedure), EXECUTE (EXECUTE IMMEDIATE, or an SQL prepared statement),
     * BINLOG (events of a binary log). What it leaves on the session (a named lock, LOCK TABLES, a temporary table) is
     * known to no tracker for certain: the session keeps its connection until it ends or resets (issue #38).
     */
    public static final int STORED_CODE = 1 << 18;
    /** Starts with HANDLER: an open handler is a cursor on the server connection, which no tracker reports. */
    public static final int HANDLER = 1 << 19;
    /**
     * SET ROLE: the session's privileges, which COM_RESET_CONNECTION does not undo on MariaDB and no tracker names.
     */
    public static final int SET_ROLE = 1 << 20;
    /**
     * A SET of a variable that the next statement alone uses ({@code insert_id}, {@code identity},
     * {@code last_insert_id}, {@code rand_seed1}, {@code rand_seed2}), which mysqlbinlog's output and replication
     * tools write: re-applied on another connection it would reach the wrong statement, and left on a pooled one,
     * another session's INSERT.
     */
    public static final int STATEMENT_VARIABLE = 1 << 21;
    /** A SELECT that calls {@code ROW_COUNT()}: the previous statement's count, see {@link QueryRewrites#withRowCount}. */
    public static final int SELECT_CALLS_ROW_COUNT = 1 << 22;
    /** Starts with SELECT: a new SELECT replaces what {@code FOUND_ROWS()} returns. */
    public static final int SELECT_STATEMENT = 1 << 23;
    /** Calls {@code FOUND_ROWS()}. */
    public static final int CALLS_FOUND_ROWS = 1 << 24;
    /** BEGIN or START TRANSACTION: the transaction that uses what a SET TRANSACTION set. */
    public static final int BEGINS_TRANSACTION = 1 << 25;
    /** The flags that only qualify a statement, for the pins' ends: a statement with no other leaves nothing. */
    public static final int QUALIFIERS = SELECT_STATEMENT | BEGINS_TRANSACTION;

    static final String TRACKED_VARIABLES_NAME = "SESSION_TRACK_SYSTEM_VARIABLES";

    /** Packet bytes as the lexer reads them: UTF-8, unsigned. */
    private static final Source<ByteBuf> BYTES = ByteBuf::getUnsignedByte;

    /** The first words that matter, and none. */
    private static final int OTHER = 0;
    private static final int LOCK = 1;
    private static final int UNLOCK = 2;
    private static final int XA = 3;
    private static final int PREPARE = 4;
    private static final int SET = 5;
    private static final int SELECT = 6;
    private static final int FLUSH = 7;
    private static final int SHOW = 8;
    private static final int GET = 9;
    /** CREATE, ALTER, DROP...: a routine's or a view's body is defined there, not run. */
    private static final int DDL = 10;

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
        int first = OTHER;
        boolean tableNext = false; // the next name is a table's (INSERT INTO t (a)), not a function's
        boolean afterDot = false; // the last code token was '.' (db.f(), db.t)
        boolean lastWasTable = false; // the last code token named a table (db in INTO db.t)
        for (int i = from; i < to; ) {
            long token = SqlLexer.next(BYTES, buf, i, to);
            int start = i;
            i = SqlLexer.end(token);
            Kind kind = SqlLexer.kind(token);
            if (!SqlLexer.isCode(kind)) {
                continue;
            }
            boolean dotBefore = afterDot;
            afterDot = kind == Kind.PUNCTUATION && buf.getByte(start) == '.';
            boolean tableName = tableNext;
            tableNext = afterDot ? lastWasTable : kind == Kind.WORD && namesTableNext(buf, start, i);
            lastWasTable = tableName;
            if ((kind == Kind.WORD && words > 0 || kind == Kind.QUOTED_IDENTIFIER) && first != DDL && !tableName
                    && calls(buf, i, to) && (dotBefore || !builtIn(buf, start, i, kind))) {
                flags |= STORED_CODE; // a stored function: its body may take a lock the text does not show
            }
            if (kind == Kind.VARIABLE || kind == Kind.PUNCTUATION && buf.getByte(start) == '@') {
                if (i - start < 2 || buf.getByte(start + 1) != '@') {
                    flags |= USER_VARIABLE; // @@name is a system variable
                    continue;
                }
                if (first == SET && buf.indexOf(start, i, (byte) '.') < 0 && (i >= to || buf.getByte(i) != '.')) {
                    flags |= UNSCOPED_SYSTEM_VARIABLE;
                }
                int dot = buf.indexOf(start, i, (byte) '.');
                int name = dot < 0 ? start + 2 : dot + 1;
                if (first == SET && statementVariable(buf, name, i)) {
                    flags |= STATEMENT_VARIABLE;
                } else if (is(buf, name, i, "WARNING_COUNT") || is(buf, name, i, "ERROR_COUNT")) {
                    flags |= DIAGNOSTICS; // reads the last statement's diagnostics, and leaves them
                }
                continue;
            }
            if (kind == Kind.PUNCTUATION && buf.getByte(start) == ';') {
                // A multi-statement: each statement is read as if it came alone (a SET TRANSACTION after DO 0 is
                // still one, issue #38); the flags add up.
                words = 0;
                first = OTHER;
                continue;
            }
            if (kind == Kind.QUOTED_IDENTIFIER && i - start > 2 && calls(buf, i, to)) {
                flags |= lockFunction(buf, start + 1, i - 1); // `GET_LOCK`(...) is the same function
                continue;
            }
            if (kind != Kind.WORD) {
                continue;
            }
            words++;
            if (words == 1) {
                first = firstWord(buf, start, i);
                flags |= first == LOCK ? LOCK_TABLES : first == UNLOCK ? UNLOCK_TABLES
                        : first == PREPARE ? SQL_PREPARE : first == OTHER ? opaqueFirstWord(buf, start, i) : 0;
            } else if (words == 2 && first == SET && is(buf, start, i, "ROLE")) {
                flags |= SET_ROLE;
            } else if (words <= 3 && first == GET && is(buf, start, i, "DIAGNOSTICS")) {
                flags |= DIAGNOSTICS; // GET [CURRENT] DIAGNOSTICS
            } else if (first == SET && statementVariable(buf, start, i) && !calls(buf, i, to)) {
                flags |= STATEMENT_VARIABLE; // not LAST_INSERT_ID(), the function
            } else if (words == 2 && first == XA) {
                if (is(buf, start, i, "START") || is(buf, start, i, "BEGIN")) {
                    flags |= XA_START;
                } else if (is(buf, start, i, "COMMIT") || is(buf, start, i, "ROLLBACK")) {
                    flags |= XA_END;
                }
            } else if (words == 2 && first == SET && is(buf, start, i, "TRANSACTION")) {
                flags |= SET_TRANSACTION;
            } else if (words == 2 && first == SHOW && (is(buf, start, i, "WARNINGS") || is(buf, start, i, "ERRORS")
                    || is(buf, start, i, "COUNT"))) {
                flags |= DIAGNOSTICS;
            } else if (first == FLUSH && (is(buf, start, i, "LOCK") || is(buf, start, i, "EXPORT"))) {
                flags |= LOCK_TABLES;
            }
            if (words == 1 && first == SELECT) {
                flags |= SELECT_STATEMENT;
            } else if (words == 1 && is(buf, start, i, "BEGIN") && !calls(buf, i, to)
                    || words == 2 && is(buf, start, i, "TRANSACTION") && isStart(buf, from, start)) {
                flags |= BEGINS_TRANSACTION;
            }
            if (i - start == 9 && first == SELECT && is(buf, start, i, "ROW_COUNT") && emptyCall(buf, i, to)) {
                flags |= SELECT_CALLS_ROW_COUNT;
            } else if (i - start == 10 && is(buf, start, i, "FOUND_ROWS") && calls(buf, i, to)) {
                flags |= CALLS_FOUND_ROWS;
            }
            if (is(buf, start, i, "LAST_INSERT_ID")) {
                int open = SqlLexer.skipToCode(BYTES, buf, i, to);
                if (open < to && buf.getByte(open) == '(') {
                    int close = SqlLexer.skipToCode(BYTES, buf, open + 1, to);
                    if (close >= to || buf.getByte(close) != ')') {
                        flags |= SETS_LAST_INSERT_ID;
                    } else if (first == SELECT) {
                        flags |= SELECT_CALLS_LAST_INSERT_ID;
                    }
                }
            } else if (i - start >= 8) { // the shortest word below is GET_LOCK
                int lock = lockFunction(buf, start, i);
                flags |= lock != 0 ? lock
                        : is(buf, start, i, "TEMPORARY") ? TEMPORARY
                        : is(buf, start, i, "SQL_CALC_FOUND_ROWS") ? CALC_FOUND_ROWS
                        : is(buf, start, i, TRACKED_VARIABLES_NAME) ? TRACKED_VARIABLES : 0;
            }
        }
        return flags;
    }

    /**
     * Whether the SQL text in {@code buf} between {@code from} and {@code to} may call a lock function ({@code GET_LOCK},
     * {@code RELEASE_LOCK}, {@code RELEASE_ALL_LOCKS}): it has {@code _LOCK} somewhere, in any case. A filter before
     * {@link #sniff} for a caller that looks for nothing else: one byte search over a statement that has no
     * underscore, which most have not.
     */
    public static boolean mayCallLockFunction(ByteBuf buf, int from, int to) {
        for (int i = buf.indexOf(from, to, (byte) '_'); i >= 0 && i + 4 < to; i = buf.indexOf(i + 1, to, (byte) '_')) {
            if ((buf.getByte(i + 1) | 0x20) == 'l' && (buf.getByte(i + 2) | 0x20) == 'o'
                    && (buf.getByte(i + 3) | 0x20) == 'c' && (buf.getByte(i + 4) | 0x20) == 'k') {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the word is followed by a table's name that may have a column list after it: INSERT [INTO] t (...),
     * REPLACE INTO t (...), LOAD DATA ... INTO TABLE t (...), REFERENCES t (...), WITH [RECURSIVE] cte (...).
     */
    private static boolean namesTableNext(ByteBuf buf, int start, int end) {
        int n = end - start;
        return n == 4 && is(buf, start, end, "INTO") || n == 5 && is(buf, start, end, "TABLE")
                || n == 6 && is(buf, start, end, "INSERT") || n == 7 && is(buf, start, end, "REPLACE")
                || n == 10 && is(buf, start, end, "REFERENCES") || n == 4 && is(buf, start, end, "WITH")
                || n == 9 && is(buf, start, end, "RECURSIVE");
    }

    /** Whether the name (a word, or one in back quotes) is a built-in function's or a keyword's. */
    private static boolean builtIn(ByteBuf buf, int start, int end, Kind kind) {
        return kind == Kind.WORD ? Functions.isBuiltIn(BYTES, buf, start, end)
                : end - start > 2 && Functions.isBuiltIn(BYTES, buf, start + 1, end - 1);
    }

    /** {@link #STORED_CODE} or {@link #HANDLER} for a first word that starts such a statement, else 0. */
    private static int opaqueFirstWord(ByteBuf buf, int start, int end) {
        return is(buf, start, end, "CALL") || is(buf, start, end, "EXECUTE") || is(buf, start, end, "BINLOG")
                ? STORED_CODE : is(buf, start, end, "HANDLER") ? HANDLER : 0;
    }

    /** {@link #GET_LOCK}, {@link #RELEASE_LOCK} or {@link #RELEASE_ALL_LOCKS} for the name of one, else 0. */
    private static int lockFunction(ByteBuf buf, int start, int end) {
        return is(buf, start, end, "GET_LOCK") ? GET_LOCK
                : is(buf, start, end, "RELEASE_LOCK") ? RELEASE_LOCK
                : is(buf, start, end, "RELEASE_ALL_LOCKS") ? RELEASE_ALL_LOCKS : 0;
    }

    /** Whether the last word before {@code start} (the second word of its statement) is START. */
    private static boolean isStart(ByteBuf buf, int from, int start) {
        int end = start;
        while (end > from && Character.isWhitespace(buf.getByte(end - 1))) {
            end--;
        }
        return end - 5 >= from && is(buf, end - 5, end, "START");
    }

    /** Whether the code after {@code i} is {@code ()}: a call without arguments. */
    private static boolean emptyCall(ByteBuf buf, int i, int to) {
        int open = SqlLexer.skipToCode(BYTES, buf, i, to);
        if (open >= to || buf.getByte(open) != '(') {
            return false;
        }
        int close = SqlLexer.skipToCode(BYTES, buf, open + 1, to);
        return close < to && buf.getByte(close) == ')';
    }

    /** Whether the code after {@code i} opens an argument list: the word before it names a function. */
    private static boolean calls(ByteBuf buf, int i, int to) {
        int next = SqlLexer.skipToCode(BYTES, buf, i, to);
        return next < to && buf.getByte(next) == '(';
    }

    /** Whether the word (a variable's name) is one of the variables only the next statement uses. */
    private static boolean statementVariable(ByteBuf buf, int start, int end) {
        return is(buf, start, end, "INSERT_ID") || is(buf, start, end, "IDENTITY")
                || is(buf, start, end, "LAST_INSERT_ID") || is(buf, start, end, "RAND_SEED1")
                || is(buf, start, end, "RAND_SEED2");
    }

    /**
     * Whether the SQL text in {@code buf} between {@code from} and {@code to} may leave state on its connection that
     * only {@link #sniff} tells: it may call a lock function ({@link #mayCallLockFunction}), or its first word starts
     * a statement that runs code its text does not show (CALL, EXECUTE, BINLOG), HANDLER, or SET (SET ROLE). A filter
     * for session pooling, which follows nothing else: a byte search and the first word.
     */
    public static boolean mayLeaveHiddenState(ByteBuf buf, int from, int to) {
        if (mayCallLockFunction(buf, from, to)) {
            return true;
        }
        int start = SqlLexer.skipToCode(BYTES, buf, from, to);
        if (start >= to) {
            return false;
        }
        long token = SqlLexer.next(BYTES, buf, start, to);
        int end = SqlLexer.end(token);
        return SqlLexer.kind(token) == Kind.WORD
                && (opaqueFirstWord(buf, start, end) != 0 || is(buf, start, end, "SET"));
    }

    private static int firstWord(ByteBuf buf, int start, int end) {
        return is(buf, start, end, "LOCK") ? LOCK
                : is(buf, start, end, "UNLOCK") ? UNLOCK
                : is(buf, start, end, "XA") ? XA
                : is(buf, start, end, "PREPARE") ? PREPARE
                : is(buf, start, end, "SET") ? SET
                : is(buf, start, end, "SELECT") ? SELECT
                : is(buf, start, end, "FLUSH") ? FLUSH
                : is(buf, start, end, "SHOW") ? SHOW
                : is(buf, start, end, "GET") ? GET
                : is(buf, start, end, "CREATE") || is(buf, start, end, "ALTER") || is(buf, start, end, "DROP")
                        || is(buf, start, end, "RENAME") || is(buf, start, end, "GRANT")
                        || is(buf, start, end, "REVOKE") || is(buf, start, end, "TRUNCATE") ? DDL : OTHER;
    }

    private static boolean is(ByteBuf buf, int start, int end, String upperCaseWord) {
        return SqlLexer.is(BYTES, buf, start, end, upperCaseWord);
    }
}
