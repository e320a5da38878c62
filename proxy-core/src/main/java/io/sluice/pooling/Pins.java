package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.sql.SessionEffects;
import java.util.HashSet;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Why a session keeps its backend connection between transactions, as bits of {@link PinReason}: what
 * {@link SessionEffects} finds in statements, looked up in one table of flag to reason, plus the counts that decide
 * when a pin ends (named locks held, cursors open).
 */
final class Pins {

    /** A sniffed flag and the reason it pins (or unpins) the session for. */
    private record Rule(int flag, PinReason reason) {
    }

    /** Flags that pin, and for what. */
    private static final Rule[] PINS = {
        new Rule(SessionEffects.USER_VARIABLE, PinReason.USER_VARIABLE),
        new Rule(SessionEffects.TEMPORARY, PinReason.TEMPORARY_TABLE),
        new Rule(SessionEffects.LOCK_TABLES, PinReason.TABLE_LOCK),
        new Rule(SessionEffects.GET_LOCK, PinReason.NAMED_LOCK),
        new Rule(SessionEffects.XA_START, PinReason.XA),
        new Rule(SessionEffects.CALC_FOUND_ROWS, PinReason.FOUND_ROWS),
        new Rule(SessionEffects.SQL_PREPARE, PinReason.SQL_PREPARE),
        new Rule(SessionEffects.SET_TRANSACTION, PinReason.SET_TRANSACTION),
        new Rule(SessionEffects.STORED_CODE, PinReason.STORED_CODE),
        new Rule(SessionEffects.HANDLER, PinReason.HANDLER),
        new Rule(SessionEffects.SET_ROLE, PinReason.ROLE),
        new Rule(SessionEffects.STATEMENT_VARIABLE, PinReason.STATEMENT_VARIABLE),
        new Rule(SessionEffects.NEXT_SEQUENCE_VALUE, PinReason.SEQUENCE),
        new Rule(SessionEffects.BACKUP_LOCK, PinReason.BACKUP_LOCK),
    };

    /** Flags that end a pin. Named locks end only once every lock taken is released (see {@link #apply}). */
    private static final Rule[] UNPINS = {
        new Rule(SessionEffects.UNLOCK_TABLES, PinReason.TABLE_LOCK),
        new Rule(SessionEffects.XA_END, PinReason.XA),
    };

    /** Flags of state the trackers cannot describe: a statement carrying one explains a "state changed" report. */
    static final int UNTRACKED_STATE = SessionEffects.USER_VARIABLE | SessionEffects.TEMPORARY | SessionEffects.SQL_PREPARE
            | SessionEffects.GET_LOCK | SessionEffects.LOCK_TABLES | SessionEffects.STORED_CODE | SessionEffects.HANDLER
            | SessionEffects.SET_ROLE | SessionEffects.STATEMENT_VARIABLE | SessionEffects.NEXT_SEQUENCE_VALUE
            | SessionEffects.BACKUP_LOCK;

    private final Consumer<PinReason> onPinned;
    private final BiConsumer<PinReason, PinReason> onFirstChanged;
    /** The sniffed flags {@link #apply} acts on; the others are known some other way. */
    private final int followed;
    private int bits;
    private int namedLocks;
    private int namedLocksAtSnapshot;
    private Set<Integer> cursors;

    /**
     * @param onPinned told the first time each reason pins the session (metrics, log)
     * @param onFirstChanged told when the session's {@link #first} reason changes (before, now; either may be
     *     {@code null}): the count of sessions pinned now, by reason
     */
    Pins(Consumer<PinReason> onPinned, BiConsumer<PinReason, PinReason> onFirstChanged) {
        this(onPinned, onFirstChanged, -1);
    }

    /**
     * @param followed the sniffed flags that pin or unpin; -1 for all. Session pooling follows only the lock
     *     functions: what else a statement would pin for, the session's server tells at a move (decision 104).
     */
    Pins(Consumer<PinReason> onPinned, BiConsumer<PinReason, PinReason> onFirstChanged, int followed) {
        this.onPinned = onPinned;
        this.onFirstChanged = onFirstChanged;
        this.followed = followed;
    }

    /** Pins and unpins for what {@link SessionEffects} found in a statement. */
    void apply(int sniffed) {
        int flags = sniffed & followed;
        if (flags == 0) {
            return; // most statements, and every execute of one without effects
        }
        for (Rule rule : PINS) {
            if ((flags & rule.flag()) != 0) {
                pin(rule.reason());
            }
        }
        for (Rule rule : UNPINS) {
            if ((flags & rule.flag()) != 0) {
                unpin(rule.reason());
            }
        }
        if ((flags & SessionEffects.GET_LOCK) != 0) {
            namedLocks++;
        }
        if ((flags & SessionEffects.RELEASE_ALL_LOCKS) != 0) {
            namedLocks = 0;
        } else if ((flags & SessionEffects.RELEASE_LOCK) != 0 && namedLocks > 0) {
            namedLocks--;
        }
        if (namedLocks == 0 && (flags & (SessionEffects.RELEASE_LOCK | SessionEffects.RELEASE_ALL_LOCKS)) != 0) {
            unpin(PinReason.NAMED_LOCK);
        }
    }

    /**
     * Ends the pins that last only until the next statement, unless this statement renews them: the statements after
     * SQL_CALC_FOUND_ROWS run on the same connection until another SELECT, the next after warnings until it ran.
     */
    void nextStatement(int flags) {
        if ((flags & (SessionEffects.SELECT_STATEMENT | SessionEffects.CALC_FOUND_ROWS)) == SessionEffects.SELECT_STATEMENT) {
            unpin(PinReason.FOUND_ROWS); // only another SELECT replaces it (issue #38: a SET did not)
        }
        if ((flags & SessionEffects.BEGINS_TRANSACTION) != 0) {
            // The transaction it begins uses what SET TRANSACTION set, and holds the connection until it ends. Any
            // other statement may or may not start one (a DO does not, an INSERT does: issue #38): the pin stays.
            unpin(PinReason.SET_TRANSACTION);
        }
        if ((flags & SessionEffects.DIAGNOSTICS) == 0) {
            // The client has moved on. MariaDB may keep them through a statement on no table (SELECT 1, SET), which
            // a session that changes connection then no longer sees: the connection is reset before it goes back,
            // so no other session does either (BackendLease.giveBack).
            unpin(PinReason.DIAGNOSTICS);
        }
    }

    void pin(PinReason reason) {
        int bit = 1 << reason.ordinal();
        if ((bits & bit) == 0) {
            setBits(bits | bit);
            onPinned.accept(reason);
        }
    }

    void unpin(PinReason reason) {
        int bit = 1 << reason.ordinal();
        if ((bits & bit) != 0) {
            setBits(bits & ~bit);
        }
    }

    private void setBits(int value) {
        PinReason before = first();
        bits = value;
        PinReason now = first();
        if (now != before) {
            onFirstChanged.accept(before, now);
        }
    }

    /** A COM_STMT_EXECUTE opened a cursor on this statement: rows come by COM_STMT_FETCH on this connection. */
    void cursorOpened(int clientStatementId) {
        if (cursors == null) {
            cursors = new HashSet<>(4);
        }
        cursors.add(clientStatementId);
        pin(PinReason.CURSOR);
    }

    /** The statement was reset or closed: its cursor is gone. */
    /**
     * COM_STMT_SEND_LONG_DATA and COM_STMT_RESET, which transaction and session pooling follow alike: long data pins
     * the session until the execute that uses it or a reset; a reset also closes the statement's cursor.
     *
     * @param base where the command byte is in {@code frame}
     */
    void statementCommand(int command, ByteBuf frame, int base) {
        if (command == Command.COM_STMT_SEND_LONG_DATA) {
            pin(PinReason.LONG_DATA);
            return;
        }
        if (frame.readableBytes() >= Packets.HEADER_SIZE + 5) {
            cursorClosed(frame.getIntLE(base + 1));
        }
        unpin(PinReason.LONG_DATA);
    }

    void cursorClosed(int clientStatementId) {
        if (cursors != null && cursors.remove(clientStatementId) && cursors.isEmpty()) {
            unpin(PinReason.CURSOR);
        }
    }

    /** Whether {@code reason} pins the session now. */
    boolean has(PinReason reason) {
        return (bits & 1 << reason.ordinal()) != 0;
    }

    boolean isPinned() {
        return bits != 0;
    }

    /** Whether a reason other than {@code reason} pins the session now. */
    boolean isPinnedBesides(PinReason reason) {
        return (bits & ~(1 << reason.ordinal())) != 0;
    }

    /**
     * The reasons pinning now, as bits: what {@link #restore} takes back to, with the count of named locks as it is
     * now (there is one statement in flight to restore for).
     */
    int snapshot() {
        namedLocksAtSnapshot = namedLocks;
        return bits;
    }

    /**
     * Back to the reasons of the last {@link #snapshot}, and its count of named locks: a statement the server refused
     * before doing anything, which runs again elsewhere and counts again there.
     */
    void restore(int snapshot) {
        namedLocks = namedLocksAtSnapshot;
        setBits(snapshot);
    }

    /** The first reason the session is pinned for, or {@code null}. */
    PinReason first() {
        return bits == 0 ? null : PinReason.values()[Integer.numberOfTrailingZeros(bits)];
    }

    /** COM_RESET_CONNECTION or COM_CHANGE_USER: the server state behind every pin is gone. */
    void forget() {
        setBits(bits & 1 << PinReason.NO_SESSION_TRACK.ordinal()); // the server's capabilities did not change
        namedLocks = 0;
        cursors = null;
    }

    /** The session ended: it is pinned no more. */
    void end() {
        setBits(0);
    }
}
