package io.sluice.backend;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.config.DataSourceConfig;
import io.sluice.multiplexing.SessionVariables;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The part of a data source's pool that belongs to one event loop. Its connections run on that loop, like the
 * sessions that borrow them, so a borrowed connection never hands work to another thread, and the pool needs no
 * lock: every method runs on {@link #loop()}. Only the count of open connections is shared, in {@link BackendPool}.
 *
 * <p>Idle connections are kept most-recently-used first, so a quiet period lets the oldest ones time out.
 */
public final class EventLoopPool {
    private static final Logger log = LoggerFactory.getLogger(EventLoopPool.class);

    private final BackendPool parent;
    private final EventLoop loop;
    /** This loop's part of {@code minPoolSize}; changes on config reload. Read and written on the loop only. */
    private int minIdleShare;
    private final ArrayDeque<BackendConnection> idle = new ArrayDeque<>();
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();
    /**
     * Every connection of this loop whose channel is open: idle, lent, logging in or in one of Sluice's own
     * exchanges. {@link #shutdown()} closes them all while the loop still runs tasks, so that each one's
     * channelInactive releases what it holds (the packets of an unfinished exchange, such as a reset after the last
     * client left) at a point Sluice chooses, rather than whenever the loop's own teardown gets to it. CI reported
     * such packets leaked right after test classes stopped Sluice. Changed per connection, never per command. On the
     * loop only.
     */
    private final Set<BackendConnection> connections = new HashSet<>();
    /** {@code idle.size()}, published for readers on other threads (metrics, the admin API). */
    private volatile int idleSize;
    private SessionKey lastKey;
    /** {@link #shutdown()} ran: a housekeeping task queued before it was cancelled must not refill the pool. */
    private boolean shutDown;
    /** Pooled connections of this loop that hold a slot: logging in, idle or lent. Read and written on the loop. */
    private int openHere;
    /** {@link #serveWaiters()} is running (it may be re-entered through a served session's listener). */
    private boolean serving;
    /**
     * Transaction pooling: how long this loop's sessions wait for a connection given back on their own loop before
     * slots move here from other loops. Connections come back within milliseconds there, so a short burst is served
     * locally; moving a slot instead costs a backend login, which under load slows the server and makes the next
     * burst longer (seen with sysbench plus 300 client connects per second: a few waits became hundreds of logins).
     */
    static final long RECLAIM_DELAY_MILLIS = 50;

    /**
     * The smallest read from a server: 16 KiB, the size of the pieces MySQL and MariaDB write a result in
     * ({@code net_buffer_length}). Netty's default guess shrinks to a few hundred bytes after a run of small answers,
     * and then needs three reads (and grows back) for the next result of a few kilobytes; HAProxy reads into 16 KiB
     * buffers too. The buffer only lives until its bytes are written to the client.
     */
    static final int SERVER_READ_MIN_BYTES = 16 * 1024;
    /** The largest read from a server: Netty's default, 64 KiB (256 KiB measured no better on range_10000). */
    static final int SERVER_READ_MAX_BYTES = 64 * 1024;
    /**
     * Reads per readiness event at most, while reads fill their buffer: Netty's default for TCP channels. It must be
     * set here: Netty applies a channel type's default only to the allocator it creates itself, and an allocator given
     * as an option keeps its own, which is 1. With 1, a read that filled its 64 KiB ended the batch and the loop went
     * back to {@code epoll_wait} for the rest of a large result (range_10000: 42 wake-ups for 50 reads per query).
     */
    static final int SERVER_READS_PER_WAKE_UP = 16;
    /** Shared: it keeps no state of its own, each channel gets its own handle. */
    private static final AdaptiveRecvByteBufAllocator SERVER_READS =
            new AdaptiveRecvByteBufAllocator(SERVER_READ_MIN_BYTES, SERVER_READ_MIN_BYTES, SERVER_READ_MAX_BYTES);

    static {
        SERVER_READS.maxMessagesPerRead(SERVER_READS_PER_WAKE_UP);
    }
    /**
     * How long a session waits for a connection being reset on its loop before it opens one instead. A reset is one
     * round trip, normally well under a millisecond; opening a connection costs the server a login. The bound only
     * matters when a reset hangs.
     */
    static final long RESET_WAIT_MILLIS = 100;
    /** Connections of this loop being reset after their session ended (COM_RESET_CONNECTION in flight). */
    private final ArrayDeque<BackendConnection> resetting = new ArrayDeque<>();
    /** Sessions waiting for one of those resets, at most one per reset of their key. On the loop only. */
    private final ArrayDeque<Waiter> resetWaiters = new ArrayDeque<>();
    /** A delayed {@link #reclaimIfStillWaiting()} is scheduled. On the loop only. */
    private boolean reclaimScheduled;
    /** This loop's sessions have waited longer than {@link #RECLAIM_DELAY_MILLIS}; counted in the parent. */
    private boolean starving;

    private record Waiter(SessionKey key, String schema, Promise<BackendConnection> promise,
            ScheduledFuture<?> timeout) {
    }

    EventLoopPool(BackendPool parent, EventLoop loop, int minIdleShare) {
        this.parent = parent;
        this.loop = loop;
        this.minIdleShare = minIdleShare;
    }

    BackendPool parent() {
        return parent;
    }

    DataSourceConfig dataSource() {
        return parent.dataSource();
    }

    String address() {
        return parent.address();
    }

    public EventLoop loop() {
        return loop;
    }

    void setMinIdleShare(int share) {
        minIdleShare = share;
    }

    /** Idle connections here, for metrics and tests; may be read from any thread. */
    public int idleCount() {
        return idleSize;
    }

    private void idleChanged() {
        idleSize = idle.size();
    }

    /**
     * Lends a connection for a session of this key, with {@code schema} selected ({@code null}: none).
     * Must be called on {@link #loop()}.
     */
    public Future<BackendConnection> acquire(SessionKey key, String schema) {
        Promise<BackendConnection> promise = loop.newPromise();
        long started = System.nanoTime();
        lastKey = key;
        if (!serveFromIdle(key, schema, promise) && !awaitReset(key, schema, promise)) {
            openOrEnqueue(key, schema, promise);
        }
        // Acquire wait for metrics: once per session, not per command.
        if (promise.isDone()) {
            if (promise.isSuccess()) {
                parent.acquired(System.nanoTime() - started);
            }
        } else {
            promise.addListener(f -> {
                if (f.isSuccess()) {
                    parent.acquired(System.nanoTime() - started);
                }
            });
        }
        return promise;
    }

    private void openOrEnqueue(SessionKey key, String schema, Promise<BackendConnection> promise) {
        if (parent.tryReserve()) {
            open(key, schema, promise);
        } else {
            enqueue(key, schema, promise);
        }
    }

    /**
     * Waits for a connection of {@code key} that is being reset on this loop, if one is not yet promised to another
     * session: under connection churn a client often logs in while the previous client's connection is still being
     * reset, and waiting that round trip costs less than a new server login (and keeps the pool from growing to the
     * churn's peak). Falls back to {@link #openOrEnqueue} if the reset fails or takes over {@link #RESET_WAIT_MILLIS}.
     *
     * @return whether the session now waits for a reset
     */
    private boolean awaitReset(SessionKey key, String schema, Promise<BackendConnection> promise) {
        if (resetting.isEmpty() || resetsInFlight(key) <= waitingForResets(key)) {
            return false;
        }
        Waiter[] self = new Waiter[1];
        ScheduledFuture<?> timer = loop.schedule(() -> {
            if (resetWaiters.remove(self[0]) && !promise.isDone()) {
                log.debug("a reset on {} took over {} ms: opening a connection instead", address(), RESET_WAIT_MILLIS);
                openOrEnqueue(key, schema, promise);
            }
        }, RESET_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        self[0] = new Waiter(key, schema, promise, timer);
        resetWaiters.add(self[0]);
        return true;
    }

    /** How many of {@code items} have {@code key}: the lists are as short as the resets in flight. */
    private static <T> int countOfKey(Iterable<T> items, Function<T, SessionKey> keyOf, SessionKey key) {
        int n = 0;
        for (T item : items) {
            if (keyOf.apply(item).equals(key)) {
                n++;
            }
        }
        return n;
    }

    private int resetsInFlight(SessionKey key) {
        return countOfKey(resetting, BackendConnection::key, key);
    }

    private int waitingForResets(SessionKey key) {
        return countOfKey(resetWaiters, Waiter::key, key);
    }

    /**
     * A reset ended cleanly and the connection went idle: sessions waiting for a reset take idle connections. Each
     * waiter leaves the list before its promise completes, because the session's listener runs at once and may give
     * a connection back, which comes here again.
     */
    private void serveResetWaiters() {
        for (int i = resetWaiters.size(); i > 0 && !resetWaiters.isEmpty(); i--) {
            Waiter waiter = resetWaiters.poll();
            if (waiter.promise().isDone() || serveFromIdle(waiter.key(), waiter.schema(), waiter.promise())) {
                waiter.timeout().cancel(false);
            } else {
                resetWaiters.add(waiter); // its key's reset has not ended yet
            }
        }
    }

    /** A reset failed: if more sessions wait for resets of its key than remain, the last one opens a connection. */
    private void resetFailed(SessionKey key) {
        if (waitingForResets(key) <= resetsInFlight(key)) {
            return;
        }
        for (Iterator<Waiter> it = resetWaiters.descendingIterator(); it.hasNext(); ) {
            Waiter waiter = it.next();
            if (waiter.key().equals(key)) {
                it.remove();
                waiter.timeout().cancel(false);
                if (!waiter.promise().isDone()) {
                    openOrEnqueue(waiter.key(), waiter.schema(), waiter.promise());
                }
                return;
            }
        }
    }

    /**
     * Transaction pooling's fast path, taken once per transaction: the most recently used idle connection, if it has
     * this key, schema and session variables, without a promise or a listener. {@code null} otherwise: then
     * {@link #acquire} does the rest. Must be called on {@link #loop()}.
     */
    public BackendConnection pollIdle(SessionKey key, String schema, SessionVariables variables) {
        BackendConnection first = idle.peekFirst();
        if (first == null || !first.key().equals(key) || !Objects.equals(first.schema(), schema)
                || !first.variables().matches(variables) || !waiters.isEmpty()) {
            return null;
        }
        idle.pollFirst();
        idleChanged();
        parent.acquired(0);
        return first;
    }

    /**
     * Takes back a connection from a session that has ended. An idle connection is reset and pooled; one in the
     * middle of a response, or in any doubt, is closed. Must be called on {@link #loop()}.
     */
    public void release(BackendConnection connection) {
        boolean clean = connection.isBetweenCommands() && connection.isOpen() && !connection.isTainted();
        connection.unbind();
        if (!clean) {
            log.debug("closing {}: released mid-response or in doubt", connection);
            connection.close();
            return;
        }
        resetting.add(connection);
        connection.reset(() -> {
            resetting.remove(connection);
            offer(connection);
        }, () -> {
            resetting.remove(connection);
            log.debug("closing {}: the reset left it unlike its key", connection);
            connection.close();
            resetFailed(connection.key());
        });
    }

    /**
     * Transaction pooling: takes back a connection between two transactions of a session that goes on. It keeps its
     * session state (the next session to take it makes the variables its own), so no reset is needed; one in the
     * middle of a response, or in any doubt, is closed. Must be called on {@link #loop()}.
     */
    public void giveBack(BackendConnection connection) {
        boolean clean = connection.isBetweenCommands() && connection.isOpen() && !connection.isTainted();
        connection.unbind();
        if (!clean) {
            log.debug("closing {}: given back mid-response or in doubt", connection);
            connection.close();
            return;
        }
        offer(connection);
    }

    private boolean serveFromIdle(SessionKey key, String schema, Promise<BackendConnection> promise) {
        BackendConnection sameKey = null;
        for (Iterator<BackendConnection> it = idle.iterator(); it.hasNext(); ) {
            BackendConnection candidate = it.next();
            if (!candidate.key().equals(key)) {
                continue;
            }
            if (Objects.equals(candidate.schema(), schema)) {
                it.remove();
                idleChanged();
                promise.trySuccess(candidate);
                return true;
            }
            if (sameKey == null && schema != null) {
                sameKey = candidate;
            }
        }
        if (sameKey == null) {
            return false;
        }
        idle.remove(sameKey);
        idleChanged();
        BackendConnection connection = sameKey;
        connection.selectSchema(schema, error -> {
            if (error == null) {
                if (!promise.trySuccess(connection)) {
                    offer(connection); // the session gave up (timed out, left) while the schema was selected
                }
            } else {
                offer(connection); // a refused COM_INIT_DB leaves the connection as it was
                promise.tryFailure(error);
            }
        });
        return true;
    }

    private void open(SessionKey key, String schema, Promise<BackendConnection> promise) {
        openHere++;
        log.debug("opening a connection to {} for schema {} ({} open)", address(), schema, parent.openConnections());
        connect(key, schema, promise, dataSource().connectionTimeoutMilliseconds(), true);
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
                ((BackendConnection) f.getNow()).close();
                outcome.trySuccess(null);
            } else {
                outcome.tryFailure(f.cause());
            }
        });
        connect(parent.defaultKey(), null, ready, timeoutMillis, false);
    }

    private void connect(SessionKey key, String schema, Promise<BackendConnection> promise, long timeoutMillis,
            boolean pooled) {
        Promise<BackendConnection> ready = loop.newPromise();
        BackendConnection connection = new BackendConnection(this, key, schema, ready, timeoutMillis, pooled);
        ready.addListener(f -> {
            if (pooled) { // metrics: a health check's connection is not one of the pool's
                if (f.isSuccess()) {
                    parent.connectionCreated();
                    connection.channel().closeFuture().addListener(closed -> parent.connectionClosed());
                } else {
                    parent.connectionFailed();
                }
            }
            if (f.isSuccess()) {
                if (!promise.trySuccess(connection)) {
                    offer(connection); // the waiter gave up meanwhile
                }
            } else {
                promise.tryFailure(f.cause());
            }
        });
        int bufferSize = parent.connBufferSize();
        ChannelFuture connect = new Bootstrap()
                .group(loop)
                .channelFactory(parent.transport().socketChannelFactory())
                // TCP_NODELAY is every transport's default (NoDelayByDefaultTest): not set again
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, timeoutMillis))
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(bufferSize / 2, bufferSize))
                .option(ChannelOption.RCVBUF_ALLOCATOR, SERVER_READS)
                .handler(connection)
                .connect(parent.host(), parent.port());
        connect.addListener(f -> {
            if (!f.isSuccess()) {
                connection.connectFailed(f.cause());
            }
        });
    }

    private void enqueue(SessionKey key, String schema, Promise<BackendConnection> promise) {
        long timeout = dataSource().connectionTimeoutMilliseconds();
        ScheduledFuture<?> timer = loop.schedule(() -> {
            if (waiters.removeIf(w -> w.promise() == promise)) {
                parent.waiterRemoved();
                waitersRemoved();
            }
            promise.tryFailure(new PoolExhaustedException(dataSource().name(), dataSource().maxPoolSize(), timeout));
        }, timeout, TimeUnit.MILLISECONDS);
        waiters.add(new Waiter(key, schema, promise, timer));
        parent.waiterAdded();
        log.debug("session waits for a connection to {} ({} open)", address(), parent.openConnections());
        // Idle connections that cannot serve this session (another key or schema here, or any on another loop)
        // hold slots: retire one here and one per other loop; the freed slot opens a connection for the waiter.
        retireOneIdle();
        if (parent.pooling().multiplexing()) {
            scheduleReclaim(); // other loops' slots only if no give-back here serves the waiter soon
        } else {
            parent.reclaimIdleElsewhere(this);
        }
    }

    private void scheduleReclaim() {
        if (!reclaimScheduled) {
            reclaimScheduled = true;
            loop.schedule(this::reclaimIfStillWaiting, RECLAIM_DELAY_MILLIS, TimeUnit.MILLISECONDS);
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
        parent.reclaimIdleElsewhere(this);
        scheduleReclaim();
    }

    private void setStarving(boolean value) {
        if (starving != value) {
            starving = value;
            parent.starvingChanged(value);
        }
    }

    /** After a waiter left the queue: a loop with none is no longer starving. */
    private void waitersRemoved() {
        if (starving && waiters.isEmpty()) {
            setStarving(false);
        }
    }

    /** Puts a clean, idle connection back: to a waiter first, else to the idle list. */
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
        idleChanged();
        log.debug("{} is idle in the pool", connection);
        serveWaiters();
        if (!resetWaiters.isEmpty()) {
            serveResetWaiters();
        }
        if (waiters.isEmpty() && anotherLoopNeedsSlot() && idle.remove(connection)) {
            // A session waits on another loop, which this connection cannot serve: free its slot for that loop.
            idleChanged();
            connection.close();
        }
    }

    /**
     * Serves waiting sessions from idle connections or new ones while slots allow. Runs on the loop. A served
     * session's listener runs at once and may give a connection back (transaction pooling), which calls this again:
     * that inner call returns at once, and this loop serves the next waiter with the connection it gave back.
     */
    void serveWaiters() {
        if (serving) {
            return;
        }
        serving = true;
        try {
            while (!waiters.isEmpty()) {
                Waiter waiter = dequeue(); // before its promise completes: its listener may come back here
                if (waiter.promise().isDone()) {
                    continue;
                }
                if (serveFromIdle(waiter.key(), waiter.schema(), waiter.promise())) {
                    waiter.timeout().cancel(false);
                    continue;
                }
                if (!idle.isEmpty()) {
                    // Only connections of another key or schema are idle here: retire one to make room.
                    idle.pollLast().close();
                    idleChanged();
                }
                if (!parent.tryReserve()) {
                    waiters.addFirst(waiter); // still first in line
                    parent.waiterAdded();
                    return;
                }
                waiter.timeout().cancel(false);
                open(waiter.key(), waiter.schema(), waiter.promise());
            }
        } finally {
            serving = false;
        }
    }

    private Waiter dequeue() {
        Waiter waiter = waiters.poll();
        parent.waiterRemoved();
        waitersRemoved();
        return waiter;
    }

    boolean hasWaiters() {
        return !waiters.isEmpty();
    }

    /** Closes every idle connection: the backend went down or is draining. */
    void retireAllIdle() {
        while (!idle.isEmpty()) {
            idle.poll().close();
        }
        idleChanged();
    }

    /** A pooled connection of this loop gave its slot back (it closed, or never connected). */
    void slotReleasedHere() {
        openHere--;
    }

    private boolean overShareOrNotMultiplexing() {
        return !parent.pooling().multiplexing() || openHere > parent.fairShare();
    }

    /**
     * Whether a connection given back here should close to move its slot to another loop. Session pooling: whenever
     * a session waits elsewhere. Transaction pooling (a give-back per transaction): only when this loop holds more
     * than its fair share and another loop's sessions have waited past {@link #RECLAIM_DELAY_MILLIS}.
     */
    private boolean anotherLoopNeedsSlot() {
        if (!parent.pooling().multiplexing()) {
            return parent.hasWaiters();
        }
        return parent.hasStarvingLoop() && openHere > parent.fairShare();
    }

    /**
     * Another loop has sessions waiting: closes one idle connection to give its slot there. In transaction pooling,
     * only when this loop holds more than its fair share or the connection has been idle for a second (a loop that
     * really does not need it), not one that is idle only between two transactions.
     */
    void yieldIdleSlot() {
        BackendConnection oldest = idle.peekLast();
        if (oldest == null) {
            return;
        }
        if (!overShareOrNotMultiplexing()
                && System.nanoTime() - oldest.idleSinceNanos() < TimeUnit.SECONDS.toNanos(1)) {
            return;
        }
        retireOneIdle();
    }

    /** Closes one idle connection, if any, to give its slot to another loop. */
    void retireOneIdle() {
        BackendConnection oldest = idle.pollLast();
        if (oldest != null) {
            idleChanged();
            oldest.close();
        }
    }

    /** Called by a connection of this loop when its channel became active. */
    void onOpened(BackendConnection connection) {
        connections.add(connection);
    }

    /** Called by a connection of this loop when its channel closed. */
    void onClosed(BackendConnection connection) {
        connections.remove(connection);
        resetting.remove(connection); // closed mid-reset: the sessions waiting for it fall back at their timeout
        if (idle.remove(connection)) {
            idleChanged();
        }
    }

    /** The periodic check of idle timeouts, lifetimes and the minimum pool size; run on the loop. */
    void housekeep() {
        if (shutDown) {
            return;
        }
        long now = System.nanoTime();
        long idleTimeout = TimeUnit.MILLISECONDS.toNanos(dataSource().idleTimeoutMilliseconds());
        long maxLifetime = TimeUnit.MILLISECONDS.toNanos(dataSource().maxLifetimeMilliseconds());
        for (Iterator<BackendConnection> it = idle.descendingIterator(); it.hasNext(); ) {
            BackendConnection connection = it.next();
            boolean tooOld = maxLifetime > 0 && now - connection.createdNanos() > maxLifetime;
            boolean idleTooLong = idleTimeout > 0 && now - connection.idleSinceNanos() > idleTimeout
                    && idle.size() > minIdleShare;
            if (tooOld || idleTooLong) {
                it.remove();
                connection.close();
            }
        }
        idleChanged();
        int missing = parent.isRetiring() ? 0 : minIdleShare - idle.size();
        SessionKey key = lastKey != null ? lastKey : parent.defaultKey();
        for (int i = 0; i < missing && parent.tryReserve(); i++) {
            Promise<BackendConnection> warm = loop.newPromise();
            warm.addListener(f -> {
                if (f.isSuccess()) {
                    offer((BackendConnection) f.getNow());
                } else {
                    log.debug("could not open a minimum-pool connection to {}: {}", address(), f.cause().toString());
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
        while (!idle.isEmpty()) {
            idle.poll().close();
        }
        idleChanged();
        for (BackendConnection connection : new ArrayList<>(connections)) {
            connection.close();
        }
        while (!waiters.isEmpty()) {
            Waiter waiter = dequeue();
            waiter.timeout().cancel(false);
            waiter.promise().tryFailure(new BackendException("Sluice is shutting down"));
        }
        while (!resetWaiters.isEmpty()) {
            Waiter waiter = resetWaiters.poll();
            waiter.timeout().cancel(false);
            waiter.promise().tryFailure(new BackendException("Sluice is shutting down"));
        }
    }
}
