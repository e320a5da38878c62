package io.sluice.pooling;

import io.sluice.backend.BackendConnection;
import io.sluice.protocol.ServerStatus;
import io.sluice.relay.SessionStateListener;
import io.sluice.sql.SessionEffects;
import io.sluice.state.SessionTrackers;
import io.sluice.state.SessionVariables;
import io.sluice.state.TrackerDefaults;
import java.math.BigDecimal;
import java.util.Locale;
import java.util.Map;

/**
 * Follows the session state the server reports on whichever connection the session uses, so that it can be set again
 * on the next one: the system variables and schema from the session trackers, and the last-insert id from OK packets.
 * What the trackers report without saying what it is pins the session instead.
 */
final class SessionStateFollower implements SessionStateListener, SessionTrackers.Visitor {
    private static final String TIMESTAMP = "timestamp";
    private final SessionPort port;
    private final Pins pins;
    /** The session variables this session has set, to be re-applied on each connection it takes. */
    private final SessionVariables variables = new SessionVariables();
    /** The last-insert-id of the session's last statement that generated one: answers SELECT LAST_INSERT_ID(). */
    private long lastInsertId;
    /**
     * What {@code ROW_COUNT()} returns after the session's last statement: the affected rows of its last OK, or -1
     * after a result set or an error.
     */
    private long rowCount = -1;
    /** See {@link #foundRows()}. A fresh MariaDB session's {@code FOUND_ROWS()} is 1 (10.11, checked). */
    private long foundRows = 1;
    /**
     * The GTID of the session's last write, as MariaDB's {@code last_gtid} tracker reported it, or the GTID set
     * MySQL's {@code session_track_gtids} reported for it; {@code null} before the first.
     */
    private String lastGtid;
    /** A character set changed without its collation being reported: read it once the response is relayed. */
    private boolean collationUnknown;
    /**
     * The {@code timestamp} the tracker last reported, until a read-back tells whether the session's clock is set to
     * it; {@code null} when nothing is to be read.
     */
    private String timestampReported;
    /** The flags {@link SessionEffects} found in the COM_QUERY last forwarded. */
    private int lastStatementFlags;
    /** A statement named a user variable since they were last read back: read them before the connection goes. */
    private boolean userVariablesUnknown;
    /**
     * How many statements naming a user variable arrived so far. A statement is looked at when it arrives, which may
     * be while a read-back runs (it is then held, and runs after it): such a statement is not in what that read
     * found, so the read must not mark the variables known.
     */
    private long userVariableStatements;
    /**
     * The last statement left warnings and only diagnostics (SHOW WARNINGS...) ran since: a query of Sluice's own
     * would replace them before the client reads them.
     */
    private boolean warningsPending;

    /** The trackers the client would have on its own connection, or {@code null} (it negotiated none). */
    private final ClientTrackers clientTrackers;

    /** How the server reads the session's text, told what the server reports of it (decision 204). */
    private final ClientReading reading;

    SessionStateFollower(SessionPort port, Pins pins, ClientTrackers clientTrackers, ClientReading reading) {
        this.port = port;
        this.pins = pins;
        this.clientTrackers = clientTrackers;
        this.reading = reading;
    }

    SessionVariables variables() {
        return variables;
    }

    long lastInsertId() {
        return lastInsertId;
    }

    /**
     * The GTID of the session's last write (MariaDB with a binary log: {@code 0-1-42}; MySQL with GTIDs on:
     * {@code uuid:42}), or {@code null} before its first one.
     */
    String lastGtid() {
        return lastGtid;
    }

    /** The status flags of an OK Sluice answers with itself: autocommit as the session last set it. */
    int localStatus() {
        return "OFF".equalsIgnoreCase(variables.asMap().get("autocommit")) ? 0 : ServerStatus.SERVER_STATUS_AUTOCOMMIT;
    }

    long rowCount() {
        return rowCount;
    }

    /** What {@code FOUND_ROWS()} returns after the session's last SELECT: the rows it returned. */
    long foundRows() {
        return foundRows;
    }

    @Override
    public void onResultSetEnd(long rows) {
        foundRows = rows; // a result set is a SELECT's (or a SHOW's, which MariaDB counts alike)
    }

    /** A statement (COM_QUERY or COM_STMT_EXECUTE) with these sniffed flags goes to the server. */
    void statementSent(int flags) {
        lastStatementFlags = flags;
        rowCount = -1; // unless an OK answers it
        if ((flags & SessionEffects.DIAGNOSTICS) == 0) {
            warningsPending = false; // any other statement replaces them
        }
    }

    /** The responses relayed last ended with warnings: they stay readable until a statement other than diagnostics. */
    void warningsLeft() {
        warningsPending = true;
    }

    /**
     * The client's last response was an error: {@code ROW_COUNT()} is -1, also after one that answered no statement
     * (a refused COM_STMT_PREPARE leaves the server's at -1: the long run's seed 117161).
     */
    void failed() {
        rowCount = -1;
    }

    /** Whether warnings a client may still read are on the connection. */
    boolean warningsPending() {
        return warningsPending;
    }

    /**
     * Whether the last statement left state the trackers and OK packets do not tell exactly, to be read back: the
     * collation (MariaDB reports {@code SET NAMES x COLLATE y} as the three character sets only, and setting them
     * again on another connection would bring back x's default collation), the value {@code LAST_INSERT_ID(expr)}
     * set, or whether the clock is set ({@link #readBack}). Asking clears it.
     *
     * @return 0 for nothing, else {@link ReadBack#COLLATION}, {@link ReadBack#LAST_INSERT_ID} and/or
     *     {@link ReadBack#TIMESTAMP}
     */
    int takeReadBack() {
        int wanted = (collationUnknown ? ReadBack.COLLATION : 0)
                | ((lastStatementFlags & SessionEffects.SETS_LAST_INSERT_ID) != 0 ? ReadBack.LAST_INSERT_ID : 0)
                | (timestampReported != null ? ReadBack.TIMESTAMP : 0);
        if (wanted != 0) {
            collationUnknown = false;
            lastStatementFlags = 0;
        }
        return wanted;
    }

    /**
     * What a read-back found. The tracker reports {@code timestamp} whenever it is assigned, but only a value it was
     * set to is the session's: after {@code SET timestamp = DEFAULT} MariaDB reports the statement's start (the old
     * value, when one was set), after {@code SET timestamp = 0} the time it ran, and the clock runs again. Read by a
     * later statement, a set clock still shows the value reported, a running one does not (it has moved on by at
     * least the round trip, in microseconds): so the session keeps the value only when the read shows it, and returns
     * to the clock otherwise, on the next connection too (issue #38: it set the old value again there).
     */
    void readBack(BackendConnection on, String collation, String insertId, String timestamp) {
        if (collation != null) {
            variables.put("collation_connection", collation);
            on.state().variables().put("collation_connection", collation);
        }
        if (insertId != null) { // else the connection's value may be another session's
            lastInsertId = Long.parseUnsignedLong(insertId);
        }
        if (timestamp != null && timestampReported != null) {
            if (!sameTime(timestamp, timestampReported)) {
                variables.remove(TIMESTAMP);
                on.state().variables().remove(TIMESTAMP);
            }
            timestampReported = null;
        }
    }

    private static boolean sameTime(String read, String reported) {
        try {
            return new BigDecimal(read).compareTo(new BigDecimal(reported)) == 0;
        } catch (NumberFormatException e) {
            return false; // not a time as MariaDB and MySQL show it: the clock, which is the default
        }
    }

    /** COM_RESET_CONNECTION or COM_CHANGE_USER. */
    void forget() {
        variables.clear();
        reading.forget();
        timestampReported = null;
        lastInsertId = 0;
        rowCount = -1;
        foundRows = 1;
        userVariablesUnknown = false;
    }

    /** A statement named a user variable (transaction pooling carries them on MariaDB instead of pinning). */
    void userVariablesTouched() {
        userVariablesUnknown = true;
        userVariableStatements++;
    }

    /**
     * A read of the user variables begins: the statements that arrived so far have all run.
     *
     * @return what to hand to {@link #userVariablesRead} when it ends
     */
    long userVariablesReadBegins() {
        return userVariableStatements;
    }

    /** They cannot be read back: the session is pinned instead, and they need not be read any more. */
    void userVariablesPinned() {
        userVariablesUnknown = false;
    }

    /** Whether user variables may have changed since they were last read back. */
    boolean userVariablesUnknown() {
        return userVariablesUnknown;
    }

    /**
     * What {@link ReadUserVariables} found: the session's user variables, which {@code on} holds now. They stay
     * unknown if a statement naming one arrived while the read ran: it runs after the read, and may change them.
     *
     * @param readBegan what {@link #userVariablesReadBegins} returned when this read began
     */
    void userVariablesRead(BackendConnection on, Map<String, String> literals, long readBegan) {
        variables.userVariables(literals);
        on.state().variables().userVariables(literals);
        userVariablesUnknown = userVariableStatements != readBegan;
    }

    @Override
    public void onOk(long affectedRows, long insertId) {
        rowCount = affectedRows;
        // Only a statement that wrote rows generated the id: MariaDB also reports a connection's earlier value in
        // the OK packets of later statements, which would be another session's here.
        if (insertId != 0 && affectedRows != 0) {
            lastInsertId = insertId;
        }
    }

    @Override
    public void onSessionState(byte[] okPayload) {
        SessionTrackers.read(okPayload, this);
    }

    @Override
    public void onUntrackedStateChange() {
        if ((lastStatementFlags & Pins.UNTRACKED_STATE) == 0) {
            pins.pin(PinReason.SESSION_STATE);
        }
    }

    @Override
    public void onSystemVariable(String name, String value) {
        if (name.equalsIgnoreCase(SessionTrackers.LAST_GTID)) {
            // MariaDB with a binary log reports each write's GTID this way. It is the server's read-only record of
            // the connection's last write, not state the session set: replayed on the next connection it fails with
            // ERR 1238, and restored to its login value on a connection another session wrote on, the same. The
            // session's own is kept for read/write splitting's causal reads. A write a query rule sent to another
            // group (decision 194) is not one the session's own servers will ever apply: not waited for at home.
            if (!port.visiting()) {
                lastGtid = value;
            }
            return;
        }
        if (SessionVariables.isStatementScoped(name.toLowerCase(Locale.ROOT))) {
            // For the next statement only, on this connection: never re-applied elsewhere, and the session keeps the
            // connection, which a reset clears before anyone else gets it (issue #38)
            pins.pin(PinReason.STATEMENT_VARIABLE);
            return;
        }
        if (name.regionMatches(true, 0, "session_track", 0, 13)) {
            if (clientTrackers != null) {
                clientTrackers.changed(name, value);
            }
            if (!trackersStillOn(name.toLowerCase(Locale.ROOT), value)) {
                pins.pin(PinReason.SESSION_TRACKERS); // the trackers Sluice relies on are off: follow no further
            }
            return; // Sluice's own setting, not replayed
        }
        if (name.equalsIgnoreCase(TIMESTAMP)) {
            timestampReported = value; // kept for now, until the read-back tells whether the clock is set to it
        } else if (name.equalsIgnoreCase("character_set_connection")) {
            collationUnknown = true; // MariaDB reports SET NAMES ... COLLATE without the collation
        } else if (name.equalsIgnoreCase("collation_connection")) {
            collationUnknown = false;
        } else if (name.equalsIgnoreCase("character_set_client")) {
            reading.reportedCharset(value);
        } else if (name.equalsIgnoreCase("sql_mode")) {
            reading.reportedSqlMode(value);
        }
        variables.put(name, value);
        BackendConnection on = port.connection();
        if (on != null) {
            on.state().variables().put(name, value);
        }
    }

    /** Whether a tracker setting the client changed still reports what Sluice needs. */
    private boolean trackersStillOn(String name, String value) {
        switch (name) {
            case "session_track_system_variables":
                return value.equals("*"); // Sluice rewrites the client's assignments to '*'
            case "session_track_schema":
            case "session_track_state_change":
                return value.equalsIgnoreCase("ON") || value.equals("1");
            case "session_track_transaction_info":
                // Sluice reads the characteristics a SET TRANSACTION leaves, however it ran, where results end in OK
                // packets (decision 197); elsewhere it does not turn the tracker on, and the client's choice is free
                BackendConnection on = port.connection();
                return on != null && !on.key().deprecateEof() || value.equalsIgnoreCase("CHARACTERISTICS")
                        || value.equals("2");
            case "session_track_gtids":
                // MySQL only (Sluice turns it on there): OFF would leave causal reads without the session's writes.
                // ALL_GTIDS still reports them, within the server's whole set.
                return TrackerDefaults.gtidsOn(value);
            default:
                return true;
        }
    }

    /**
     * MySQL reported the GTIDs the statement committed ({@code OWN_GTID}, turned on by Sluice): the last report is
     * kept, as MariaDB's {@code last_gtid} is. A replica applies one source's transactions in its commit order
     * ({@code replica_preserve_commit_order}, on by default since 8.0.27, or a single applier), so once it has the
     * last GTID it has the session's earlier ones too; a union of every report would grow with each write, since other
     * sessions' transactions fall between them.
     */
    @Override
    public void onGtids(String gtidSet) {
        lastGtid = gtidSet;
    }

    /**
     * Outside a transaction, characteristics are what a {@code SET TRANSACTION} left for the next transaction on this
     * connection, however it ran: a trigger's shows nowhere in the statement's text (issue #38). The session keeps
     * the connection as for a {@code SET TRANSACTION} it sent itself, and a reset clears them before anyone else
     * gets it. Inside one they are the current transaction's, which holds the connection anyway.
     */
    @Override
    public void onTransactionCharacteristics(String statements, boolean inTransaction) {
        if (!inTransaction && !statements.isEmpty()) {
            pins.pin(PinReason.SET_TRANSACTION);
        }
    }

    @Override
    public void onSchema(String schema) {
        BackendConnection on = port.connection();
        if (on != null) {
            on.state().schema(schema);
        }
        port.schemaChanged(schema);
    }

    @Override
    public void onEnd(boolean stateChanged, boolean described) {
        if (stateChanged && !described && (lastStatementFlags & Pins.UNTRACKED_STATE) == 0) {
            pins.pin(PinReason.SESSION_STATE);
        }
    }
}
