package io.sluice.pooling;

import io.netty.channel.Channel;
import io.sluice.backend.BackendConnection;
import io.sluice.protocol.Packets.BackendError;
import io.sluice.sql.HiddenCodeNames;
import java.util.function.Supplier;

/**
 * What a {@link CommandPolicy} may ask of the client session it serves. Implemented by the frontend's command relay;
 * every method runs on the session's event loop. Client-visible errors are named here by what happened and built in
 * one place by the frontend. What only a routing policy asks of its session is the {@code routing} package's
 * {@code Router}, a capability of its own (decision 140).
 */
public interface SessionPort {

    /** The client channel (its allocator, its address for log lines). */
    Channel clientChannel();

    /** The connection the session holds now, or {@code null} (between transactions). */
    BackendConnection connection();

    /** The sequence id a reply to the command being looked at carries. */
    int replySequenceId();

    /** Whether nothing is outstanding: no connection being acquired, no command held back or half sent. */
    boolean isQuiet();

    /** Answers a command with OK. */
    void replyOk(int sequenceId, int statusFlags);

    /** A prepared-statement command named a statement the session never prepared (or closed). */
    void replyUnknownStatement(long clientId, int command, int sequenceId);

    /** A command too short to be what its first byte says: the session is closed. */
    void failMalformed(int command, int sequenceId);

    /** The command held back first fails with the server's error (its statement no longer prepares); it is dropped. */
    void failHeldCommand(BackendError error);

    /** One of Sluice's own commands failed because the connection broke: the session ends with CR_SERVER_LOST. */
    void lostBackend(BackendConnection on, Throwable cause);

    /** Commands held back while Sluice's own command ran may go now. */
    void resume();

    /** Lets the connection go between transactions, its state kept (transaction pooling). */
    void giveBack();

    /**
     * Whether the statement now being run takes, or runs on, a connection of another group than the session's, for a
     * query rule's route (decision 194): the connection goes back after it, whatever diagnostics it left.
     */
    default boolean visiting() {
        return false;
    }

    /**
     * The names of tables and views whose triggers or definitions leave session state (decision 200), as the scans
     * of the session's statements read them.
     */
    default Supplier<HiddenCodeNames> hiddenCode() {
        return () -> HiddenCodeNames.NONE;
    }

    /**
     * The collation id the client's handshake (or its last COM_CHANGE_USER) named: its character set, until a
     * statement sets another (decision 204).
     */
    int clientCollationId();

    /**
     * The {@code sql_mode} the connections the session's next statement may run on logged in with (the one it holds,
     * its data source's, a read/write split group's), or {@code null} while Sluice has not logged in to that server
     * (decision 204). Asked for each statement: it changes when the session takes another connection or moves.
     */
    default String loginSqlMode() {
        return null;
    }

    /**
     * The session is sending {@code sql}, which defines a trigger or a view or renames a table: what it names counts
     * from now for every session's statements (decision 203).
     */
    default void hiddenCodeDefining(String sql) {
    }

    /** The definitions {@code sql} (sent before, joined by {@code ;}) have run: they are read again (decision 200). */
    default void hiddenCodeDefined(String sql) {
    }

    /** Gives the connection back to be reset (COM_RESET_CONNECTION answered by Sluice). */
    void resetConnection();

    /** The server reports that the session changed schema. */
    void schemaChanged(String schema);

    /** The session got pinned for {@code reason} (counted by the metrics, logged). */
    void pinned(PinReason reason);

    /**
     * The first reason the session is pinned for changed ({@code null}: not pinned): sessions pinned now are counted
     * by it, to explain a pool that ran out.
     */
    void pinChanged(PinReason before, PinReason now);
}
