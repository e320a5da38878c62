package io.sluice.backend.pool;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendAccount;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.ConnectionOwner;
import io.sluice.backend.ReadReplication;
import io.sluice.backend.ResetConnection;
import io.sluice.backend.SessionKey;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.config.DataSourceConfig;
import io.sluice.state.SessionVariables;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The part of a data source's pool that belongs to one event loop. Its connections run on that loop, like the
 * sessions that borrow them, so a borrowed connection never hands work to another thread, and the pool needs no
 * lock: every method runs on {@link #loop()}. Only the count of open connections is shared between loops
 * ({@link SlotBalancer}).
 *
 * <p>It coordinates the parts: the {@link IdleConnections} and their {@link IdleLending}, the sessions that wait for a slot ({@link Waiters}) or
 * for a reset ({@link ResetHandOff}), and the {@link BackendConnector}. A connection coming back never serves another
 * session's wait in the caller's stack: waiters are served from a task of the pool's own, so a session that gives
 * its connection back from inside the relay of its last response never runs another session's work there.
 */
public final class EventLoopPool implements ConnectionOwner {
    private static final Logger log = LoggerFactory.getLogger(EventLoopPool.class);

    private final BackendPool parent;
    private final EventLoop loop;
    private final SlotBalancer balancer;
    private final IdleConnections idle = new IdleConnections();
    private final Waiters waiters = new Waiters();
    private final ResetHandOff resets;
    private final IdleLending idleLending;
    /**
     * Every connection of this loop whose channel is open: idle, lent, logging in or running Sluice's own commands.
     * {@link #shutdown()} closes them all while the loop still runs tasks, so that each one's channelInactive releases
     * what it holds (the packets of an unfinished exchange) at a point Sluice chooses (decision 058).
     */
    private final Set<BackendConnection> connections = new HashSet<>();
    private String loginSqlMode; // of the latest login here: read for each statement of a session holding none
    private final Runnable serveTask = this::serve;
    /** This loop's part of {@code minPoolSize}; changes on config reload. */
    private int minIdleShare;
    private SessionKey lastKey;
    /** {@link #shutdown()} ran: a housekeeping task queued before it must not refill the pool. */
    boolean shutDown;
    /** Pooled connections of this loop that hold a slot: logging in, idle or lent. */
    private int openHere;
    private boolean serveScheduled;
    /** A delayed {@link #reclaimIfStillWaiting()} is scheduled. */
    private boolean reclaimScheduled;
    /** This loop's sessions have waited longer than {@link SlotBalancer#RECLAIM_DELAY_MILLIS}. */
    private boolean starving;

    EventLoopPool(BackendPool parent, EventLoop loop, SlotBalancer balancer, int minIdleShare) {
        this.parent = parent;
        this.loop = loop;
        this.balancer = balancer;
        this.minIdleShare = minIdleShare;
        this.idleLending = new IdleLending(this, parent, idle);
        this.resets = new ResetHandOff(loop, w -> openOrEnqueue(w.key(), w.schema(), w.promise()));
    }

    public EventLoop loop() {
        return loop;
    }

    /** The data source's pool this part belongs to. */
    public BackendPool parent() {
        return parent;
    }

    void setMinIdleShare(int share) {
        minIdleShare = share;
    }

    /** The sql_mode of this loop's latest login, else of the server's on any loop, or none yet (decision 204). */
    public String loginSqlMode() {
        return loginSqlMode != null ? loginSqlMode : parent.loginSqlMode();
    }

    /** Idle connections here, for metrics and tests; may be read from any thread. */
    public int idleCount() {
        return idle.size();
    }

    // ---- lending -------------------------------------------------------------------------------------------

    /**
     * Lends a connection for a session of this key, with {@code schema} selected ({@code null}: none): an idle one,
     * one being reset, a new one, or the first freed once {@code maxPoolSize} is reached. Must be called on
     * {@link #loop()}.
     */
    public Future<BackendConnection> acquire(SessionKey key, String schema) {
        Promise<BackendConnection> promise = loop.newPromise();
        long started = System.nanoTime();
        lastKey = key;
        lend(key, schema, promise);
        // Acquire wait for metrics: once per session, not per command.
        if (promise.isDone()) {
            if (promise.isSuccess()) {
                parent.counters().acquired(System.nanoTime() - started);
            }
        } else {
            promise.addListener(f -> {
                if (f.isSuccess()) {
                    parent.counters().acquired(System.nanoTime() - started);
                }
            });
        }
        return promise;
    }

    /**
     * Transaction pooling's fast path, taken once per transaction: the most recently used idle connection, if it has
     * this key, schema and session variables and nobody waits, without a promise or a listener. {@code null}
     * otherwise: then {@link #acquire} does the rest. Must be called on {@link #loop()}.
     */
    public BackendConnection pollIdle(SessionKey key, String schema, SessionVariables variables) {
        if (!waiters.isEmpty()) {
            return null;
        }
        BackendConnection first = idle.takeFirstIfSame(key, schema, variables);
        if (first != null && parent.timeouts().needsCheckBeforeLending(first)) {
            idle.addFirst(first); // idle for long: acquire() checks it before lending it
            return null;
        }
        if (first != null) {
            first.markHeld();
            parent.counters().acquired(0);
        }
        return first;
    }

    /**
     * Takes back a connection from a session that has ended: it is reset (COM_RESET_CONNECTION and the session check)
     * and then pooled. One in the middle of a response, or in any doubt, is closed. Must be called on
     * {@link #loop()}.
     */
    public void resetAndReturn(BackendConnection connection) {
        if (!takeBack(connection, "released")) {
            return;
        }
        resets.started(connection);
        ResetConnection.run(connection, clean -> {
            resets.ended(connection);
            if (clean) {
                offer(connection);
            } else {
                log.debug("closing {}: the reset left it unlike its key", connection);
                connection.close();
                resets.failed(connection.key());
            }
        });
    }

    /**
     * Transaction pooling: takes back a connection between two transactions of a session that goes on. It keeps its
     * session state (the next session to take it makes the variables its own), so no reset is needed; one in the
     * middle of a response, or in any doubt, is closed. Must be called on {@link #loop()}.
     */
    public void returnAsIs(BackendConnection connection) {
        if (takeBack(connection, "given back")) {
            offer(connection);
        }
    }

    /**
     * Takes back a connection acquired for a session that ended before it was lent (the client left while it waited).
     * Must be called on {@link #loop()}.
     */
    public void returnUnused(BackendConnection connection) {
        offer(connection);
    }

    /** Unbinds a connection from its session; false (and closed) when it is not clean between commands. */
    private boolean takeBack(BackendConnection connection, String how) {
        boolean clean = connection.isBetweenCommands() && connection.isOpen() && !connection.state().isTainted();
        connection.unbind();
        if (!clean) {
            log.debug("closing {}: {} mid-response or in doubt", connection, how);
            connection.close();
        }
        return clean;
    }

    /** Puts a clean connection in the idle list; waiters are served from a task of the pool's own. */
    void offer(BackendConnection connection) {
        if (!connection.isOpen()) {
            return;
        }
        if (parent.isRetiring()) {
            log.debug("closing {}: its backend is down or draining", connection);
            connection.close();
            return;
        }
        connection.markIdle();
        idle.addFirst(connection);
        if (!waiters.isEmpty() || resets.hasWaiters() || balancer.anotherLoopNeedsSlot(openHere)) {
            scheduleServe();
        }
    }

    private void scheduleServe() {
        if (!serveScheduled) {
            serveScheduled = true;
            loop.execute(serveTask);
        }
    }

    /** The pool's own task: serves waiting sessions, then gives a slot to another loop if one needs it. */
    private void serve() {
        serveScheduled = false;
        serveWaitersIfAny();
        if (resets.hasWaiters()) {
            resets.serve(waiter -> idleLending.serve(waiter.key(), waiter.schema(), waiter.promise()));
        }
        if (waiters.isEmpty() && balancer.anotherLoopNeedsSlot(openHere)) {
            retireOneIdle(); // a session waits on another loop, which no connection here can serve
        }
    }

    /** Lends an idle connection, one being reset, a new one, or the first freed once {@code maxPoolSize} is reached. */
    void lend(SessionKey key, String schema, Promise<BackendConnection> promise) {
        if (!idleLending.serve(key, schema, promise) && !resets.await(key, schema, promise)) {
            openOrEnqueue(key, schema, promise);
        }
    }

    private void openOrEnqueue(SessionKey key, String schema, Promise<BackendConnection> promise) {
        if (balancer.tryReserve(key)) {
            open(key, schema, promise);
        } else {
            enqueue(key, schema, promise);
        }
    }

    private void open(SessionKey key, String schema, Promise<BackendConnection> promise) {
        openHere++;
        log.debug("opening a connection to {} for schema {} ({} open)", parent.address(), schema, balancer.open());
        Promise<BackendConnection> ready = loop.newPromise();
        ready.addListener(f -> {
            if (f.isSuccess()) {
                BackendConnection connection = (BackendConnection) f.getNow();
                parent.counters().connectionCreated();
                connection.channel().closeFuture().addListener(closed -> parent.counters().connectionClosed());
                if (!promise.trySuccess(connection)) {
                    offer(connection); // the waiter gave up meanwhile
                }
            } else {
                parent.counters().connectionFailed();
                promise.tryFailure(f.cause());
            }
        });
        parent.connector().connect(this, key, schema, ready, parent.loginTimeoutMillis(), true);
    }

    /**
     * A health check: opens a connection outside the pool's count, logs in, and says goodbye with COM_QUIT. Logging
     * in rather than only reading the greeting matters: a server counts connections dropped after the greeting as
     * handshake errors and blocks a host that makes {@code max_connect_errors} of them.
     */
    void check(long timeoutMillis, Promise<Void> outcome) {
        Promise<BackendConnection> ready = loop.newPromise();
        ready.addListener(f -> {
            if (f.isSuccess()) {
                BackendConnection connection = (BackendConnection) f.getNow();
                connection.markIdle();
                connection.close();
                outcome.trySuccess(null);
            } else {
                outcome.tryFailure(f.cause());
            }
        });
        parent.connector().connect(this, parent.defaultKey(), null, ready, timeoutMillis, false);
    }

    /**
     * Reads a read/write split group's server's replication state on a connection of its own, then closes it: as
     * {@link #check}, plus the queries of {@link ReadReplication}.
     */
    void readReplication(long timeoutMillis, Promise<ReplicationReading> outcome) {
        Promise<BackendConnection> ready = loop.newPromise();
        ready.addListener(f -> {
            if (!f.isSuccess()) {
                outcome.trySuccess(ReplicationReading.unreachable(parent.dataSource().name(),
                        String.valueOf(f.cause().getMessage())));
                return;
            }
            BackendConnection connection = (BackendConnection) f.getNow();
            ScheduledFuture<?> timer = loop.schedule(connection::close, timeoutMillis, TimeUnit.MILLISECONDS);
            ReadReplication.run(connection, parent.dataSource().name(), reading -> {
                timer.cancel(false);
                connection.markIdle();
                connection.close();
                outcome.trySuccess(reading);
            });
        });
        parent.connector().connect(this, parent.defaultKey(), null, ready, timeoutMillis, false);
    }

    /** {@link BackendPool#runAs}, on this (the check) loop. */
    void runAs(String[] account, List<String> statements, long timeoutMillis,
            java.util.concurrent.CompletableFuture<List<java.util.Map<String, String>>[]> outcome) {
        Promise<BackendConnection> ready = loop.newPromise();
        ready.addListener(f -> {
            if (f.isSuccess()) {
                new AccountStatements((BackendConnection) f.getNow(), statements, outcome).start(loop, timeoutMillis);
            } else {
                outcome.completeExceptionally(f.cause());
            }
        });
        parent.connector().connect(this, parent.defaultKey(), null, ready, timeoutMillis, false, account);
    }

    // ---- waiting for a slot --------------------------------------------------------------------------------

    private void enqueue(SessionKey key, String schema, Promise<BackendConnection> promise) {
        DataSourceConfig dataSource = parent.dataSource();
        long timeout = dataSource.connectionTimeoutMilliseconds();
        ScheduledFuture<?> timer = loop.schedule(() -> {
            if (waiters.remove(promise)) {
                waiterLeft();
            }
            promise.tryFailure(balancer.accountFull(key)
                    ? new PoolExhaustedException(dataSource.name(), key.accountUser(),
                            dataSource.maxPoolSizePerAccount(), timeout)
                    : new PoolExhaustedException(dataSource.name(), dataSource.maxPoolSize(), timeout));
        }, timeout, TimeUnit.MILLISECONDS);
        waiters.add(new Waiters.Waiter(key, schema, promise, timer));
        balancer.waiterAdded();
        log.debug("session waits for a connection to {} ({} open)", parent.address(), balancer.open());
        if (balancer.accountFull(key)) {
            // The session's account has all maxPoolSizePerAccount allows: only one of its own connections, idle with
            // another key here or idle on another loop, makes room; another account's would not.
            retireOneIdleOf(key.account());
            reclaimForAccount(key.account());
            return;
        }
        // Idle connections that cannot serve this session (another key or schema here, or any on another loop)
        // hold slots: retire one here and one per other loop; the freed slot opens a connection for the waiter.
        retireOneIdle();
        if (balancer.reclaimsAtOnce()) {
            balancer.reclaimElsewhere(this);
        } else {
            scheduleReclaim(); // other loops' slots only if no give-back here serves the waiter soon
        }
    }

    /**
     * Asks the other loops for an idle connection of {@code account}, now and every
     * {@link SlotBalancer#RECLAIM_DELAY_MILLIS} while a session of it waits here: in transaction pooling its
     * connections come and go between transactions on their own loops, idle only for moments.
     */
    private void reclaimForAccount(BackendAccount account) {
        balancer.reclaimAccountElsewhere(this, account);
        loop.schedule(() -> {
            if (!shutDown && waiters.anyFor(account)) {
                reclaimForAccount(account);
            }
        }, SlotBalancer.RECLAIM_DELAY_MILLIS, TimeUnit.MILLISECONDS);
    }

    /** Serves waiting sessions from idle connections or new ones while slots allow. Runs in a task of its own. */
    void serveWaitersIfAny() {
        // Waiters whose account has all maxPoolSizePerAccount allows are passed over, in order: they must not hold up
        // the sessions of other accounts behind them while slots are free.
        ArrayList<Waiters.Waiter> accountsFull = null;
        while (!waiters.isEmpty()) {
            Waiters.Waiter waiter = waiters.poll();
            waiterLeft();
            if (waiter.promise().isDone()) {
                continue;
            }
            if (idleLending.serve(waiter.key(), waiter.schema(), waiter.promise())) {
                waiter.stopTimer();
                continue;
            }
            if (balancer.accountFull(waiter.key())) {
                if (accountsFull == null) {
                    accountsFull = new ArrayList<>(2);
                }
                accountsFull.add(waiter);
                continue;
            }
            if (!idle.isEmpty()) {
                idle.pollLast().close(); // only connections of another key or schema are idle: make room
            }
            if (!balancer.tryReserve(waiter.key())) {
                waiters.addFirst(waiter); // still first in line
                balancer.waiterAdded();
                break;
            }
            waiter.stopTimer();
            open(waiter.key(), waiter.schema(), waiter.promise());
        }
        if (accountsFull != null) {
            for (int i = accountsFull.size() - 1; i >= 0; i--) {
                waiters.addFirst(accountsFull.get(i)); // first in line again, in their order
                balancer.waiterAdded();
            }
        }
    }

    private void waiterLeft() {
        balancer.waiterRemoved();
        if (starving && waiters.isEmpty()) {
            setStarving(false);
        }
    }

    private void scheduleReclaim() {
        if (!reclaimScheduled) {
            reclaimScheduled = true;
            loop.schedule(this::reclaimIfStillWaiting, SlotBalancer.RECLAIM_DELAY_MILLIS, TimeUnit.MILLISECONDS);
        }
    }

    /** Sessions still wait: ask the other loops for a slot, and again every delay while they do. */
    private void reclaimIfStillWaiting() {
        reclaimScheduled = false;
        if (waiters.isEmpty()) {
            setStarving(false);
            return;
        }
        setStarving(true);
        balancer.reclaimElsewhere(this);
        scheduleReclaim();
    }

    private void setStarving(boolean value) {
        if (starving != value) {
            starving = value;
            balancer.starvingChanged(value);
        }
    }

    /** Another loop asks for a slot: closes the oldest idle connection here, if the balancer says this loop should. */
    void yieldIdleSlot() {
        BackendConnection oldest = idle.peekLast();
        if (oldest != null && balancer.shouldYield(openHere, System.nanoTime() - oldest.idleSinceNanos())) {
            retireOneIdle();
        }
    }

    /** Closes one idle connection, if any, to give its slot to another loop or key. */
    void retireOneIdle() {
        BackendConnection oldest = idle.pollLast();
        if (oldest != null) {
            oldest.close();
        }
    }

    /** Closes the oldest idle connection of {@code account}, if any, to give its slot to a waiter of that account. */
    void retireOneIdleOf(BackendAccount account) {
        for (Iterator<BackendConnection> it = idle.oldestFirst(); it.hasNext(); ) {
            BackendConnection connection = it.next();
            if (account.equals(connection.key().account())) {
                it.remove();
                connection.close();
                return;
            }
        }
    }

    /** Closes every idle connection: the backend went down or is draining. */
    void retireAllIdle() {
        for (BackendConnection connection; (connection = idle.pollLast()) != null; ) {
            connection.close();
        }
    }

    // ---- the connections' lives ----------------------------------------------------------------------------

    @Override
    public void onOpened(BackendConnection connection) {
        connections.add(connection);
    }

    @Override
    public void onLoggedIn(BackendConnection connection) {
        String value = connection.state().loginValues().get("sql_mode");
        if (value != null) {
            loginSqlMode = value;
            parent.loggedInWith(value);
        }
    }

    @Override
    public void onClosed(BackendConnection connection) {
        connections.remove(connection);
        resets.ended(connection); // closed mid-reset: the sessions waiting for it fall back at their timeout
        idle.remove(connection);
    }

    @Override
    public void slotReleased(BackendConnection connection) {
        openHere--;
        balancer.released(connection.key());
    }

    /**
     * One sweep of the stall watch over this loop's connections; run on the loop.
     *
     * @param serverHung the server was found hung: a connection that waits for it in silence is closed (its session
     *     hears the connection was lost) rather than left waiting for good
     * @param suspectAfter the silent sweeps in a row after which a wait makes the server suspect
     * @return whether a connection here has waited in silence for {@code suspectAfter} sweeps (or a multiple)
     */
    boolean sweepStalls(boolean serverHung, int suspectAfter) {
        boolean suspect = false;
        List<BackendConnection> silent = null;
        for (BackendConnection connection : connections) {
            int sweeps = connection.silentSweeps();
            if (sweeps > 0 && serverHung) {
                if (silent == null) {
                    silent = new ArrayList<>();
                }
                silent.add(connection);
            } else if (sweeps > 0 && sweeps % suspectAfter == 0) {
                suspect = true;
            }
        }
        if (silent != null) {
            for (BackendConnection connection : silent) {
                log.debug("closing {}: its server was found hung and it waits for an answer", connection);
                connection.channel().close();
            }
        }
        return suspect;
    }

    /** The periodic check of idle timeouts, lifetimes and the minimum pool size; run on the loop. */
    void housekeep() {
        if (shutDown) {
            return;
        }
        long now = System.nanoTime();
        DataSourceConfig dataSource = parent.dataSource();
        long idleTimeout = TimeUnit.MILLISECONDS.toNanos(dataSource.idleTimeoutMilliseconds());
        long maxLifetime = TimeUnit.MILLISECONDS.toNanos(dataSource.maxLifetimeMilliseconds());
        for (Iterator<BackendConnection> it = idle.oldestFirst(); it.hasNext(); ) {
            BackendConnection connection = it.next();
            boolean tooOld = maxLifetime > 0 && now - connection.createdNanos() > maxLifetime;
            boolean idleTooLong = idleTimeout > 0 && now - connection.idleSinceNanos() > idleTimeout
                    && idle.size() > minIdleShare;
            if (tooOld || idleTooLong) {
                it.remove();
                connection.close();
            }
        }
        int missing = parent.isRetiring() ? 0 : minIdleShare - idle.size();
        SessionKey key = lastKey != null ? lastKey : parent.defaultKey();
        for (int i = 0; i < missing && balancer.tryReserve(key); i++) {
            Promise<BackendConnection> warm = loop.newPromise();
            warm.addListener(f -> {
                if (f.isSuccess()) {
                    offer((BackendConnection) f.getNow());
                } else {
                    log.debug("could not open a minimum-pool connection to {}: {}", parent.address(),
                            f.cause().toString());
                }
            });
            open(key, null, warm);
        }
    }

    /**
     * Closes every connection, idle or not, and fails every waiter. Runs on the loop. The closes' channelInactive
     * events run later on this loop: {@link BackendPool#close(long)} waits for them before the loops stop.
     */
    void shutdown() {
        shutDown = true;
        retireAllIdle();
        for (BackendConnection connection : new ArrayList<>(connections)) {
            connection.close();
        }
        BackendException stopping = new BackendException("Sluice is shutting down");
        for (Waiters.Waiter waiter; (waiter = waiters.poll()) != null; ) {
            waiterLeft();
            waiter.stopTimer();
            waiter.promise().tryFailure(stopping);
        }
        resets.shutdown(stopping);
    }
}
