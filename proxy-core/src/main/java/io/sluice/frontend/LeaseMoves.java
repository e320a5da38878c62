package io.sluice.frontend;

import io.sluice.backend.BackendConnection;
import io.sluice.backend.pool.EventLoopPool;
import io.sluice.balancer.Backend;
import io.sluice.balancer.BackendGroup;
import io.sluice.pooling.CommandPolicy;
import java.time.Duration;
import java.util.List;

/**
 * A session's moves to other backends of its group (issue #31), beside its {@link BackendLease}: in transaction
 * pooling the lease is re-pointed between transactions (decision 100), and a session that has written waits on the
 * new server for its last write first (decision 105); in session pooling the connection is handed over at an idle
 * moment by {@link SessionHandover} (decision 104). On the session's event loop, but for {@link #movePending()}.
 */
final class LeaseMoves {
    private final BackendLease lease;
    private final FrontendContext context;
    private final ClientSession session;
    /**
     * A move asked for while the session held a connection: done when it lets the connection go (transaction
     * pooling) or at its idle moment (session pooling). The target is a backend name, or {@code null} for the
     * balancer's choice among the others.
     */
    private volatile SessionMove.Reason pendingMove;
    private String pendingTarget;
    private int moves;
    /**
     * A move whose first connection on the new server must first wait for the session's last write there: the
     * backend it left (to go back to if the wait fails) and why it moved (counted once the wait succeeds).
     */
    private Backend movedFrom;
    private SessionMove.Reason movingFor;
    /** Session pooling: made when a move is first asked for. */
    private SessionHandover handover;

    LeaseMoves(BackendLease lease, FrontendContext context, ClientSession session) {
        this.lease = lease;
        this.context = context;
        this.session = session;
    }

    /**
     * Moves the session to another backend of the group, between transactions: at once when it holds no connection,
     * else as soon as it lets its connection go (transaction pooling) or at its next idle moment (session pooling).
     * Its next connection, on the new backend, is made to match it. On the session's event loop.
     *
     * @param to the backend to move to, or {@code null} for the balancer's choice among the others
     * @return {@code null} when the session moved or will move, else why it stays (counted)
     */
    SessionMove.Refusal move(SessionMove.Reason reason, String to) {
        CommandPolicy policy = lease.policy();
        Backend assigned = lease.assigned();
        SessionMove.Refusal refusal;
        if (!policy.movesBetweenBackends() && policy.followsSession()) {
            return null; // read/write splitting: the session's backends are its group's, chosen per statement
        } else if (!policy.movesBetweenBackends()) {
            refusal = moveSessionPooled(reason, to);
        } else if (lease.isEnded() || assigned == null || assigned.name().equals(to)) {
            return null;
        } else if (lease.connection() != null || lease.isAcquiring()) {
            pendingMove = reason; // a pinned session moves once what pins it ends
            pendingTarget = to;
            refusal = policy.pinnedBy() != null ? SessionMove.Refusal.PINNED : null;
        } else {
            refusal = moveNow(reason, to);
        }
        if (refusal != null) {
            context.registry().moveRefused(refusal);
        }
        return refusal;
    }

    /**
     * Session pooling (decision 104): a session that never had a connection, or starts afresh, moves as in
     * transaction pooling; one with a connection moves at its next idle moment, by {@link SessionHandover}.
     */
    private SessionMove.Refusal moveSessionPooled(SessionMove.Reason reason, String to) {
        Backend assigned = lease.assigned();
        if (!context.serverInfo().hasMariaDbCapabilities()) {
            return SessionMove.Refusal.SESSION_POOLING; // what a session holds is read from MariaDB's tables
        } else if (lease.isEnded() || assigned == null || assigned.name().equals(to)) {
            return null;
        } else if (lease.connection() == null && !lease.isAcquiring()) {
            return moveNow(reason, to); // no server state yet
        }
        pendingMove = reason;
        pendingTarget = to;
        if (handover == null) {
            handover = new SessionHandover(context, session, lease.relayHandler(), lease);
        }
        handover.atIdleMoment();
        return null;
    }

    /**
     * Whether the session can move at all: its state follows it between connections (transaction pooling), or can be
     * read from its server and set on another (session pooling on MariaDB, decision 104). Any thread.
     */
    boolean movable() {
        CommandPolicy policy = lease.policy();
        return policy.movesBetweenBackends()
                || (!policy.followsSession() && context.serverInfo().hasMariaDbCapabilities());
    }

    /** Session pooling: the move under way, if one was ever asked for, else {@code null}. */
    SessionHandover handover() {
        return handover;
    }

    /**
     * Session pooling: counts the session on the backend it is to move to, the one asked for or the balancer's
     * choice among the others.
     *
     * @return it, or {@code null} when none takes sessions
     */
    Backend claimTarget() {
        BackendGroup group = context.group();
        return pendingTarget != null ? group.claim(pendingTarget) : group.pick(List.of(lease.assigned().name()));
    }

    /** The move to {@code claimed} did not happen: the balancer counts the session there no more. */
    void unclaim(Backend claimed) {
        context.group().sessionEnded(claimed);
    }

    /** The move asked for is given up (nowhere to go). */
    void cancelMove() {
        pendingMove = null;
        pendingTarget = null;
    }

    /** Session pooling: the handover swapped the session's connection for one of {@code next}. */
    void handedOver(Backend next, BackendConnection fresh, EventLoopPool from, String schema) {
        SessionMove.Reason reason = pendingMove;
        cancelMove();
        lease.handOver(next, fresh, from, schema);
        moves++;
        context.registry().moved(reason);
    }

    /** How many times the session moved to another backend. */
    int count() {
        return moves;
    }

    /** Why a move waits for the session to let its connection go, or {@code null}. */
    SessionMove.Reason waiting() {
        return pendingMove;
    }

    /** Whether a move waits for the session to let its connection go. Any thread. */
    boolean movePending() {
        return pendingMove != null;
    }

    /** Transaction pooling: an acquire begins; a move asked for while the session held a connection happens now. */
    void beforeAcquire() {
        SessionMove.Reason move = pendingMove;
        if (move != null) {
            moveNow(move, pendingTarget);
        }
    }

    /** Transaction pooling: the connection went back; a move that waited for it happens now. */
    void afterGiveBack() {
        SessionMove.Reason move = pendingMove;
        if (move != null && moveNow(move, pendingTarget) != null) {
            context.registry().moveRefused(SessionMove.Refusal.NO_BACKEND);
        }
    }

    private SessionMove.Refusal moveNow(SessionMove.Reason reason, String to) {
        pendingMove = null;
        BackendGroup group = context.group();
        Backend left = lease.assigned();
        Backend next = to != null ? group.claim(to) : group.pick(List.of(left.name()));
        if (next == null) {
            return SessionMove.Refusal.NO_BACKEND;
        }
        lease.switchTo(next);
        if (awaitsLastWrite(left, reason)) {
            return null; // counted once the new server has the session's last write
        }
        moves++;
        context.registry().moved(reason);
        return null;
    }

    /**
     * After the session left {@code left} for another server between transactions: whether its first connection
     * there must first wait for the session's last write (read/write splitting's causal wait, decision 105). The
     * backend it first left is kept, to go back to.
     *
     * @param reason why it moved, counted once the wait succeeds; {@code null}: a reassignment, not counted
     */
    boolean awaitsLastWrite(Backend left, SessionMove.Reason reason) {
        Duration wait = context.pooling().moveGtidWait();
        if (wait.isZero() || !lease.policy().movedToAnotherServer(wait)) {
            return false;
        }
        if (movedFrom == null) {
            movedFrom = left; // moved on again before it got there: its write is still on the first one
        }
        movingFor = reason;
        return true;
    }

    /** Whether the session's next connection must wait for its last write (a move under way). */
    boolean awaitingLastWrite() {
        return movedFrom != null;
    }

    /** The backend the move under way left. */
    String leftBackend() {
        return movedFrom.name();
    }

    /** A connection was bound: if it is the first on the new server (its wait succeeded), the move is done. */
    void bound(BackendConnection taken) {
        if (movedFrom != null && !lease.policy().mustPrepare(taken)) {
            if (movingFor != null) {
                moves++;
                context.registry().moved(movingFor);
            }
            movedFrom = null;
            movingFor = null;
        }
    }

    /**
     * The new server had not applied the session's last write in time: the session goes back to the backend it left
     * (refused, {@code gtid_wait_timeout}), or, when that one is down, gets the error and is closed.
     *
     * @return whether it is back where it was
     */
    boolean undoMove() {
        Backend left = movedFrom;
        movedFrom = null;
        movingFor = null;
        context.registry().moveRefused(SessionMove.Refusal.GTID_WAIT_TIMEOUT);
        Backend back = left == null ? null : context.group().reclaim(left.name());
        if (back == null) {
            return false;
        }
        lease.policy().moveUndone();
        lease.switchTo(back);
        return true;
    }
}
