package io.sluice.readwrite;

import io.netty.buffer.ByteBuf;
import io.sluice.sql.Functions;
import io.sluice.sql.SqlLexer;
import io.sluice.sql.SqlLexer.Kind;
import io.sluice.sql.SqlLexer.Source;

/**
 * Where a COM_QUERY may run in a read/write split group, read from its SQL text in one pass of {@link SqlLexer}: no
 * parser, no {@code String}, no allocation. The answer is an {@code int}, a <em>statement class</em>, that packs a
 * {@link RouteReason} (whose {@link RouteReason#route()} says primary, replica or the previous statement's
 * connection) and a {@link TransactionEffect}; read them with {@link #reason(int)} and {@link #transaction(int)}.
 *
 * <p>It reads words outside string literals, quoted identifiers and comments (executable comments
 * {@code /*!...*}{@code /} are code), compared with MySQL's keywords in any case. It errs towards the primary: a
 * statement it does not know goes there ({@link RouteReason#OTHER}), and so does anything that reads or leaves
 * state on one server connection (user variables, locks, SQL prepared statements). The rules, and the functions
 * counted as side effects, are in decision 096. The class is about the statement alone: whether the session is in a
 * transaction is {@link TransactionState}'s business.
 */
public final class StatementClassifier {

    /** Packet bytes as the lexer reads them: UTF-8, unsigned. */
    public static final Source<ByteBuf> BYTES = ByteBuf::getUnsignedByte;
    private static final Source<byte[]> BYTE_ARRAY = (bytes, index) -> bytes[index] & 0xFF;

    // What the pass finds anywhere in the statement.
    private static final int LOCKING = 1;
    private static final int INTO = 1 << 1;
    private static final int SIDE_EFFECT = 1 << 2;
    private static final int SESSION_STATE = 1 << 3;
    private static final int DIAGNOSTICS = 1 << 4;
    private static final int PINNING = 1 << 5;
    private static final int MULTI = 1 << 6;
    static final int HINT_PRIMARY = 1 << 7;
    static final int HINT_REPLICA = 1 << 8;
    private static final int READ_ONLY = 1 << 9;
    private static final int CHAIN = 1 << 10;
    private static final int AUTOCOMMIT_OFF = 1 << 11;
    private static final int AUTOCOMMIT_ON = 1 << 12;
    /** INSERT, UPDATE, DELETE or REPLACE after the first word, outside parentheses (WITH ... UPDATE). */
    private static final int WRITE_WORD = 1 << 13;
    private static final int ANALYZE = 1 << 14;
    /** The word TO (ROLLBACK TO SAVEPOINT) or LOCK (FLUSH TABLES WITH READ LOCK). */
    private static final int TO = 1 << 15;
    private static final int LOCK_WORD = 1 << 16;
    /** CREATE or DROP TEMPORARY TABLE: pins, and leaves the transaction open. */
    private static final int TEMPORARY = 1 << 17;
    /** READ WRITE (START TRANSACTION READ WRITE): read-write whatever the session's access mode says. */
    private static final int READ_WRITE = 1 << 18;
    /** {@code tx_read_only} or {@code transaction_read_only} set to anything but 1, ON or TRUE. */
    private static final int ACCESS_READ_WRITE = 1 << 19;
    /** A versioned executable comment ({@code /*!NNNNN}, {@code /*M!}): the statement has two readings. */
    private static final int VERSIONED = 1 << 20;
    /** GLOBAL, PERSIST, {@code @@global.x}: a SET of the server, not the session (replay never runs it either). */
    private static final int SERVER_WIDE = 1 << 21;

    /** In a statement class: it would make the connection's access mode READ WRITE (decision 110). */
    private static final int CHANGES_ACCESS_MODE = 1 << 16;
    /** In the result of one reading: a versioned comment was seen (taken out before the class leaves). */
    private static final int VERSIONED_SEEN = 1 << 30;

    private static final TransactionEffect[] EFFECTS = TransactionEffect.values();

    private StatementClassifier() {
    }

    /** Classifies the SQL text in {@code buf} from {@code from} to {@code to} (borrowed: indexes do not move). */
    public static int classify(ByteBuf buf, int from, int to) {
        return classify(BYTES, buf, from, to);
    }

    /** Classifies SQL text in UTF-8. */
    public static int classify(byte[] sql) {
        return classify(BYTE_ARRAY, sql, 0, sql.length);
    }

    /** Classifies SQL text. */
    public static int classify(CharSequence sql) {
        return classify(SqlLexer.CHARS, sql, 0, sql.length());
    }

    /** The reason of a statement class, and through it the route. */
    public static RouteReason reason(int statementClass) {
        return RouteReason.of(statementClass & 0xFF);
    }

    /** Where a statement of this class runs, outside a transaction. */
    public static Route route(int statementClass) {
        return reason(statementClass).route();
    }

    /** What a statement of this class does to the session's transaction. */
    public static TransactionEffect transaction(int statementClass) {
        return EFFECTS[statementClass >>> 8 & 0xFF];
    }

    /**
     * Whether a statement of this class would make its connection's access mode READ WRITE: {@code START TRANSACTION
     * READ WRITE}, {@code SET [SESSION] TRANSACTION READ WRITE}, {@code SET tx_read_only = 0} (or
     * {@code transaction_read_only}, or any value but 1, ON, TRUE), {@code SET STATEMENT tx_read_only = 0 FOR ...}.
     * Such a statement never runs on a replica's connection (decision 110). {@code false} for -1 (not a statement).
     */
    public static boolean changesAccessMode(int statementClass) {
        return statementClass >= 0 && ((statementClass & CHANGES_ACCESS_MODE) != 0
                || transaction(statementClass) == TransactionEffect.BEGIN_READ_WRITE);
    }

    static int pack(RouteReason reason, TransactionEffect effect) {
        return reason.ordinal() | effect.ordinal() << 8;
    }

    /**
     * Classifies the statement; one with a versioned executable comment has two readings, the server's own version
     * deciding which runs ({@code /*!99999 SELECT 1 *}{@code / DELETE FROM t} runs the DELETE on MariaDB): it is a
     * read only when both are (decision 110), else it is classified as the reading that is not.
     */
    private static <T> int classify(Source<T> s, T text, int from, int to) {
        int withContent = classify(s, text, from, to, false);
        if ((withContent & VERSIONED_SEEN) == 0) {
            return withContent;
        }
        withContent &= ~VERSIONED_SEEN;
        if (route(withContent) != Route.REPLICA) {
            return withContent;
        }
        int without = classify(s, text, from, to, true) & ~VERSIONED_SEEN;
        return route(without) == Route.REPLICA ? withContent : without;
    }

    /**
     * The one pass: words by position, flags from anywhere, then {@link #decide}.
     *
     * @param skipVersioned whether the content of versioned executable comments is left out (the second reading)
     */
    private static <T> int classify(Source<T> s, T text, int from, int to, boolean skipVersioned) {
        int flags = 0;
        int words = 0;
        Keyword first = null;
        Keyword second = null;
        Keyword third = null;
        Keyword previous = null;
        int depth = 0;
        boolean ended = false; // a ';' was seen: more code makes it a multi-statement
        boolean afterDot = false;
        boolean afterComma = false; // the previous code token was a ',' outside parentheses
        int codeEnd = -1; // where the previous code token ended, and what it was
        Kind codeKind = null;
        boolean inVersioned = false;
        for (int i = from; i < to; ) {
            long token = SqlLexer.next(s, text, i, to);
            int start = i;
            i = SqlLexer.end(token);
            Kind kind = SqlLexer.kind(token);
            if (kind == Kind.COMMENT) {
                flags |= RouteHints.of(s, text, start, i);
                continue;
            }
            if (kind == Kind.EXECUTABLE_COMMENT_START) {
                // /*! runs everywhere; /*!NNNNN only from that version on, /*M! on MariaDB only: two readings
                if (i - start > 3) {
                    flags |= VERSIONED;
                    inVersioned = skipVersioned;
                }
                continue;
            }
            if (kind == Kind.EXECUTABLE_COMMENT_END) {
                inVersioned = false;
                continue;
            }
            if (!SqlLexer.isCode(kind) || inVersioned) {
                continue;
            }
            int c = s.at(text, start);
            if (kind == Kind.PUNCTUATION && c == ';') {
                ended = true;
                continue;
            }
            if (ended) {
                flags |= MULTI;
            }
            boolean dotBefore = afterDot;
            afterDot = kind == Kind.PUNCTUATION && c == '.';
            boolean commaBefore = afterComma;
            afterComma = kind == Kind.PUNCTUATION && c == ',' && depth == 0;
            boolean adjacent = start == codeEnd && (codeKind == Kind.STRING || codeKind == Kind.WORD
                    || codeKind == Kind.QUOTED_IDENTIFIER);
            codeEnd = i;
            codeKind = kind;
            if (kind == Kind.PUNCTUATION) {
                depth += c == '(' ? 1 : c == ')' ? -1 : 0;
                continue;
            }
            if (kind == Kind.VARIABLE) {
                // 'user'@'host' and user@host name accounts (GRANT, CREATE USER): no variable there
                flags |= adjacent && s.at(text, start + 1) != '@' ? 0 : variable(s, text, start, i, to);
                continue;
            }
            if (kind == Kind.QUOTED_IDENTIFIER) {
                if (words > 0 && opensCall(s, text, i, to) && !cteName(first, previous, commaBefore, depth)) {
                    flags |= quotedCall(s, text, start, i, to, dotBefore, depth);
                }
                continue;
            }
            if (kind != Kind.WORD) {
                continue;
            }
            Keyword word = Keyword.of(s, text, start, i);
            words++;
            if (words == 1) {
                first = word;
            } else if (words == 2) {
                second = word;
            } else if (words == 3) {
                third = word;
            }
            if (words > 1 && opensCall(s, text, i, to) && (dotBefore || !Functions.isReadOnly(s, text, start, i)
                    && !cteName(first, previous, commaBefore, depth))) {
                // db.f(...), or f(...) with f no read-only built-in: a stored function, which may write (decision 110)
                flags |= SIDE_EFFECT;
            }
            if (word == null) {
                previous = null;
                continue;
            }
            if (first == Keyword.SET && second == Keyword.STATEMENT && word == Keyword.FOR && depth == 0 && words > 2) {
                // MariaDB's SET STATEMENT var = value FOR statement: the statement after FOR decides.
                int inner = classify(s, text, i, to, skipVersioned);
                int versioned = (inner | flags) & (VERSIONED | VERSIONED_SEEN);
                inner &= ~VERSIONED_SEEN;
                int result = flags != 0 ? withHints(inner, flags) : inner;
                return versioned != 0 ? result | VERSIONED_SEEN : result;
            }
            flags |= words == 1 ? 0 : word(s, text, word, previous, i, to, depth);
            previous = word;
        }
        int decided = decide(flags, first, second, third);
        return (flags & VERSIONED) != 0 ? decided | VERSIONED_SEEN : decided;
    }

    /** Whether a word before {@code (} names a common table expression: {@code WITH [RECURSIVE] c (n) AS (...)}. */
    private static boolean cteName(Keyword first, Keyword previous, boolean commaBefore, int depth) {
        return first == Keyword.WITH && depth == 0
                && (previous == Keyword.WITH || previous == Keyword.RECURSIVE || commaBefore);
    }

    /**
     * A name in back quotes followed by {@code (}: MariaDB calls a built-in so named as it calls it unquoted
     * ({@code `GET_LOCK`('x', 0)} takes a lock), so it is looked at as the word; anything not on the read-only list
     * is a call that may write.
     */
    private static <T> int quotedCall(Source<T> s, T text, int start, int end, int to, boolean dotBefore,
            int depth) {
        int nameStart = start + 1;
        int nameEnd = end - 1;
        if (dotBefore || nameEnd <= nameStart || !Functions.isReadOnly(s, text, nameStart, nameEnd)) {
            return SIDE_EFFECT;
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
    private static <T> int word(Source<T> s, T text, Keyword word, Keyword previous, int end, int to, int depth) {
        switch (word) {
            case FOR:
                Keyword next = nextWord(s, text, end, to);
                return next == Keyword.UPDATE || next == Keyword.SHARE ? LOCKING : 0;
            case LOCK:
                return nextWord(s, text, end, to) == Keyword.IN ? LOCKING : LOCK_WORD;
            case INTO:
                return INTO;
            case GLOBAL, PERSIST, PERSIST_ONLY:
                return SERVER_WIDE;
            case ONLY:
                return previous == Keyword.READ ? READ_ONLY : 0;
            case WRITE:
                return previous == Keyword.READ ? READ_WRITE : 0;
            case CHAIN:
                return previous == Keyword.AND ? CHAIN : 0;
            case TO:
                return TO;
            case ANALYZE:
                return ANALYZE;
            case EXPORT:
                return LOCK_WORD;
            case SQL_CALC_FOUND_ROWS:
                return PINNING;
            case TEMPORARY:
                return TEMPORARY;
            case INSERT, UPDATE, DELETE, REPLACE:
                // INSERT(str, ...) and REPLACE(str, ...) are also string functions
                return depth == 0 && !opensCall(s, text, end, to) ? WRITE_WORD : 0;
            case AUTOCOMMIT:
                return autocommit(s, text, end, to);
            case TX_READ_ONLY, TRANSACTION_READ_ONLY:
                return accessMode(s, text, end, to);
            case VALUE:
                return previous == Keyword.NEXT ? SIDE_EFFECT : previous == Keyword.PREVIOUS ? SESSION_STATE : 0;
            case GET_LOCK, RELEASE_LOCK, RELEASE_ALL_LOCKS, IS_FREE_LOCK, IS_USED_LOCK, NEXTVAL, SETVAL:
                return opensCall(s, text, end, to) ? SIDE_EFFECT : 0;
            case LASTVAL, CONNECTION_ID:
                return opensCall(s, text, end, to) ? SESSION_STATE : 0;
            case FOUND_ROWS, ROW_COUNT:
                return opensCall(s, text, end, to) ? DIAGNOSTICS : 0;
            case LAST_INSERT_ID:
                if (!opensCall(s, text, end, to)) {
                    return 0;
                }
                int open = SqlLexer.skipToCode(s, text, end, to);
                int close = SqlLexer.skipToCode(s, text, open + 1, to);
                return close < to && s.at(text, close) == ')' ? SESSION_STATE : SIDE_EFFECT;
            default:
                return 0;
        }
    }

    /** The statement class from the first words and the flags. */
    private static int decide(int flags, Keyword first, Keyword second, Keyword third) {
        TransactionEffect effect = TransactionEffect.NONE;
        boolean changesAccessMode = false;
        RouteReason reason;
        if (first == null) {
            reason = RouteReason.OTHER;
        } else {
            switch (first) {
                case SELECT, WITH, VALUES, TABLE, DO, HELP:
                    reason = read(flags, first == Keyword.WITH && (flags & WRITE_WORD) != 0);
                    break;
                case SHOW:
                    reason = show(flags, second, third);
                    break;
                case EXPLAIN, DESCRIBE, DESC:
                    reason = read(flags, (flags & (ANALYZE | WRITE_WORD)) == (ANALYZE | WRITE_WORD));
                    break;
                case ANALYZE: // MariaDB's ANALYZE statement runs the statement; ANALYZE TABLE writes statistics
                    reason = read(flags, second == Keyword.TABLE || second == Keyword.NO_WRITE_TO_BINLOG
                            || second == Keyword.LOCAL || (flags & WRITE_WORD) != 0);
                    break;
                case SET:
                    reason = second == Keyword.TRANSACTION ? RouteReason.PINNING
                            : (flags & SERVER_WIDE) != 0 || second == Keyword.PASSWORD ? RouteReason.SERVER_STATE
                            : RouteReason.SESSION_SET;
                    if ((flags & (READ_WRITE | ACCESS_READ_WRITE)) != 0) {
                        // READ WRITE: on the primary, always (never a replica's connection, not even while the
                        // primary is down), and never where a replica's connection is held (decision 110)
                        reason = second == Keyword.TRANSACTION ? RouteReason.PINNING : RouteReason.TRANSACTION;
                        changesAccessMode = true;
                    }
                    effect = (flags & AUTOCOMMIT_OFF) != 0 ? TransactionEffect.AUTOCOMMIT_OFF
                            : (flags & AUTOCOMMIT_ON) != 0 ? TransactionEffect.AUTOCOMMIT_ON : effect;
                    break;
                case USE:
                    reason = RouteReason.SESSION_SET;
                    break;
                case BEGIN:
                    reason = RouteReason.TRANSACTION;
                    effect = TransactionEffect.BEGIN;
                    break;
                case START:
                    if (second != Keyword.TRANSACTION) {
                        reason = RouteReason.OTHER; // START SLAVE, START REPLICA
                    } else if ((flags & READ_ONLY) != 0) {
                        reason = RouteReason.READ_ONLY_TRANSACTION;
                        effect = TransactionEffect.BEGIN_READ_ONLY;
                    } else if ((flags & READ_WRITE) != 0) {
                        reason = RouteReason.TRANSACTION;
                        effect = TransactionEffect.BEGIN_READ_WRITE;
                    } else {
                        reason = RouteReason.TRANSACTION;
                        effect = TransactionEffect.BEGIN;
                    }
                    break;
                case COMMIT, ROLLBACK:
                    reason = RouteReason.TRANSACTION;
                    effect = (flags & TO) != 0 ? TransactionEffect.NONE
                            : (flags & CHAIN) != 0 ? TransactionEffect.CHAIN : TransactionEffect.END;
                    break;
                case SAVEPOINT, RELEASE:
                    reason = RouteReason.TRANSACTION;
                    break;
                case XA:
                    reason = RouteReason.PINNING;
                    effect = second == Keyword.START || second == Keyword.BEGIN ? TransactionEffect.BEGIN
                            : second == Keyword.COMMIT || second == Keyword.ROLLBACK ? TransactionEffect.END : effect;
                    break;
                case LOCK:
                    reason = RouteReason.PINNING;
                    effect = TransactionEffect.IMPLICIT_COMMIT;
                    break;
                case UNLOCK, PREPARE, EXECUTE, DEALLOCATE, HANDLER:
                    reason = RouteReason.PINNING;
                    break;
                case GET:
                    reason = RouteReason.DIAGNOSTICS; // GET DIAGNOSTICS
                    break;
                case FLUSH:
                    reason = (flags & LOCK_WORD) != 0 ? RouteReason.PINNING : RouteReason.WRITE;
                    effect = TransactionEffect.IMPLICIT_COMMIT;
                    break;
                case CREATE, ALTER, DROP, RENAME, TRUNCATE, GRANT, REVOKE, INSTALL, UNINSTALL:
                    reason = RouteReason.WRITE;
                    // CREATE / DROP TEMPORARY TABLE are the exception: they leave the transaction open
                    effect = (flags & TEMPORARY) != 0 ? effect : TransactionEffect.IMPLICIT_COMMIT;
                    break;
                case INSERT, UPDATE, DELETE, REPLACE, LOAD, CALL:
                    reason = RouteReason.WRITE;
                    break;
                default:
                    reason = RouteReason.OTHER;
            }
        }
        if ((flags & HINT_PRIMARY) != 0) {
            reason = RouteReason.HINT;
        } else if ((flags & MULTI) != 0) {
            reason = RouteReason.MULTI_STATEMENT;
        } else if ((flags & (PINNING | TEMPORARY)) != 0) {
            reason = RouteReason.PINNING;
        }
        return pack(reason, effect) | (changesAccessMode ? CHANGES_ACCESS_MODE : 0);
    }

    /** A read: a replica's, unless it locks, writes, calls a side effect or reads what one connection holds. */
    private static RouteReason read(int flags, boolean writes) {
        if ((flags & LOCKING) != 0) {
            return RouteReason.LOCKING_READ;
        }
        if (writes || (flags & INTO) != 0) {
            return RouteReason.WRITE;
        }
        if ((flags & SIDE_EFFECT) != 0) {
            return RouteReason.SIDE_EFFECT;
        }
        if ((flags & SESSION_STATE) != 0) {
            return RouteReason.SESSION_STATE;
        }
        if ((flags & DIAGNOSTICS) != 0) {
            return RouteReason.DIAGNOSTICS;
        }
        return (flags & HINT_REPLICA) != 0 ? RouteReason.REPLICA_HINT : RouteReason.REPLICA;
    }

    private static RouteReason show(int flags, Keyword second, Keyword third) {
        if (second == null) {
            return read(flags, false);
        }
        switch (second) {
            case WARNINGS, ERRORS, COUNT:
                return RouteReason.DIAGNOSTICS;
            case STATUS, PROCESSLIST, MASTER, BINLOG, BINARY, SLAVE, SLAVES, REPLICA, REPLICAS, ENGINE, PROFILE,
                    PROFILES, RELAYLOG, EXPLAIN, ANALYZE, ALL:
                return RouteReason.SERVER_STATE;
            case GLOBAL, SESSION, LOCAL, FULL:
                return third == Keyword.STATUS || third == Keyword.PROCESSLIST ? RouteReason.SERVER_STATE
                        : read(flags, false);
            default:
                return read(flags, false);
        }
    }

    /** The hints found before {@code SET STATEMENT ... FOR} apply to the statement after it. */
    private static int withHints(int inner, int flags) {
        RouteReason reason = reason(inner);
        TransactionEffect effect = transaction(inner);
        if ((flags & HINT_PRIMARY) != 0) {
            return pack(RouteReason.HINT, effect) | ((flags & ACCESS_READ_WRITE) != 0 ? CHANGES_ACCESS_MODE : 0);
        }
        if ((flags & ACCESS_READ_WRITE) != 0) {
            // SET STATEMENT tx_read_only = 0 FOR ...: the statement runs read-write, so on the primary (decision 110)
            return pack(reason.route() == Route.REPLICA ? RouteReason.TRANSACTION : reason, effect)
                    | CHANGES_ACCESS_MODE;
        }
        if ((flags & (PINNING | TEMPORARY)) != 0) {
            return pack(RouteReason.PINNING, effect);
        }
        if ((flags & HINT_REPLICA) != 0 && reason == RouteReason.REPLICA) {
            return pack(RouteReason.REPLICA_HINT, effect);
        }
        return inner;
    }

    /** {@code @name} pins; {@code @@warning_count}, {@code @@last_insert_id}, {@code @@autocommit = 0} tell. */
    private static <T> int variable(Source<T> s, T text, int start, int end, int to) {
        if (end - start < 2 || s.at(text, start + 1) != '@') {
            return PINNING;
        }
        int name = end;
        while (name > start && s.at(text, name - 1) != '.' && s.at(text, name - 1) != '@') {
            name--;
        }
        if (name > start + 3 && s.at(text, name - 1) == '.' && (SqlLexer.is(s, text, start + 2, name - 1, "GLOBAL")
                || SqlLexer.is(s, text, start + 2, name - 1, "PERSIST")
                || SqlLexer.is(s, text, start + 2, name - 1, "PERSIST_ONLY"))) {
            return SERVER_WIDE;
        }
        if (SqlLexer.is(s, text, name, end, "WARNING_COUNT") || SqlLexer.is(s, text, name, end, "ERROR_COUNT")) {
            return DIAGNOSTICS;
        }
        if (SqlLexer.is(s, text, name, end, "LAST_INSERT_ID") || SqlLexer.is(s, text, name, end, "IDENTITY")
                || SqlLexer.is(s, text, name, end, "LAST_GTID")) {
            return SESSION_STATE;
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
        return plain && readOnly ? 0 : ACCESS_READ_WRITE;
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
        if (value < 0) {
            return 0;
        }
        if (value >= to) {
            return 0;
        }
        int valueEnd = SqlLexer.end(SqlLexer.next(s, text, value, to));
        if (SqlLexer.is(s, text, value, valueEnd, "0") || SqlLexer.is(s, text, value, valueEnd, "OFF")
                || SqlLexer.is(s, text, value, valueEnd, "FALSE")) {
            return AUTOCOMMIT_OFF;
        }
        if (SqlLexer.is(s, text, value, valueEnd, "1") || SqlLexer.is(s, text, value, valueEnd, "ON")
                || SqlLexer.is(s, text, value, valueEnd, "TRUE") || SqlLexer.is(s, text, value, valueEnd, "DEFAULT")) {
            return AUTOCOMMIT_ON;
        }
        return 0; // an expression: the server's status flags will tell
    }

    /** Whether the next code after {@code end} is {@code (}: the word before it is a function's name. */
    private static <T> boolean opensCall(Source<T> s, T text, int end, int to) {
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
