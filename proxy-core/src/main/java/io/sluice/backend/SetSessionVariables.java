package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import java.util.List;
import java.util.function.Consumer;

/**
 * A {@code SET SESSION} of Sluice's own: turning the session trackers on after login and reset, or giving a connection
 * the variables of the session that takes it next (transaction pooling).
 */
public final class SetSessionVariables extends OwnCommand {
    /**
     * The trackers that report, in OK packets, every session variable set, every schema change and any other state
     * change, so that a session's state can follow it to its next connection. COM_RESET_CONNECTION puts them back to
     * the server's defaults, so they are set again after each reset.
     */
    static final String SESSION_TRACKERS = "SET SESSION session_track_system_variables = '*', "
            + "session_track_schema = ON, session_track_state_change = ON";
    /**
     * On a connection whose results end in OK packets (CLIENT_DEPRECATE_EOF) also the transaction characteristics,
     * whose {@code SET TRANSACTION} (next transaction only) no other tracker reports, not even as a state change: one
     * run by a trigger would otherwise go unseen (issue #38, decision 197). Not where results end in EOF packets:
     * there the tracker raises "state changed" on every EOF of a transaction without saying what, and would pin
     * every session that reads in a transaction.
     */
    static final String CHARACTERISTICS_TRACKER = ", session_track_transaction_info = CHARACTERISTICS";
    /**
     * On MySQL also the GTID of each transaction the session commits ({@code SESSION_TRACK_GTIDS}), which read/write
     * splitting's causal reads wait for on a replica: MySQL has no {@code last_gtid} variable for the variables
     * tracker to report, as MariaDB does. MariaDB has no {@code session_track_gtids}: the SET would fail there.
     */
    static final String MYSQL_GTIDS_TRACKER = ", session_track_gtids = OWN_GTID";

    /**
     * What a replica's connection runs after login and after every reset (decision 110): the session refuses every
     * write with ERR 1792 (ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION), even for an account whose SUPER or
     * READ ONLY ADMIN passes the server's {@code read_only}. The statement form rather than a variable: MariaDB
     * before 11.1 names it {@code tx_read_only}, MySQL 8 {@code transaction_read_only}.
     */
    public static final String READ_ONLY = "SET SESSION TRANSACTION READ ONLY";

    /**
     * What a connection opened as a replica's runs once its data source became the group's primary (issue #40),
     * before it takes a write: the server's default access mode again.
     */
    public static final String READ_WRITE = "SET SESSION TRANSACTION READ WRITE";

    private final String statement;
    private final Consumer<BackendException> done;

    /**
     * @param statement the {@code SET SESSION ...} statement
     * @param done receives {@code null} on OK, else the server's refusal or the failure
     */
    public SetSessionVariables(String statement, Consumer<BackendException> done) {
        this.statement = statement;
        this.done = done;
    }

    /**
     * The trackers transaction pooling follows; its outcome is judged by the session check that follows it.
     *
     * @param mySql whether the server is MySQL (the GTID tracker too)
     * @param deprecateEof whether the connection's results end in OK packets (the characteristics tracker too)
     */
    static SetSessionVariables sessionTrackers(boolean mySql, boolean deprecateEof) {
        return new SetSessionVariables(SESSION_TRACKERS + (deprecateEof ? CHARACTERISTICS_TRACKER : "")
                + (mySql ? MYSQL_GTIDS_TRACKER : ""), error -> { });
    }

    /** A replica's connection's {@link #READ_ONLY}, judged by the session check that follows it. */
    static SetSessionVariables readOnly() {
        return new SetSessionVariables(READ_ONLY, error -> { });
    }

    @Override
    protected ByteBuf encode(ByteBufAllocator alloc) {
        return Packets.command(alloc, Command.COM_QUERY, statement);
    }

    @Override
    protected ResponseKind response() {
        return ResponseKind.RESULT;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        done.accept(refusal(statement, packets));
    }

    @Override
    protected void onFailure(BackendException cause) {
        done.accept(cause);
    }

    @Override
    public String toString() {
        return statement;
    }
}
