package io.sluice.backend.pool;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendEndpoint;
import io.sluice.backend.SessionKey;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.JdbcUrl;
import io.sluice.config.PoolingConfig;
import io.sluice.tls.BackendTls;
import io.sluice.transport.TransportKind;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
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
    /** The {@code sql_mode} the latest login to this server gave, on any loop (decision 204); written by the loops. */
    private volatile String loginSqlMode;
    private final PoolTimeouts timeouts = new PoolTimeouts();
    private final KnownSchemas knownSchemas = new KnownSchemas();
    private final OwnConnections ownConnections;
    /**
     * The data source is a replica of a read/write split group: every connection opened from now on runs its session
     * read-only (decision 110).
     */
    private volatile boolean servesReplica;
    /** Session or transaction pooling; set before the first connection opens and not changed after. */
    private volatile PoolingConfig pooling = PoolingConfig.defaults();

    private final PoolCounters counters = new PoolCounters();

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
        this.ownConnections = new OwnConnections(this, checks);
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

    /** Transaction pooling: the schemas logins found on this server with the current credentials. */
    public KnownSchemas knownSchemas() {
        return knownSchemas;
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
            knownSchemas.forgetAll();
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
     * Sluice's own work with this server on connections of its own on the check loop, outside {@code maxPoolSize}:
     * health checks, replication readings, switchover statements, account queries.
     */
    public OwnConnections ownConnections() {
        return ownConnections;
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

    String loginSqlMode() {
        return loginSqlMode;
    }

    void loggedInWith(String sqlMode) {
        loginSqlMode = sqlMode;
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

    /** How long a login may take, and when an idle connection is pinged before it is lent. */
    public PoolTimeouts timeouts() {
        return timeouts;
    }

    /** How long one connect and login may take: the attempt bound, within {@code connectionTimeoutMilliseconds}. */
    long loginTimeoutMillis() {
        return timeouts.loginMillis(dataSource.connectionTimeoutMilliseconds());
    }

    /** The database named in the data source's URL, or {@code null}; parsed once, when the pool was made. */
    public String urlDatabase() {
        return url.database();
    }

    /** The data source's URL, parsed once, when the pool was made. */
    public JdbcUrl url() {
        return url;
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

    /** What the pool counts for its metrics. */
    public PoolCounters counters() {
        return counters;
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
