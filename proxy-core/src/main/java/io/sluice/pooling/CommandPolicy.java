package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.SessionKey;
import io.sluice.protocol.Capabilities;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import io.sluice.relay.SessionStateFilter;
import io.sluice.relay.SessionStateListener;
import io.sluice.state.SessionVariables;
import java.time.Duration;
import java.util.function.Consumer;

/**
 * How one client session uses backend connections: the seam between the command relay and pooling or routing
 * policies. Session pooling ({@link #SESSION}) keeps one connection for the session's life and only looks at each
 * command; {@link TransactionPooling} gives the connection back between transactions and makes the next one match
 * the session.
 *
 * <p>The relay calls {@link #onCommand} once per client command: that is all session pooling pays, one call the JIT
 * inlines. The other hooks run only when {@link #followsSession()} is true (read once per session), per transaction
 * or per statement command, never per relayed packet.
 *
 * <p>What a policy may do to a session goes through its {@link SessionPort}: answer a command itself, hold commands
 * back while a command of Sluice's own runs, let the connection go. Optional capabilities are interfaces of their
 * own, which the relay looks for once per session (decision 140): {@link StatementMapping} for a policy that maps
 * prepared statements onto each connection's, and the {@code routing} package's {@code RoutingPolicy} and
 * {@code Router} for one that chooses a server per statement (read/write splitting). Moving a session to another
 * server is a give-back followed by an acquire elsewhere, with
 * {@link #prepareConnection} making the new connection match the session (see
 * docs/design/2026-11-27-session-core.md).
 */
public interface CommandPolicy {

    /** Session pooling: one connection per session, every command forwarded as it came. */
    CommandPolicy SESSION = (command, frame) -> frame;

    /**
     * The policy of a new session: session pooling, or transaction pooling when the server can report session state
     * (its connections then negotiate CLIENT_SESSION_TRACK whatever the client did; without it a session keeps its
     * connection, pinned).
     *
     * @param clientTracksState whether the client itself negotiated CLIENT_SESSION_TRACK
     * @param mariaDb whether the server is MariaDB, whose user variables Sluice can read back and carry
     */
    static CommandPolicy of(boolean transactionPooling, SessionKey key, boolean clientTracksState, boolean mariaDb,
            SessionPort port) {
        if (!transactionPooling) {
            // A session-pooling session on MariaDB records its prepared statements and follows its named locks
            // (decisions 106 and 108), whatever the size of its group: a backend added later is where it may move.
            return mariaDb ? new SessionPooling(port) : SESSION;
        }
        if (!followsState(true, key)) {
            return new PinnedSession(port);
        }
        return new TransactionPooling(port, key.deprecateEof(), clientTracksState, mariaDb);
    }

    /** Whether a session of this key gives its connection back between transactions, following its state. */
    static boolean followsState(boolean transactionPooling, SessionKey key) {
        return transactionPooling && Capabilities.has(key.capabilities(), Capabilities.CLIENT_SESSION_TRACK);
    }

    /**
     * Looks at a client command before it is forwarded: may pin the session, rewrite the command, or answer it.
     *
     * @param command the command byte
     * @param frame the whole command frame (taken)
     * @return the frame to forward (the same or another one), or {@code null} when the policy answered or dropped the
     *     command (the frame is then released)
     */
    ByteBuf onCommand(int command, ByteBuf frame);

    /** Whether the hooks below are used: false for session pooling. Read once per session. */
    default boolean followsSession() {
        return false;
    }

    /** Whether the session may be moved to another backend of the group between transactions. */
    default boolean movesBetweenBackends() {
        return followsSession();
    }

    /**
     * The session now belongs to another server of the group (a move, issue #31) whose servers replicate from one
     * another ({@code pooling.moveGtidWaitMilliseconds} above 0): its first connection there must wait until that
     * server has applied the session's last write, if the session has one.
     *
     * @param timeout how long that server may take
     * @return whether such a wait is due ({@link #prepareConnection} then runs it, and fails with
     *     {@link GtidNotReached} when the server does not catch up in time)
     */
    default boolean movedToAnotherServer(Duration timeout) {
        return false;
    }

    /** The move was undone (its wait did not succeed): the session is back on the server it wrote on. */
    default void moveUndone() {
    }

    /**
     * Whether {@code connection}, an idle one that already matches the session, must still go through
     * {@link #prepareConnection} before it is lent (read/write splitting's causal wait on a replica).
     */
    default boolean mustPrepare(BackendConnection connection) {
        return false;
    }

    /** Relayed responses ended and were written to the client: read back state, or let the connection go. */
    default void afterResponses(BackendConnection connection) {
    }

    /** The session variables a connection must hold to serve the session without a {@code SET} first. */
    default SessionVariables variables() {
        return null;
    }

    /**
     * Makes a connection just taken from the pool match the session (its variables), before it is lent.
     *
     * @param done receives {@code null} when it matches, else why not (the connection is then closed)
     */
    default void prepareConnection(BackendConnection connection, Consumer<BackendException> done) {
        done.accept(null);
    }

    /**
     * What the client is shown of OK packets that carry session state on {@code connection}, about to be lent, when
     * its trackers report more than the client would see on a connection of its own; {@code null}: they are relayed
     * as they are.
     */
    default SessionStateFilter sessionStateShown(BackendConnection connection) {
        return null;
    }

    /** Who follows the session state the server reports, or {@code null}. */
    default SessionStateListener stateFollower() {
        return null;
    }

    /**
     * Whether the policy's own command now running on the session's connection reads what it needs to look at the
     * session's next statement: a statement that arrives meanwhile waits, before the policy sees it, until it ended.
     */
    default boolean readsBackForNext() {
        return false;
    }

    /** Whether the connection may go back to the pool as it is (its state known), rather than reset. */
    default boolean mayGiveBack(BackendConnection connection) {
        return false;
    }

    /** COM_RESET_CONNECTION or COM_CHANGE_USER: the session starts afresh. */
    default void forget() {
    }

    /** The client's connection closed. */
    default void sessionEnded() {
    }

    /** The first reason the session keeps its connection between transactions, or {@code null}. */
    default PinReason pinnedBy() {
        return null;
    }
}
