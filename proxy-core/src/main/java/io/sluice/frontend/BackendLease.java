package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.concurrent.Future;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.BorrowingSession;
import io.sluice.backend.pool.BackendPool;
import io.sluice.backend.pool.EventLoopPool;
import io.sluice.balancer.Backend;
import io.sluice.balancer.BackendGroup;
import io.sluice.balancer.replication.Roles;
import io.sluice.pooling.CommandPolicy;
import io.sluice.pooling.GtidNotReached;
import io.sluice.protocol.ServerErrors;
import io.sluice.routing.FallBackToPrimary;
import io.sluice.routing.ReadWriteGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's hold on the backends: the backend the balancer assigned it, and the connection it has from that
 * backend's pool now, if any. Assigning and reassigning, failing over a first connect, acquiring, binding, and
 * letting go (to be reset, or as it is between transactions) happen here. On the session's event loop.
 */
final class BackendLease {
    private static final Logger log = LoggerFactory.getLogger(BackendLease.class);

    /**
     * Transaction pooling: how many pooled connections one acquire may find broken when it restores the session's
     * variables, before the client gets the error. Each one is closed, so this bounds the new connections a server that
     * breaks every connection at once can cost per command.
     */
    private static final int MAX_BROKEN_ON_SYNC = 3;

    private final FrontendContext context;
    private final ClientSession session;
    private BorrowingSession relay;
    private CommandRelayHandler relayHandler;
    private FirstStatement first;
    private CommandPolicy policy = CommandPolicy.SESSION;
    /**
     * The backend the balancer assigned this session to, and its name and pool on this event loop. The name is read
     * by other threads too ({@link SessionMoves} choosing sessions to move).
     */
    private Backend assigned;
    private volatile String dataSource;
    private EventLoopPool pool;
    /** Whether the session is read/write split: assigned to its group's primary, never moved off it. */
    private boolean split;
    /** The session's read/write split group, or {@code null}. */
    private ReadWriteGroup readWriteGroup;
    /** Whether the last connection tried came from {@link #pool}: for a split session, from its primary. */
    private boolean triedPrimary;
    /** Read/write splitting: the pool the next acquire takes from instead of {@link #pool}, or {@code null}. */
    private EventLoopPool routed;
    /** A rule's route to another group (decision 194): the schema there, until bound; then the visit is on. */
    private String visitSchema;
    private boolean visiting;
    private BackendConnection connection;
    /** The pool {@link #connection} came from, where it goes back. */
    private EventLoopPool lentFrom;
    /** Whether a connection was ever bound: from then on the session has server state and cannot move. */
    private boolean everBound;
    /**
     * Whether the connection held now carries nothing of the session but what Sluice gave it when it was bound: the
     * session's first (session pooling), or one taken for a transaction (transaction pooling).
     */
    private boolean boundFresh;
    private boolean acquiring;
    /** What the acquire under way ends in (one at a time): exactly one of the first two, once. */
    private Consumer<BackendConnection> onBound;
    private Consumer<Throwable> onFailed;
    private Runnable onWaiting;
    private boolean ended;
    /** Backends this session could not connect to, left out when it fails over; null until it first fails. */
    private List<String> failedBackends;
    private long failoverDeadlineNanos;
    /** Pooled connections found broken while restoring this session's variables, in the acquire under way. */
    private int brokenOnSync;
    /** The acquire under way waits for the group's primary (none takes writes now), or {@code null}. */
    private PrimaryWait primaryWait;
    /** Moves asked for, under way, or waiting for the session to let its connection go. */
    private final LeaseMoves moves;

    BackendLease(FrontendContext context, ClientSession session) {
        this.context = context;
        this.session = session;
        this.moves = new LeaseMoves(this, context, session);
    }

    /** The command stage that connections are bound to, and its policy. */
    void attach(CommandRelayHandler target, CommandPolicy commandPolicy) {
        this.relay = target;
        this.relayHandler = target;
        this.policy = commandPolicy;
        this.first = new FirstStatement(context, target, this);
    }

    /** The first command on each connection bound, kept until answered (decision 160). */
    FirstStatement first() {
        return first;
    }

    /**
     * Has the balancer pick a backend for the session, and resolves its schema there.
     *
     * @return false when no backend takes sessions
     */
    boolean assign() {
        ReadWriteGroup group = context.readWriteGroup(session.requestedSchema());
        split = group != null;
        readWriteGroup = group;
        Backend picked = split ? claimPrimary(group) : context.group().pick();
        if (picked == null) {
            return false;
        }
        assign(picked);
        if (split && !picked.isUp()) {
            // The login's schema check (and anything before the first statement's own route) asks a replica: the
            // primary would refuse the connect, and the session is the group's whatever its primary's state.
            routeTo(group.pickReplica());
        }
        return true;
    }

    /**
     * A split session belongs to its group's primary, also while the primary is down as long as a replica may take
     * reads (decision 103): it logs in, reads from the replicas, and each statement that needs the primary gets
     * {@link ClientErrors#primaryDown} until the primary is back.
     */
    private Backend claimPrimary(ReadWriteGroup group) {
        Backend primary = context.group().claim(group.primary());
        return primary != null || !group.anyReplicaUsable() ? primary : context.group().claimDown(group.primary());
    }

    /** Makes {@code chosen} this session's backend; the balancer has already counted the session on it. */
    private void assign(Backend chosen) {
        assigned = chosen;
        dataSource = chosen.name();
        pool = context.pool(dataSource).forLoop(session.eventLoop());
        session.schema(session.requestedSchema(), context.resolveSchema(session.requestedSchema(), dataSource));
    }

    /**
     * Moves a session that holds no server connection to another backend. The balancer picks again, leaving out
     * {@code excluding}.
     *
     * @return false, and no change, when no other backend takes sessions
     */
    private boolean reassign(List<String> excluding) {
        BackendGroup group = context.group();
        Backend next = excluding == null ? group.pick() : group.pick(excluding);
        if (next == null) {
            return false;
        }
        Backend left = assigned;
        switchTo(next);
        if (everBound) {
            moves.awaitsLastWrite(left, null); // its writes, if any, are on the one it left
        }
        return true;
    }

    /**
     * Makes {@code next}, on which the balancer has already counted the session, its backend, with its schema there
     * ({@link #schemaOn}), which the follower selects on the new connection.
     */
    void switchTo(Backend next) {
        String schema = schemaOn(next.name(), session.schema());
        context.group().sessionEnded(assigned);
        log.debug("client {}: moving from backend {} to {}", session.remoteAddress(), dataSource, next.name());
        assign(next);
        session.schema(session.requestedSchema(), schema);
    }

    /**
     * The schema a session whose schema is {@code current} has once it moved to {@code nextDataSource}: the one it
     * logged in with is resolved again for the new data source (a {@code databaseName} alias names another database
     * on each); one it changed to since ({@code USE}) is a real schema, kept as it is.
     */
    String schemaOn(String nextDataSource, String current) {
        String loggedIn = context.resolveSchema(session.requestedSchema(), dataSource);
        return Objects.equals(current, loggedIn) ? context.resolveSchema(session.requestedSchema(), nextDataSource)
                : current;
    }

    /** Where the session moves, and how (transaction pooling's re-pointing, session pooling's handover). */
    LeaseMoves moves() {
        return moves;
    }

    /**
     * Session pooling: {@code fresh}, a connection of {@code next} made to match the session, replaces the one it
     * held, which the caller closes. The balancer already counts the session on {@code next}.
     */
    void handOver(Backend next, BackendConnection fresh, EventLoopPool from, String schema) {
        context.group().sessionEnded(assigned);
        log.debug("client {}: moving from backend {} to {}", session.remoteAddress(), dataSource, next.name());
        assigned = next;
        dataSource = next.name();
        pool = from;
        session.schema(session.requestedSchema(), schema);
        connection = fresh;
        lentFrom = from;
        boundFresh = false; // it carries the session's state, moved
        fresh.bind(relay, session.commands(), policy.stateFollower(), policy.sessionStateShown(fresh));
    }

    /** The backend the session is assigned to, {@code null} once it ended. */
    Backend assigned() {
        return assigned;
    }

    boolean isEnded() {
        return ended;
    }

    CommandPolicy policy() {
        return policy;
    }

    CommandRelayHandler relayHandler() {
        return relayHandler;
    }

    /**
     * Read/write splitting: the next acquire takes a connection of {@code dataSource} ({@code null}: of the
     * session's own backend, the group's primary).
     */
    void routeTo(String dataSource) {
        if (visitSchema == null) { // else a rule's route to another group decided this statement's (decision 194)
            routed = dataSource == null ? null : context.pool(dataSource).forLoop(session.eventLoop());
        }
    }

    /**
     * A query rule routes the statement about to be sent to another group (decision 194): the next acquire takes a
     * connection of {@code dataSource} with {@code schema}, and the session gives it back to that pool after it.
     */
    void visit(String dataSource, String schema) {
        routed = context.pool(dataSource).forLoop(session.eventLoop());
        visitSchema = schema;
    }

    /** Whether the session takes, or holds, a connection of another group for a rule's route (decision 194). */
    boolean visiting() {
        return visitSchema != null || visiting && connection != null; // given back: the visit is over
    }

    /** A visit whose statement took no connection (Sluice answered it) is forgotten. */
    void endVisit() {
        if (!acquiring && connection == null) {
            visitSchema = null;
            routed = null;
        }
    }

    /**
     * Read/write splitting: runs one query of Sluice's own on a connection of the session's primary (its assigned
     * backend), not bound to the session ({@link PrimaryQuery}).
     */
    void queryPrimary(String sql, Consumer<List<Map<String, String>>> rows, Consumer<BackendException> failed) {
        PrimaryQuery.run(pool, session.key(), session.schema(), sql, rows, failed);
    }

    /** The connection held now, or {@code null}. */
    BackendConnection connection() {
        return connection;
    }

    boolean isAcquiring() {
        return acquiring;
    }

    ReadWriteGroup readWriteGroup() {
        return readWriteGroup;
    }

    /** The data source the session is assigned to. */
    String dataSource() {
        return dataSource;
    }

    /** The pool of the assigned data source, all loops. */
    BackendPool backendPool() {
        return context.pool(dataSource);
    }

    /** The backends tried by the last acquire, the one it ended on last. */
    List<String> triedBackends() {
        List<String> tried = failedBackends == null ? new ArrayList<>() : new ArrayList<>(failedBackends);
        if (!tried.contains(dataSource)) {
            tried.add(dataSource);
        }
        return tried;
    }

    /**
     * Takes a connection for the session: moves first, if the session holds no server state and its backend has left
     * rotation; fails over to another backend while a connect fails and {@code connectionTimeoutMilliseconds} lasts.
     *
     * @param onBound told once the connection is the session's, bound to it
     * @param onFailed told when no connection could be had ({@link #triedBackends()} says where it was tried)
     * @param onWaiting told when no connection is free at once: the session waits (and stops reading meanwhile)
     */
    void acquire(Consumer<BackendConnection> onBound, Consumer<Throwable> onFailed, Runnable onWaiting) {
        this.onBound = onBound;
        this.onFailed = onFailed;
        this.onWaiting = onWaiting;
        if (acquiring || connection != null) {
            // Two acquires would each bind a connection, and the first would stay lent to nobody, its slot taken.
            throw new IllegalStateException("acquire while " + (acquiring ? "another is under way" : "one is held"));
        }
        moves.beforeAcquire(); // a move asked for while the session held its last connection
        if (!split && (!everBound || policy.movesBetweenBackends()) && !assigned.acceptsSessions()) {
            reassign(null); // assigned at login (or, transaction pooling, between transactions), and it left rotation
        }
        failedBackends = null;
        brokenOnSync = 0;
        primaryWait = null;
        failoverDeadlineNanos = System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(backendPool().dataSource().connectionTimeoutMilliseconds());
        tryAcquire();
    }

    private void tryAcquire() {
        if (routed == null && split && readWriteGroup.dynamic() && !primaryTakesWrites()) {
            return; // it waits for the group's primary
        }
        EventLoopPool from = routed != null ? routed : pool;
        triedPrimary = from == pool;
        String schema = visitSchema != null && from == routed ? visitSchema : session.schema();
        if (policy.followsSession()) {
            BackendConnection idle = from.pollIdle(session.key(), schema, policy.variables());
            if (idle != null && !policy.mustPrepare(idle)) {
                bind(idle, from); // the usual case, once per transaction: nothing to wait for, nothing to sync
                return;
            }
            if (idle != null) {
                acquiring = true;
                prepareThenBind(from, idle);
                return;
            }
        }
        acquiring = true;
        Future<BackendConnection> acquired = from.acquire(session.key(), schema);
        if (!acquired.isDone()) {
            // Reading stops only while a connection is really awaited: an idle one (the usual case in transaction
            // pooling, once per transaction) is bound at once, without two epoll_ctl calls to stop and resume.
            onWaiting.run();
        }
        acquired.addListener(f -> {
            acquiring = false;
            if (!f.isSuccess()) {
                if (!ended && from == routed) {
                    routed = null; // a replica (or a rule's other group) gave none: the session's own serves it
                    visitSchema = null;
                    log.debug("client {}: no connection from a replica ({}); reading from the primary",
                            session.remoteAddress(), f.cause().toString());
                    tryAcquire();
                } else if (!ended && failOver(f.cause())) {
                    tryAcquire();
                } else if (!ended) {
                    failed(f.cause());
                }
                return;
            }
            BackendConnection taken = (BackendConnection) f.getNow();
            if (ended) {
                from.returnUnused(taken);
                return;
            }
            acquiring = true;
            prepareThenBind(from, taken);
        });
    }

    /**
     * A statement needs the primary of a group whose primary may change (issue #40): one volatile read of the roles.
     * When another server became the primary, the session follows it (its backend, its pool); when none takes
     * writes, the acquire waits for one ({@link PrimaryWait}) and tries again, or fails with {@link NoPrimary}.
     */
    private boolean primaryTakesWrites() {
        Roles roles = readWriteGroup.roles();
        if (roles.takesWrites()) {
            if (!roles.primary().equals(dataSource)) {
                BackendGroup backends = context.group();
                // counted whatever its weight: the roles move weights after they change, not before
                Backend next = backends.reclaim(roles.primary());
                if (next == null) {
                    next = backends.claimDown(roles.primary());
                }
                if (next != null) {
                    log.debug("client {}: the primary of group {} is now {}", session.remoteAddress(),
                            readWriteGroup.name(), roles.primary());
                    switchTo(next);
                }
            }
            return true;
        }
        if (primaryWait == null) {
            primaryWait = PrimaryWait.begin(readWriteGroup, session.eventLoop());
            onWaiting.run(); // the session stops reading while it waits
        }
        acquiring = true;
        primaryWait.await(roles, () -> {
            acquiring = false;
            if (!ended) {
                tryAcquire();
            }
        }, error -> {
            acquiring = false;
            if (!ended) {
                failed(error);
            }
        });
        return false;
    }

    /** Makes a connection just taken match the session, then binds it. */
    private void prepareThenBind(EventLoopPool from, BackendConnection taken) {
        policy.prepareConnection(taken, error -> {
            acquiring = false;
            if (ended) {
                from.returnUnused(taken);
            } else if (error instanceof GtidNotReached && moves.awaitingLastWrite()) {
                from.returnAsIs(taken); // matched and clean, only behind: it serves another session
                String left = moves.leftBackend();
                if (moves.undoMove()) {
                    log.info("client {}: stays on backend {}: {}", session.remoteAddress(), left, error.getMessage());
                    tryAcquire();
                } else {
                    failed(new GtidNotReached("session moved off backend '" + left + "', which is down, and "
                            + error.getMessage() + ": closing the session rather than let it miss its own write"));
                }
            } else if (error instanceof FallBackToPrimary) {
                from.returnAsIs(taken); // matched and clean, only not caught up: it serves another read
                routed = null;
                tryAcquire();
            } else if (error != null && PooledConnections.gone(error) && ++brokenOnSync <= MAX_BROKEN_ON_SYNC) {
                // The server ended the connection while it was idle in the pool (killed, timed out, shutting
                // down) and its close was not yet seen. Nothing of the client's reached it, and it is closed
                // now: take another one.
                log.debug("client {}: {}; taking another connection", session.remoteAddress(), error.getMessage());
                tryAcquire();
            } else if (error != null) {
                failed(error);
            } else {
                bind(taken, from);
            }
        });
    }

    /** An acquire failed; a schema the server no longer has is checked at the next login again. */
    private void failed(Throwable cause) {
        if (cause instanceof BackendException be && be.serverError() != null
                && be.serverError().code() == ServerErrors.ER_BAD_DB_ERROR) {
            backendPool().knownSchemas().missing(session.schema());
        }
        onFailed.accept(cause);
    }

    private void bind(BackendConnection taken, EventLoopPool from) {
        connection = taken;
        lentFrom = from;
        visiting = visitSchema != null && from == routed;
        visitSchema = null;
        routed = null;
        boundFresh = !everBound || policy.movesBetweenBackends();
        everBound = true;
        moves.bound(taken);
        first.bound();
        taken.bind(relay, session.commands(), policy.stateFollower(), policy.sessionStateShown(taken));
        onBound.accept(taken);
    }

    /**
     * After a failed connect: tells the balancer (passive health), and moves the session to another backend when one
     * takes sessions and the first backend's {@code connectionTimeoutMilliseconds} has not run out. A server that
     * turns every connection away ("Too many connections") counts as a failed connect. A refusal of this login by
     * the server (wrong schema, access denied) or a full pool is not one and is not retried.
     *
     * @return whether the session now has another backend to try
     */
    private boolean failOver(Throwable cause) {
        if (!(cause instanceof BackendException be) || (be.serverError() != null && !be.isServerUnavailable())) {
            return false;
        }
        context.group().reportConnectFailure(dataSource, cause.getMessage());
        if (split || System.nanoTime() - failoverDeadlineNanos >= 0) {
            return false;
        }
        if (failedBackends == null) {
            failedBackends = new ArrayList<>(2);
        }
        failedBackends.add(dataSource);
        String from = dataSource;
        if (!reassign(failedBackends)) {
            return false;
        }
        log.info("client {}: cannot connect to backend {} ({}); failing over to {}", session.remoteAddress(),
                from, cause.getMessage(), dataSource);
        return true;
    }

    /**
     * Transaction pooling: the transaction is over; the connection goes back as it is, its state known, unless it
     * holds what the next session would see and no SET can take away: it is reset first (issue #38).
     */
    void giveBack() {
        BackendConnection done = connection;
        connection = null;
        if (PooledConnections.showsTraces(done)) {
            lentFrom.resetAndReturn(done);
        } else {
            lentFrom.returnAsIs(done);
        }
        moves.afterGiveBack();
    }

    /** The session starts afresh (COM_RESET_CONNECTION, COM_CHANGE_USER): the connection goes back to be reset. */
    void release() {
        if (connection != null) {
            BackendConnection old = connection;
            connection = null;
            lentFrom.resetAndReturn(old);
        }
    }

    /** The ERR for a client whose session got no connection (taken by the caller). */
    ByteBuf acquireFailed(ByteBufAllocator alloc, int sequenceId, Throwable cause) {
        if (cause instanceof NoPrimary none) {
            return ClientErrors.noPrimary(alloc, sequenceId, readWriteGroup.name(), none);
        }
        if (readWriteGroup != null && triedPrimary && cause instanceof BackendException be
                && (be.serverError() == null || be.isServerUnavailable())) {
            return ClientErrors.primaryDown(alloc, sequenceId, readWriteGroup.name(), dataSource(),
                    backendPool().address(), be.getMessage());
        }
        return ClientErrors.acquireFailed(alloc, sequenceId, cause, dataSource(), backendPool().address(),
                triedBackends(), context.poolExhaustion());
    }

    /** The connection closed under the session: the balancer hears of it, and the session holds none. */
    void lost(BackendConnection lost) {
        if (lost == connection) {
            connection = null;
            context.group().reportConnectionLost(lost.dataSourceName());
        }
    }

    /**
     * The connection was lost before it answered the one command sent on it, which is to run on another backend
     * ({@link FirstStatement}, decision 160): the session lets go of the connection and of its backend, as after a
     * failed connect, if it holds nothing there but what Sluice gave it.
     *
     * @return false, and nothing changed, when the session has more on that server, is read/write split, or no
     *     other backend takes sessions
     */
    boolean failOverUnanswered(BackendConnection lost) {
        if (lost != connection || !boundFresh || split || visiting) {
            return false;
        }
        boolean wasBound = everBound;
        everBound = policy.movesBetweenBackends(); // session pooling: as if the lost one had never been bound
        if (!reassign(List.of(dataSource))) {
            everBound = wasBound;
            return false;
        }
        connection = null;
        context.group().reportConnectionLost(lost.dataSourceName());
        return true;
    }

    /** One of Sluice's own commands found the connection gone: the session holds none. */
    void forget(BackendConnection gone) {
        if (gone == connection) {
            connection = null;
        }
    }

    /** The session ended: the connection goes back to be reset, and the backend counts one session less. */
    void end() {
        ended = true;
        first.drop();
        release();
        if (assigned != null) {
            context.group().sessionEnded(assigned);
            assigned = null;
        }
    }
}
