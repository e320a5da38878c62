package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.TextRows;
import io.sluice.relay.ResponseKind;
import io.sluice.state.SessionVariables;
import io.sluice.state.TrackerDefaults;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Reads the session variables that COM_RESET_CONNECTION may leave changed, after login and again after each reset:
 * if the character sets differ from login, the connection no longer matches its {@link SessionKey} and is closed;
 * the schema tells which sessions it can serve without COM_INIT_DB. A connection that follows session state also
 * reads the trackers a client starts with ({@link TrackerDefaults}), since Sluice turns more of them on.
 */
final class SessionCheck extends OwnCommand {
    static final String QUERY = "SELECT DATABASE(), @@character_set_client, @@character_set_connection, "
            + "@@character_set_results, @@collation_connection, @@sql_mode, @@wait_timeout";
    private static final int COLUMNS = 7;
    static final String TRACKER_DEFAULTS = ", @@global.session_track_system_variables, "
            + "@@global.session_track_schema, @@global.session_track_state_change";
    private static final int TRACKER_COLUMNS = 3;
    /** MySQL's GTID tracker default too, since Sluice turns it on there; MariaDB has no such variable. */
    static final String MYSQL_TRACKER_DEFAULTS = TRACKER_DEFAULTS + ", @@global.session_track_gtids";
    /**
     * MariaDB's current role: COM_RESET_CONNECTION leaves a {@code SET ROLE} in force (10.11, checked), so a reset
     * that does not give the login's role back leaves the next session another's privileges. MySQL is not asked: 5.7
     * has no roles, and what its reset does with them is unverified here.
     */
    static final String ROLE = ", CURRENT_ROLE()";
    /**
     * A replica's connection also reads its access mode, last: it must be READ ONLY (decision 110). MariaDB before
     * 11.1 has only {@code tx_read_only}, MySQL 8 only {@code transaction_read_only}.
     */
    static final String ACCESS_MODE = ", @@session.tx_read_only";
    static final String MYSQL_ACCESS_MODE = ", @@session.transaction_read_only";

    /**
     * The row read.
     *
     * @param handshakeVariables the values of {@link SessionVariables#HANDSHAKE_VARIABLES}, by name
     * @param trackerDefaults the trackers a client's own connection would start with; {@code null} when not read
     * @param role MariaDB's {@code CURRENT_ROLE()} ("" for none); {@code null} on MySQL, where it is not read
     * @param readOnly whether the session's access mode was read as READ ONLY (false when not read)
     */
    record Row(String schema, String characterSets, Map<String, String> handshakeVariables,
            TrackerDefaults trackerDefaults, String role, boolean readOnly) {
    }

    private final boolean deprecateEof;
    private final boolean readTrackerDefaults;
    private final boolean mySql;
    private final boolean readAccessMode;
    private final Consumer<Row> done;

    /**
     * @param readTrackerDefaults whether to read the global {@code session_track_*} values too
     * @param mySql whether the server is MySQL: its {@code session_track_gtids} default is read as well
     * @param readAccessMode whether to read the session's access mode too (a replica's connection)
     * @param done receives the row, or {@code null} when the query failed or the connection broke
     */
    SessionCheck(boolean deprecateEof, boolean readTrackerDefaults, boolean mySql, boolean readAccessMode,
            Consumer<Row> done) {
        this.deprecateEof = deprecateEof;
        this.readTrackerDefaults = readTrackerDefaults;
        this.mySql = mySql;
        this.readAccessMode = readAccessMode;
        this.done = done;
    }

    private int columns() {
        return (readTrackerDefaults ? COLUMNS + TRACKER_COLUMNS + (mySql ? 1 : 0) : COLUMNS) + (mySql ? 0 : 1)
                + (readAccessMode ? 1 : 0);
    }

    @Override
    protected ByteBuf encode(ByteBufAllocator alloc) {
        String query = (!readTrackerDefaults ? QUERY : QUERY + (mySql ? MYSQL_TRACKER_DEFAULTS : TRACKER_DEFAULTS))
                + (mySql ? "" : ROLE);
        return Packets.command(alloc, Command.COM_QUERY,
                readAccessMode ? query + (mySql ? MYSQL_ACCESS_MODE : ACCESS_MODE) : query);
    }

    @Override
    protected ResponseKind response() {
        return ResponseKind.RESULT;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        String[] row = TextRows.single(packets, deprecateEof, columns());
        if (row == null) {
            done.accept(null);
            return;
        }
        Map<String, String> handshake = new HashMap<>(8);
        for (int i = 0; i < SessionVariables.HANDSHAKE_VARIABLES.size(); i++) {
            handshake.put(SessionVariables.HANDSHAKE_VARIABLES.get(i), row[i + 1]);
        }
        TrackerDefaults trackers = readTrackerDefaults
                ? TrackerDefaults.of(row[COLUMNS], row[COLUMNS + 1], row[COLUMNS + 2],
                        mySql ? row[COLUMNS + TRACKER_COLUMNS] : null) : null;
        int last = columns() - 1;
        String role = mySql ? null : Objects.requireNonNullElse(row[readAccessMode ? last - 1 : last], "");
        boolean readOnly = readAccessMode && "1".equals(row[last]);
        done.accept(new Row(row[0], row[1] + "/" + row[2] + "/" + row[3] + "/" + row[4], handshake, trackers,
                role, readOnly));
    }

    @Override
    protected void onFailure(BackendException cause) {
        done.accept(null);
    }
}
