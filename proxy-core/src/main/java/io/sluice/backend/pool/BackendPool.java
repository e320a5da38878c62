package io.sluice.backend.pool;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendEndpoint;
import io.sluice.backend.SessionKey;
import io.sluice.backend.TextQuery;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.JdbcUrl;
import io.sluice.config.PoolingConfig;
import io.sluice.metrics.LatencyBuckets;
import io.sluice.tls.BackendTls;
import io.sluice.transport.TransportKind;
import java.util.Arrays;
import java.util.List;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.Consumer;

/**
 * The pool of authenticated connections to one data source. It is split into one {@link EventLoopPool} per event
 * loop so that a session always borrows a connection that runs on its own thread; only the count of open
 * connections, bounded by {@code maxPoolSize}, is shared between loops.
 */
public final class BackendPool {
    /** Replaced on config reload (pool sizes, timeouts, credentials); the URL never changes. */
    private volatile DataSourceConfig dataSource;
    /** Where new connections log in; replaced with new credentials on config reload. */
    private volatile BackendEndpoint endpoint;
    private final JdbcUrl url;
    private final SessionKey defaultKey;
    /** TLS to this server, or {@code null} for sslMode DISABLED. */
    private final BackendTls tls;
    private final SlotBalancer balancer = new SlotBalancer(this);
    private final BackendConnector connector;
    private final Map<EventExecutor, EventLoopPool> byLoop = new IdentityHashMap<>();
    private final EventLoopPool[] loops;
    private final EventLoopPool checks;
    /**
     * Ticks on the check loop and hands each relay loop its housekeeping as a plain task. A timer of the relay loop's
     * own would keep its scheduled-task queue non-empty for good, and Netty then reads the clock several times per
     * loop turn (is a timer due?) on the path every query takes.
     */
    private final ScheduledFuture<?> housekeeping;
    /** Tells a hung server from a slow one under the sessions; {@code null} while health checks are off. */
    private volatile StallWatch stallWatch;
    /** The backend is down or draining: connections that come back are closed, none is opened ahead of need. */
    private volatile boolean retiring;
    /** One connect and login at most, when shorter than connectionTimeoutMilliseconds; 0: no bound of its own. */
    private volatile long loginAttemptTimeoutMillis;
    /** A connection idle longer than this is pinged before it is lent; 0: never. */
    private volatile long idleCheckAfterNanos;
    private volatile long idleCheckTimeoutMillis;
    /**
     * Transaction pooling: schemas a login has already found on this server with these credentials. A later login to
     * one of them is answered without taking a backend connection (a churning client then costs the pool nothing);
     * a 1049 on any acquire forgets the schema, and new credentials forget them all. Only schemas that exist get in,
     * so the set is as small as the server's list of databases, and capped besides.
     */
    private final Set<String> knownSchemas = ConcurrentHashMap.newKeySet();
    private static final int KNOWN_SCHEMAS_CAP = 4096;
    /**
     * The data source is a replica of a read/write split group: every connection opened from now on runs its session
     * read-only (decision 110).
     */
    private volatile boolean servesReplica;
    /** Session or transaction pooling; set before the first connection opens and not changed after. */
    private volatile PoolingConfig pooling = PoolingConfig.defaults();

    // ---- metrics: per connection and per acquire, never per command, so atomics are cheap enough ----
    private final AtomicLong created = new AtomicLong();
    private final AtomicLong closed = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLongArray acquireBuckets = new AtomicLongArray(LatencyBuckets.COUNT);
    private final AtomicLong acquireNanos = new AtomicLong();

    /**
     * @param defaultKey the key of connections opened ahead of any session ({@code minPoolSize})
     * @param checkLoop the loop health checks run on, apart from the loops that relay client traffic
     */
    public BackendPool(DataSourceConfig dataSource, EventLoopGroup group, TransportKind transport, int connBufferSize,
            SessionKey defaultKey, EventLoop checkLoop) {
        this.dataSource = dataSource;
        this.url = dataSource.jdbcUrl();
        this.defaultKey = defaultKey;
        this.tls = BackendTls.create(dataSource); // before any connection: a CA file that cannot be used stops start
        this.endpoint = endpointOf(dataSource);
        this.connector = new BackendConnector(this, transport, connBufferSize);
        int count = 0;
        for (EventExecutor ignored : group) {
            count++;
        }
        this.loops = new EventLoopPool[count];
        int i = 0;
        for (EventExecutor executor : group) {
            EventLoopPool pool = new EventLoopPool(this, (EventLoop) executor, balancer,
                    minIdleShare(dataSource, i, count));
            loops[i++] = pool;
            byLoop.put(executor, pool);
        }
        this.checks = new EventLoopPool(this, checkLoop, balancer, 0);
        long period = Math.max(1000, Math.min(30_000, Math.min(
                positiveOr(dataSource.idleTimeoutMilliseconds(), 30_000),
                positiveOr(dataSource.maxLifetimeMilliseconds(), 30_000)) / 2));
        housekeeping = checkLoop.scheduleWithFixedDelay(this::housekeep, period, period, TimeUnit.MILLISECONDS);
    }

    private void housekeep() {
        for (EventLoopPool pool : loops) {
            try {
                pool.loop().execute(pool::housekeep);
            } catch (RejectedExecutionException e) {
                return; // the loops are stopping
            }
        }
    }

    /**
     * Sets session or transaction pooling for connections opened from now on; call right after construction.
     * In TRANSACTION pooling connections turn the session trackers on and keep a prepared-statement cache.
     */
    public void usePooling(PoolingConfig value) {
        pooling = Objects.requireNonNull(value);
    }

    /**
     * Makes the connections opened from now on read-only ({@code true}: the data source is a split group's replica);
     * call right after construction. Connections already open are made read-only by the split session that takes
     * them ({@code ReadWriteSplitting}).
     */
    public void servesReplica(boolean replica) {
        servesReplica = replica;
    }

    /** Whether connections opened now are read-only: the data source is a split group's replica. */
    boolean servesReplica() {
        return servesReplica;
    }

    /** Whether sessions give connections back between transactions ({@code pooling: TRANSACTION}). */
    boolean transactionPooling() {
        return pooling.transactionPooling();
    }

    /** Transaction pooling: prepared statements kept per connection. */
    int preparedStatementCacheSize() {
        return pooling.preparedStatementCacheSize();
    }

    private BackendEndpoint endpointOf(DataSourceConfig settings) {
        return new BackendEndpoint(settings.name(), url.host(), url.port(), settings.username(), settings.password(),
                settings.sslMode(), tls);
    }

    /** Where new connections log in. */
    BackendEndpoint endpoint() {
        return endpoint;
    }

    BackendConnector connector() {
        return connector;
    }

    /** The part that runs health checks and Sluice's own statements, on the check loop. */
    EventLoopPool checks() {
        return checks;
    }

    /** The per-loop parts, one per relay loop (health checks have their own). */
    EventLoopPool[] loops() {
        return loops;
    }

    /** Whether a login has already found {@code schema} on this server with the current credentials. */
    public boolean knowsSchema(String schema) {
        return schema != null && knownSchemas.contains(schema);
    }

    /** A login found {@code schema}: the next login to it needs no backend connection to check it. */
    public void schemaSeen(String schema) {
        if (schema != null && knownSchemas.size() < KNOWN_SCHEMAS_CAP) {
            knownSchemas.add(schema);
        }
    }

    /** The server answered 1049 for {@code schema}: logins to it are checked by the server again. */
    public void schemaMissing(String schema) {
        if (schema != null) {
            knownSchemas.remove(schema);
        }
    }

    /** Loop {@code i}'s part of {@code minPoolSize}, spread as evenly as the loops allow. */
    private static int minIdleShare(DataSourceConfig dataSource, int i, int count) {
        return dataSource.minPoolSize() / count + (i < dataSource.minPoolSize() % count ? 1 : 0);
    }

    /**
     * Applies new pool settings (config reload): sizes, timeouts and credentials. New connections log in with the new
     * credentials; open ones keep theirs. A smaller {@code maxPoolSize} closes idle connections above it; busy ones
     * close as their sessions end.
     *
     * @throws IllegalArgumentException when the URL differs: that is another server, not new settings
     */
    public void update(DataSourceConfig newSettings) {
        if (!newSettings.url().equals(dataSource.url())) {
            throw new IllegalArgumentException("url: " + newSettings.url() + " (expected: " + dataSource.url() + ")");
        }
        if (!Objects.equals(newSettings.username(), dataSource.username())
                || !Objects.equals(newSettings.password(), dataSource.password())) {
            knownSchemas.clear(); // other credentials may not see the same schemas
        }
        dataSource = newSettings;
        endpoint = endpointOf(newSettings);
        for (int i = 0; i < loops.length; i++) {
            EventLoopPool pool = loops[i];
            int share = minIdleShare(newSettings, i, loops.length);
            pool.loop().execute(() -> {
                pool.setMinIdleShare(share);
                while (balancer.open() > newSettings.maxPoolSize() && pool.idleCount() > 0) {
                    pool.retireOneIdle();
                }
            });
        }
    }

    private static long positiveOr(long value, long fallback) {
        return value > 0 ? value : fallback;
    }

    /** The part of the pool that serves sessions on {@code loop}. */
    public EventLoopPool forLoop(EventLoop loop) {
        EventLoopPool pool = byLoop.get(loop);
        if (pool == null) {
            throw new IllegalArgumentException("loop: not one of this pool's event loops");
        }
        return pool;
    }

    /**
     * One health check: connect, log in and quit, within {@code timeoutMillis}. The connection does not count
     * against {@code maxPoolSize}, so a full pool still passes its checks.
     */
    public CompletableFuture<Void> check(long timeoutMillis) {
        CompletableFuture<Void> outcome = new CompletableFuture<>();
        EventLoop loop = checks.loop();
        loop.execute(() -> {
            Promise<Void> done = loop.newPromise();
            done.addListener(f -> {
                if (f.isSuccess()) {
                    outcome.complete(null);
                } else {
                    outcome.completeExceptionally(f.cause());
                }
            });
            checks.check(timeoutMillis, done);
        });
        return outcome;
    }

    /**
     * Reads the server's replication state (a read/write split group's replica watch), on the check loop, on a
     * connection of its own; an unreachable reading when it cannot.
     */
    public CompletableFuture<ReplicationReading> readReplication(long timeoutMillis) {
        CompletableFuture<ReplicationReading> outcome = new CompletableFuture<>();
        EventLoop loop = checks.loop();
        loop.execute(() -> {
            Promise<ReplicationReading> done = loop.newPromise();
            done.addListener(f -> outcome.complete(f.isSuccess() ? (ReplicationReading) f.getNow()
                    : ReplicationReading.unreachable(dataSource().name(), String.valueOf(f.cause()))));
            checks.readReplication(timeoutMillis, done);
        });
        return outcome;
    }

    /**
     * Runs {@code statements} in order on the server, as {@code username} (Sluice's own account for a switchover, not
     * the data source's), on a connection of their own on the check loop, closed after. Completes with each
     * statement's rows (empty for one that answers OK), or exceptionally with the first refusal or failure; the
     * statements after a failed one do not run.
     */
    public CompletableFuture<List<Map<String, String>>[]> runAs(String username, String password,
            List<String> statements, long timeoutMillis) {
        CompletableFuture<List<Map<String, String>>[]> outcome = new CompletableFuture<>();
        EventLoop loop = checks.loop();
        loop.execute(() -> checks.runAs(new String[] {username, password}, statements, timeoutMillis, outcome));
        return outcome;
    }

    /**
     * Runs one query of Sluice's own on the check loop, on a connection of its own as the data source's account (not
     * counted in {@code maxPoolSize}): reading the server's accounts for {@code users: FROM_BACKEND}. The connection
     * logs in to {@code schema}: tables are named without it, since a client's CLIENT_NO_SCHEMA, which the data
     * source's connections may carry, makes the server drop {@code db.} from {@code db.table}.
     *
     * @return the rows by column name, or a failure (the server unreachable, the query refused)
     */
    public CompletableFuture<List<Map<String, String>>> query(String schema, String sql, long timeoutMillis) {
        CompletableFuture<List<Map<String, String>>> outcome = new CompletableFuture<>();
        EventLoop loop = checks.loop();
        loop.execute(() -> {
            Promise<List<Map<String, String>>> done = loop.newPromise();
            done.addListener(f -> {
                if (f.isSuccess()) {
                    @SuppressWarnings("unchecked")
                    List<Map<String, String>> rows = (List<Map<String, String>>) f.getNow();
                    outcome.complete(rows);
                } else {
                    outcome.completeExceptionally(f.cause());
                }
            });
            Promise<BackendConnection> ready = loop.newPromise();
            ready.addListener(f -> {
                if (!f.isSuccess()) {
                    done.tryFailure(f.cause());
                    return;
                }
                BackendConnection connection = (BackendConnection) f.getNow();
                ScheduledFuture<?> timer = loop.schedule(connection::close, timeoutMillis, TimeUnit.MILLISECONDS);
                Runnable closeIt = () -> {
                    timer.cancel(false);
                    connection.markIdle();
                    connection.close();
                };
                connection.run(new TextQuery(sql, connection.key().deprecateEof(), rows -> {
                    closeIt.run();
                    done.trySuccess(rows);
                }, failure -> {
                    closeIt.run();
                    done.tryFailure(failure);
                }));
            });
            connector.connect(checks, defaultKey, schema, ready, timeoutMillis, false);
        });
        return outcome;
    }

    /**
     * Starts or stops retiring this pool's connections: while the backend is down or draining, idle connections are
     * closed and connections sessions give back are not kept.
     */
    public void setRetiring(boolean value) {
        retiring = value;
        if (value) {
            for (EventLoopPool pool : loops) {
                pool.loop().execute(pool::retireAllIdle);
            }
        }
    }

    boolean isRetiring() {
        return retiring;
    }

    /**
     * Watches the connections for a command that waits in silence, and tells a hung server from a slow one with a
     * login of {@code checkTimeoutMillis} (decision 093); call once, when health checks are on.
     *
     * @param onHung told why, once per hang, when the server was found hung (the backend is to go down at once)
     */
    public void watchStalls(long checkTimeoutMillis, Consumer<String> onHung) {
        if (stallWatch == null) {
            stallWatch = new StallWatch(this, checks.loop(), loops, checkTimeoutMillis, onHung);
        }
    }

    /** The backend is up again: the stall watch no longer takes its server for hung. */
    public void serverAnswers() {
        StallWatch watch = stallWatch;
        if (watch != null) {
            watch.serverAnswers();
        }
    }

    /**
     * Whether the stall watch found the server hung (a command waited in silence, and a login got no answer) and it
     * has not answered since: a connection of it lost now was closed for that.
     */
    public boolean serverFoundHung() {
        StallWatch watch = stallWatch;
        return watch != null && watch.isHung();
    }

    /** Idle connections now, on every loop. */
    public int idleConnections() {
        int sum = 0;
        for (EventLoopPool pool : loops) {
            sum += pool.idleCount();
        }
        return sum;
    }

    /** Sessions waiting for a connection now, on every loop. */
    public int pendingAcquires() {
        return balancer.waiting();
    }

    public DataSourceConfig dataSource() {
        return dataSource;
    }

    /**
     * Bounds one connect and login to this backend ({@code 0}: no bound but {@code connectionTimeoutMilliseconds}).
     * With another backend to fail over to, a server that accepts connections and never answers (hung, stopped)
     * must not use up a session's whole {@code connectionTimeoutMilliseconds} on one attempt, or the session fails
     * although another backend is up.
     */
    public void loginAttemptTimeout(long millis) {
        this.loginAttemptTimeoutMillis = millis;
    }

    /**
     * Pings a connection idle for longer than {@code afterMillis} (COM_PING, answered within {@code timeoutMillis})
     * before it is lent, and closes it instead when the server does not answer; {@code afterMillis} 0: never.
     */
    public void idleCheck(long afterMillis, long timeoutMillis) {
        this.idleCheckTimeoutMillis = timeoutMillis;
        this.idleCheckAfterNanos = TimeUnit.MILLISECONDS.toNanos(afterMillis);
    }

    /** Whether {@code connection}, taken from the idle list, has been idle long enough to be pinged first. */
    boolean needsCheckBeforeLending(BackendConnection connection) {
        long after = idleCheckAfterNanos;
        return after > 0 && System.nanoTime() - connection.idleSinceNanos() > after;
    }

    long idleCheckTimeoutMillis() {
        return idleCheckTimeoutMillis;
    }

    /** How long one connect and login may take: the attempt bound, within {@code connectionTimeoutMilliseconds}. */
    long loginTimeoutMillis() {
        long whole = dataSource.connectionTimeoutMilliseconds();
        long attempt = loginAttemptTimeoutMillis;
        return attempt > 0 ? Math.min(attempt, whole) : whole;
    }

    /** The database named in the data source's URL, or {@code null}; parsed once, when the pool was made. */
    public String urlDatabase() {
        return url.database();
    }

    /** {@code host:port}, for messages. */
    public String address() {
        return url.host() + ":" + url.port();
    }

    SessionKey defaultKey() {
        return defaultKey;
    }

    /** Open connections (idle, lent, or still logging in). */
    public int openConnections() {
        return balancer.open();
    }

    /**
     * Open connections per server account of the sessions' own (mapped {@code backendUser}s, accounts read from the
     * server), by user name; connections of the data source's own account are not in it.
     */
    public Map<String, Integer> openConnectionsPerAccount() {
        return balancer.openPerAccount();
    }

    // ---- metrics ----

    void connectionCreated() {
        created.incrementAndGet();
    }

    void connectionClosed() {
        closed.incrementAndGet();
    }

    void connectionFailed() {
        errors.incrementAndGet();
    }

    void acquired(long waitNanos) {
        acquireBuckets.incrementAndGet(LatencyBuckets.index(waitNanos));
        acquireNanos.addAndGet(waitNanos);
    }

    /** Connections that logged in, since start. */
    public long createdConnections() {
        return created.get();
    }

    /** Logged-in connections that closed, since start. */
    public long closedConnections() {
        return closed.get();
    }

    /** Connects and logins that failed (refused, timed out, access denied), since start. */
    public long connectionErrors() {
        return errors.get();
    }

    /** Acquires that got a connection, per {@link LatencyBuckets} bucket of their wait. */
    public long[] acquireWaitBuckets() {
        long[] counts = new long[acquireBuckets.length()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = acquireBuckets.get(i);
        }
        return counts;
    }

    /** The sum of those waits. */
    public long acquireWaitNanos() {
        return acquireNanos.get();
    }

    /**
     * Closes every connection (idle, lent, or in one of Sluice's own exchanges) and fails every waiter; waits up to
     * {@code timeoutMillis} for the loops to do it and to process the closes. Call before the event loops stop, so
     * that no connection, and no half-finished exchange on one, is left to the loops' teardown.
     */
    public void close(long timeoutMillis) {
        housekeeping.cancel(false);
        if (stallWatch != null) {
            stallWatch.stop();
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        EventLoopPool[] all = Arrays.copyOf(loops, loops.length + 1);
        all[loops.length] = checks;
        onEachLoop(all, EventLoopPool::shutdown, deadline);
        // A close fires channelInactive in a task queued after it: one more round on each loop runs them.
        onEachLoop(all, pool -> { }, deadline);
    }

    private static void onEachLoop(EventLoopPool[] pools, Consumer<EventLoopPool> task,
            long deadlineNanos) {
        CountDownLatch done = new CountDownLatch(pools.length);
        for (EventLoopPool pool : pools) {
            if (pool.loop().inEventLoop()) { // called from that loop (a retired pool closed by a scheduled check)
                try {
                    task.accept(pool);
                } finally {
                    done.countDown();
                }
                continue;
            }
            try {
                pool.loop().execute(() -> {
                    try {
                        task.accept(pool);
                    } finally {
                        done.countDown();
                    }
                });
            } catch (RejectedExecutionException e) {
                done.countDown(); // that loop has already stopped
            }
        }
        try {
            done.await(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
