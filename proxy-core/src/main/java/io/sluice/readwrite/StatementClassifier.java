package io.sluice.readwrite;

import io.netty.buffer.ByteBuf;
import io.sluice.sql.Keyword;
import io.sluice.sql.RouteFacts;
import io.sluice.sql.SqlLexer;
import io.sluice.sql.SqlLexer.Source;
import io.sluice.sql.StatementScan;

/**
 * Where a COM_QUERY may run in a read/write split group, decided from the one analysis of its text
 * ({@link StatementScan}, decision 136): no parser, no {@code String}, no allocation on the path that passes its own
 * scan. The answer is an {@code int}, a <em>statement class</em>, that packs a {@link RouteReason} (whose
 * {@link RouteReason#route()} says primary, replica or the previous statement's connection) and a
 * {@link TransactionEffect}; read them with {@link #reason(int)} and {@link #transaction(int)}.
 *
 * <p>It errs towards the primary: a statement it does not know goes there ({@link RouteReason#OTHER}), and so does
 * anything that reads or leaves state on one server connection (user variables, locks, SQL prepared statements). The
 * rules, and the functions counted as side effects, are in decision 096. The class is about the statement alone:
 * whether the session is in a transaction is {@link TransactionState}'s business.
 */
public final class StatementClassifier {

    /** Packet bytes as the lexer reads them: UTF-8, unsigned. The one such source, for every scan of a packet. */
    public static final Source<ByteBuf> BYTES = ByteBuf::getUnsignedByte;

    /** In a statement class: it would make the connection's access mode READ WRITE (decision 110). */
    private static final int CHANGES_ACCESS_MODE = 1 << 16;

    private static final TransactionEffect[] EFFECTS = TransactionEffect.values();

    private StatementClassifier() {
    }

    /**
     * Classifies the SQL text in {@code buf} from {@code from} to {@code to} (borrowed: indexes do not move), with a
     * scan of its own: off the relay path only; a session's policy passes its reused scan instead.
     */
    public static int classify(ByteBuf buf, int from, int to) {
        return classify(new StatementScan(), BYTES, buf, from, to);
    }

    /** Classifies SQL text in UTF-8. */
    public static int classify(byte[] sql) {
        return classify(new StatementScan(), StatementScan.BYTE_ARRAY, sql, 0, sql.length);
    }

    /** Classifies SQL text. */
    public static int classify(CharSequence sql) {
        return classify(new StatementScan(), SqlLexer.CHARS, sql, 0, sql.length());
    }

    /**
     * Scans the text with {@code scan} (which then also holds its {@link StatementScan#effects()}) and classifies it:
     * the path of a policy that needs both answers, one pass.
     */
    public static <T> int classify(StatementScan scan, Source<T> s, T text, int from, int to) {
        scan.scan(s, text, from, to);
        return classifyScanned(scan, s, text, from, to);
    }

    /**
     * Classifies the text {@code scan} last read; the text is passed again for a versioned comment's second reading.
     * A statement with a versioned executable comment has two readings, the server's own version deciding which runs
     * ({@code /*!99999 SELECT 1 *}{@code / DELETE FROM t} runs the DELETE on MariaDB): it is a read only when both
     * are (decision 110), else it is classified as the reading that is not. The second reading leaves the scan's
     * effects as they were.
     */
    public static <T> int classifyScanned(StatementScan scan, Source<T> s, T text, int from, int to) {
        int withContent = reading(scan);
        if (!scan.versioned() || route(withContent) != Route.REPLICA) {
            return withContent;
        }
        int without = reading(scan.rescanWithoutVersioned(s, text, from, to));
        return route(without) == Route.REPLICA ? withContent : without;
    }

    /** The class of one reading of the scanned statement. */
    private static int reading(StatementScan scan) {
        int inner = decide(scan.routeFacts(), scan.first(), scan.second(), scan.third());
        int outer = scan.outerRouteFacts();
        return outer > 0 ? withHints(inner, outer) : inner;
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
                    reason = read(flags, first == Keyword.WITH && (flags & RouteFacts.WRITE_WORD) != 0);
                    break;
                case SHOW:
                    reason = show(flags, second, third);
                    break;
                case EXPLAIN, DESCRIBE, DESC:
                    reason = read(flags, (flags & (RouteFacts.ANALYZE | RouteFacts.WRITE_WORD)) == (RouteFacts.ANALYZE | RouteFacts.WRITE_WORD));
                    break;
                case ANALYZE: // MariaDB's ANALYZE statement runs the statement; ANALYZE TABLE writes statistics
                    reason = read(flags, second == Keyword.TABLE || second == Keyword.NO_WRITE_TO_BINLOG
                            || second == Keyword.LOCAL || (flags & RouteFacts.WRITE_WORD) != 0);
                    break;
                case SET:
                    reason = second == Keyword.TRANSACTION ? RouteReason.PINNING
                            : (flags & RouteFacts.SERVER_WIDE) != 0 || second == Keyword.PASSWORD ? RouteReason.SERVER_STATE
                            : RouteReason.SESSION_SET;
                    if ((flags & (RouteFacts.READ_WRITE | RouteFacts.ACCESS_READ_WRITE)) != 0) {
                        // READ WRITE: on the primary, always (never a replica's connection, not even while the
                        // primary is down), and never where a replica's connection is held (decision 110)
                        reason = second == Keyword.TRANSACTION ? RouteReason.PINNING : RouteReason.TRANSACTION;
                        changesAccessMode = true;
                    }
                    effect = (flags & RouteFacts.AUTOCOMMIT_OFF) != 0 ? TransactionEffect.AUTOCOMMIT_OFF
                            : (flags & RouteFacts.AUTOCOMMIT_ON) != 0 ? TransactionEffect.AUTOCOMMIT_ON : effect;
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
                    } else if ((flags & RouteFacts.READ_ONLY) != 0) {
                        reason = RouteReason.READ_ONLY_TRANSACTION;
                        effect = TransactionEffect.BEGIN_READ_ONLY;
                    } else if ((flags & RouteFacts.READ_WRITE) != 0) {
                        reason = RouteReason.TRANSACTION;
                        effect = TransactionEffect.BEGIN_READ_WRITE;
                    } else {
                        reason = RouteReason.TRANSACTION;
                        effect = TransactionEffect.BEGIN;
                    }
                    break;
                case COMMIT, ROLLBACK:
                    reason = RouteReason.TRANSACTION;
                    effect = (flags & RouteFacts.TO) != 0 ? TransactionEffect.NONE
                            : (flags & RouteFacts.CHAIN) != 0 ? TransactionEffect.CHAIN : TransactionEffect.END;
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
                    reason = (flags & RouteFacts.LOCK_WORD) != 0 ? RouteReason.PINNING : RouteReason.WRITE;
                    effect = TransactionEffect.IMPLICIT_COMMIT;
                    break;
                case CREATE, ALTER, DROP, RENAME, TRUNCATE, GRANT, REVOKE, INSTALL, UNINSTALL:
                    reason = RouteReason.WRITE;
                    // CREATE / DROP TEMPORARY TABLE are the exception: they leave the transaction open
                    effect = (flags & RouteFacts.TEMPORARY) != 0 ? effect : TransactionEffect.IMPLICIT_COMMIT;
                    break;
                case INSERT, UPDATE, DELETE, REPLACE, LOAD, CALL:
                    reason = RouteReason.WRITE;
                    break;
                default:
                    reason = RouteReason.OTHER;
            }
        }
        if ((flags & RouteFacts.HINT_PRIMARY) != 0) {
            reason = RouteReason.HINT;
        } else if ((flags & RouteFacts.MULTI) != 0) {
            reason = RouteReason.MULTI_STATEMENT;
        } else if ((flags & (RouteFacts.PINNING | RouteFacts.TEMPORARY)) != 0) {
            reason = RouteReason.PINNING;
        }
        return pack(reason, effect) | (changesAccessMode ? CHANGES_ACCESS_MODE : 0);
    }

    /** A read: a replica's, unless it locks, writes, calls a side effect or reads what one connection holds. */
    private static RouteReason read(int flags, boolean writes) {
        if ((flags & RouteFacts.LOCKING) != 0) {
            return RouteReason.LOCKING_READ;
        }
        if (writes || (flags & RouteFacts.INTO) != 0) {
            return RouteReason.WRITE;
        }
        if ((flags & RouteFacts.SIDE_EFFECT) != 0) {
            return RouteReason.SIDE_EFFECT;
        }
        if ((flags & RouteFacts.SESSION_STATE) != 0) {
            return RouteReason.SESSION_STATE;
        }
        if ((flags & RouteFacts.DIAGNOSTICS) != 0) {
            return RouteReason.DIAGNOSTICS;
        }
        return (flags & RouteFacts.HINT_REPLICA) != 0 ? RouteReason.REPLICA_HINT : RouteReason.REPLICA;
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
        if ((flags & RouteFacts.HINT_PRIMARY) != 0) {
            return pack(RouteReason.HINT, effect) | ((flags & RouteFacts.ACCESS_READ_WRITE) != 0 ? CHANGES_ACCESS_MODE : 0);
        }
        if ((flags & RouteFacts.ACCESS_READ_WRITE) != 0) {
            // SET STATEMENT tx_read_only = 0 FOR ...: the statement runs read-write, so on the primary (decision 110)
            return pack(reason.route() == Route.REPLICA ? RouteReason.TRANSACTION : reason, effect)
                    | CHANGES_ACCESS_MODE;
        }
        if ((flags & (RouteFacts.PINNING | RouteFacts.TEMPORARY)) != 0) {
            return pack(RouteReason.PINNING, effect);
        }
        if ((flags & RouteFacts.HINT_REPLICA) != 0 && reason == RouteReason.REPLICA) {
            return pack(RouteReason.REPLICA_HINT, effect);
        }
        return inner;
    }

}
