package io.sluice;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.api.BackendSnapshot;
import io.sluice.backend.SessionKey;
import io.sluice.backend.pool.BackendPool;
import io.sluice.backend.pool.PoolCounters;
import io.sluice.balancer.Backend;
import io.sluice.balancer.BackendGroup;
import io.sluice.balancer.BackendState;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.HealthChecker;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.PoolingMode;
import io.sluice.config.ProxyConfig;
import io.sluice.transport.TransportKind;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The backends of a running proxy: the balancer's group, one connection pool per data source, the health checks, and
 * the pools of backends a config reload removed, kept until their last session ends. Data sources are added and
 * removed here, at start and by config reload alike.
 */
final class Backends {
    private static final Logger log = LoggerFactory.getLogger(Backends.class);

    private final BackendGroup group;
    /** By data source name; config reload adds and removes. */
    private final Map<String, BackendPool> pools = new ConcurrentHashMap<>();
    /** Pools of backends removed by reload, closed once their sessions are gone or at the latest by {@link #close}. */
    private final List<BackendPool> retired = new CopyOnWriteArrayList<>();
    private final EventLoopGroup workers;
    private final EventLoopGroup checks;
    private final TransportKind transport;
    private final int connBufferSize;
    /** What pools open their {@code minPoolSize} connections with. */
    private final SessionKey defaultKey;
    /** Fixed at start: a reload that changes it needs a restart. */
    private final PoolingConfig pooling;
    /** The data sources of read/write split groups, whose sessions take a connection per transaction. */
    private final java.util.Set<String> splitDataSources;
    /** The replicas of read/write split groups: their connections run read-only (decision 110). */
    private final java.util.Set<String> replicaDataSources;
    private HealthChecker healthChecker;
    /** A login slower than a health check allows fails the attempt, so a session can fail over in time. */
    private final long loginAttemptTimeoutMillis;
    /**
     * A pooled connection idle for longer than a health-check interval is pinged before it is lent: its server may
     * have hung since it was last used, before the checks can tell. 0 with health checks off.
     */
    private final long idleCheckAfterMillis;
    /** Told of each pool added after start before its backend can be picked; sessions look pools up by name. */
    private volatile BiConsumer<String, BackendPool> poolAdded = (name, pool) -> { };

    /**
     * @param workers the relay event loops the pools' connections run on
     * @param checks the health checks' loop, on which retired pools are also looked at
     */
    Backends(ProxyConfig config, EventLoopGroup workers, EventLoopGroup checks, TransportKind transport,
            SessionKey defaultKey) {
        this.group = new BackendGroup(config.loadBalancer(), config.healthCheck());
        this.workers = workers;
        this.checks = checks;
        this.transport = transport;
        this.connBufferSize = config.server().connBufferSize();
        this.defaultKey = defaultKey;
        this.pooling = config.pooling();
        this.splitDataSources = config.readWriteSplitting().stream()
                .flatMap(group -> group.dataSourceNames().stream()).collect(java.util.stream.Collectors.toSet());
        this.replicaDataSources = config.readWriteSplitting().stream()
                .flatMap(group -> group.readDataSourceNames().stream()).collect(java.util.stream.Collectors.toSet());
        this.loginAttemptTimeoutMillis = config.healthCheck().timeoutMilliseconds();
        this.idleCheckAfterMillis = config.healthCheck().intervalMilliseconds();
    }

    /**
     * Adds a data source: its pool first, so that a session never finds a backend without one, then its backend.
     * A backend that did not answer the probe starts down and needs {@code healthCheck.rise} checks to come up.
     */
    Backend add(DataSourceConfig dataSource, boolean reachable) {
        BackendPool pool = new BackendPool(dataSource, workers, transport, connBufferSize, defaultKey, checks.next());
        // A read/write split session takes its connections per transaction whatever the pooling mode: its group's
        // connections report session state, so that its state can follow it between the primary and replicas.
        pool.usePooling(splitDataSources.contains(dataSource.name()) && !pooling.transactionPooling()
                ? new PoolingConfig(PoolingMode.TRANSACTION, pooling.preparedStatementCacheSize(),
                        pooling.sessionMovesPerSecond())
                : pooling);
        pool.servesReplica(replicaDataSources.contains(dataSource.name()));
        pool.timeouts().idleCheck(idleCheckAfterMillis, loginAttemptTimeoutMillis);
        if (group.healthCheck().enabled()) {
            // A hung server is reported like a connect that failed: down at once, its sessions fail over.
            pool.watchStalls(loginAttemptTimeoutMillis,
                    why -> group.reportConnectFailure(dataSource.name(), why));
        }
        pools.put(dataSource.name(), pool);
        poolAdded.accept(dataSource.name(), pool);
        Backend backend = group.add(dataSource.name(), pool.address(), dataSource.weight(), reachable);
        if (dataSource.drain()) {
            group.drain(dataSource.name());
        }
        pool.setRetiring(backend.status() != BackendStatus.UP);
        boundLoginAttempts();
        return backend;
    }

    /**
     * With two backends or more, one connect and login may take what a health check gives a login
     * ({@code healthCheck.timeoutMilliseconds}), so a session facing a hung server fails over within its
     * {@code connectionTimeoutMilliseconds}. A lone backend keeps the whole timeout: there is nowhere to fail over
     * to, and a slow login is better than none.
     */
    private void boundLoginAttempts() {
        long bound = pools.size() > 1 ? loginAttemptTimeoutMillis : 0;
        pools.values().forEach(pool -> pool.timeouts().loginAttempt(bound));
    }

    /**
     * Takes a data source out of the group at once; its sessions carry on and its pool closes after the last.
     *
     * @return the backend removed, or {@code null} when there was none of that name
     */
    Backend remove(String name) {
        Backend removed = group.remove(name);
        BackendPool pool = pools.remove(name);
        if (pool != null && removed != null) {
            retire(pool, removed);
        }
        boundLoginAttempts();
        return removed;
    }

    /** A removed backend's pool: closed once its last session has gone, checked every second. */
    private void retire(BackendPool pool, Backend backend) {
        pool.setRetiring(true);
        retired.add(pool);
        AtomicReference<ScheduledFuture<?>> schedule = new AtomicReference<>();
        schedule.set(checks.next().scheduleAtFixedRate(() -> {
            if (retired.contains(pool) && backend.activeSessions() == 0 && pool.openConnections() == 0) {
                retired.remove(pool);
                pool.close(1000);
            }
            if (!retired.contains(pool) && schedule.get() != null) {
                schedule.get().cancel(false);
            }
        }, 1, 1, TimeUnit.SECONDS));
    }

    /**
     * Once the configured data sources are added: follows status changes and starts the health checks.
     *
     * @param poolAdded told of each pool a config reload adds, before its backend can be picked
     */
    void start(BiConsumer<String, BackendPool> poolAdded) {
        this.poolAdded = poolAdded;
        group.addListener(this::statusChanged);
        healthChecker = new HealthChecker(group, (name, timeout) -> {
            BackendPool pool = pools.get(name);
            return pool != null ? pool.ownConnections().check(timeout)
                    : CompletableFuture.failedFuture(new IllegalStateException("no pool for " + name));
        }, checks.next());
        healthChecker.start();
    }

    /** Logs a backend's change of status and stops pooling connections to a backend that left rotation. */
    private void statusChanged(BackendState now, BackendStatus before) {
        BackendPool pool = pools.get(now.name());
        if (pool != null) {
            pool.setRetiring(now.status() != BackendStatus.UP);
            if (now.status() == BackendStatus.UP) {
                pool.serverAnswers();
            }
        }
        String why = now.lastCheck() == null ? "" : " (" + now.lastCheck().detail() + ")";
        if (now.status() == BackendStatus.DOWN) {
            log.warn("backend {} ({}) is DOWN{}: new sessions go elsewhere", now.name(), now.address(), why);
        } else {
            log.info("backend {} ({}) is {} ({})", now.name(), now.address(), now.status(),
                    before == null ? "added" : "was " + before);
        }
    }

    BackendGroup group() {
        return group;
    }

    /** The pool of the data source {@code name}, or {@code null}. */
    BackendPool pool(String name) {
        return pools.get(name);
    }

    /**
     * Backend connections open now to the data source {@code name} (idle, lent or logging in).
     *
     * @throws IllegalArgumentException when there is no data source of that name
     */
    int openConnections(String name) {
        BackendPool pool = pools.get(name);
        if (pool == null) {
            throw new IllegalArgumentException("data source: " + name + " (expected: one of " + pools.keySet() + ")");
        }
        return pool.openConnections();
    }

    /** Every data source's pool by name, as of now (read-only). */
    Map<String, BackendPool> pools() {
        return Collections.unmodifiableMap(pools);
    }

    /** Every backend's status, sessions, last health check and pool, in configuration order. */
    List<BackendSnapshot> snapshots() {
        List<BackendSnapshot> snapshots = new ArrayList<>();
        for (BackendState state : group.states()) {
            BackendPool pool = pools.get(state.name());
            if (pool == null) {
                continue; // added by a reload that is still wiring it
            }
            PoolCounters counters = pool.counters();
            snapshots.add(new BackendSnapshot(state, pool.openConnections(), pool.idleConnections(),
                    pool.pendingAcquires(), pool.dataSource().maxPoolSize(), counters.createdConnections(),
                    counters.closedConnections(), counters.connectionErrors(), counters.acquireWaitBuckets(),
                    counters.acquireWaitNanos(), pool.openConnectionsPerAccount()));
        }
        return snapshots;
    }

    /**
     * Stops the health checks and closes every pool, the retired ones included, waiting up to
     * {@code timeoutMillis} for each.
     */
    void close(long timeoutMillis) {
        if (healthChecker != null) {
            healthChecker.close();
        }
        pools.values().forEach(pool -> pool.close(timeoutMillis));
        retired.forEach(pool -> pool.close(1000));
    }
}
