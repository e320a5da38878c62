package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.protocol.Packets.BackendError;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What a {@link CommandPolicy} may ask of the client session it serves. Implemented by the frontend's command relay;
 * every method runs on the session's event loop. Client-visible errors are named here by what happened and built in
 * one place by the frontend.
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

    /**
     * Read/write splitting: the session's next connection comes from this data source ({@code null}: the one the
     * session is assigned to, the group's primary). Called between transactions, before the acquire.
     */
    default void routeTo(String dataSource) {
        throw new UnsupportedOperationException("routeTo");
    }

    /**
     * Read/write splitting: the command being looked at waits, held, until the commands before it are answered and
     * the connection is between commands; then {@link CommandPolicy#routeHeld} routes it. Commands behind it wait
     * behind it, in order.
     */
    default void holdToRoute() {
        throw new UnsupportedOperationException("holdToRoute");
    }

    /**
     * Read/write splitting: runs {@code frame} (taken), a statement a replica refused as a write, again, before any
     * command held behind it; {@link CommandPolicy#routeHeld} routes it (decision 110).
     */
    default void runAgainFirst(ByteBuf frame, int command) {
        throw new UnsupportedOperationException("runAgainFirst");
    }

    /**
     * Read/write splitting: the first held command (taken from its place) waits to be routed again;
     * {@link CommandPolicy#routeHeld} routes it (decision 110).
     */
    default void routeFirstAgain() {
        throw new UnsupportedOperationException("routeFirstAgain");
    }

    /**
     * Read/write splitting: answers the statement being looked at with ERR 1792: it would make the session's
     * replica connection read-write (decision 110).
     */
    default void refuseAccessModeOnReplica(int sequenceId, String group, String replica) {
        throw new UnsupportedOperationException("refuseAccessModeOnReplica");
    }

    /** Whether a command held by {@link #holdToRoute()} still waits to be routed. */
    default boolean holdsToRoute() {
        return false;
    }

    /**
     * Read/write splitting ({@code causalReads: GLOBAL}): runs one text query of Sluice's own on a connection of the
     * group's primary, taken for it alone and given back; the session's own connection is not involved. Exactly one
     * of {@code rows} and {@code failed} is told, on the session's event loop.
     */
    default void queryPrimary(String sql, Consumer<List<Map<String, String>>> rows,
            Consumer<BackendException> failed) {
        throw new UnsupportedOperationException("queryPrimary");
    }

    /** Lets the connection go between transactions, its state kept (transaction pooling). */
    void giveBack();

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
