package io.sluice;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.api.BackendSnapshot;
import io.sluice.api.MetricSources;
import io.sluice.api.ProxyControl;
import io.sluice.api.ReloadResult;
import io.sluice.backend.pool.BackendPool;
import io.sluice.backend.BackendProbe;
import io.sluice.backend.BackendServerInfo;
import io.sluice.backend.SessionKey;
import io.sluice.balancer.Backend;
import io.sluice.balancer.BackendGroup;
import io.sluice.balancer.BackendState;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.HealthChecker;
import io.sluice.capture.CaptureException;
import io.sluice.capture.CaptureOptions;
import io.sluice.capture.CaptureStatus;
import io.sluice.capture.TrafficCapture;
import io.sluice.config.ConfigException;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.UserConfig;
import io.sluice.frontend.FrontendContext;
import io.sluice.frontend.FrontendInitializer;
import io.sluice.frontend.ClientSession;
import io.sluice.frontend.SessionRegistry;
import io.sluice.api.SessionSnapshot;
import io.sluice.metrics.TrafficCounters;
import io.sluice.protocol.Capabilities;
import io.sluice.slowlog.SlowQueryLog;
import io.sluice.transport.TransportKind;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running Sluice proxy. The embedding entry point:
 *
 * <pre>{@code
 * ProxyConfig config = ProxyConfig.builder()
 *         .dataSource("ds_0", "jdbc:mysql://127.0.0.1:3306/test", "root", "")
 *         .user("app", "secret")
 *         .port(0)
 *         .build();
 * try (Sluice sluice = Sluice.start(config)) {
 *     int port = sluice.port(); // clients connect here
 * }
 * }</pre>
 *
 * <p>This is the proxy alone: it opens no admin port and exports no metrics, whatever {@code admin} and
 * {@code metrics} say. {@code io.sluice.ops.SluiceServer.start(config)} starts it with both, as the standalone proxy
 * does; an embedder can also serve {@link #metricSources()} with its own exporter.
 */
public final class Sluice implements ProxyControl, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Sluice.class);
    private static final int PROBE_TIMEOUT_MILLIS = 5_000;

    /** Replaced by config reload with what was applied. */
    private volatile ProxyConfig config;
    private final EventLoopGroup workerGroup;
    private final EventLoopGroup checkGroup;
    private final Map<String, BackendPool> pools;
    private final BackendGroup group;
    private final HealthChecker healthChecker;
    private final FrontendContext context;
    private final Channel serverChannel;
    private final TransportKind transport;

    /** What pools added by config reload open their {@code minPoolSize} connections with. */
    private final SessionKey defaultKey;
    /** {@code null} when {@code metrics.enabled} is false: nothing is counted then. */
    private final MetricSources metricSources;
    private final SlowQueryLog slowQueryLog;
    /** Where {@link #reload()} reads the configuration from; {@code null} for a proxy built in code. */
    private volatile Supplier<ProxyConfig> configSource;
    /** Pools of backends removed by reload, closed once their sessions are gone or at the latest by {@link #close()}. */
    private final List<BackendPool> retiredPools = new CopyOnWriteArrayList<>();
    private volatile boolean draining;
    private final Object shutdownLock = new Object();
    /**
     * Not the shutdown lock: graceful shutdown holds that while sessions drain, and a reload asked meanwhile must be
     * refused at once rather than wait.
     */
    private final Object reloadLock = new Object();
    private final AtomicBoolean closed = new AtomicBoolean();

    private Sluice(ProxyConfig config, EventLoopGroup workerGroup, EventLoopGroup checkGroup,
            Map<String, BackendPool> pools, BackendGroup group, HealthChecker healthChecker, FrontendContext context,
            Channel serverChannel, TransportKind transport, SessionKey defaultKey, TrafficCounters traffic,
            SlowQueryLog slowQueryLog) {
        this.config = config;
        this.workerGroup = workerGroup;
        this.checkGroup = checkGroup;
        this.pools = pools;
        this.group = group;
        this.healthChecker = healthChecker;
        this.context = context;
        this.serverChannel = serverChannel;
        this.transport = transport;
        this.defaultKey = defaultKey;
        this.slowQueryLog = slowQueryLog;
        this.metricSources = traffic == null ? null
                : new MetricSources(traffic, workerGroup, context.registry(), this::backends, this::isDraining);
    }

    /**
     * Starts a proxy and returns once it accepts connections.
     *
     * @throws ConfigException when the configuration cannot be served: the port is taken, or no backend can be
     *     reached (an unreachable backend among reachable ones is only logged)
     */
    public static Sluice start(ProxyConfig config) {
        config = withDefaultUsers(config);
        ProbeResult probe = probeBackends(config);
        BackendServerInfo serverInfo = probe.serverInfo();
        ServerConfig server = config.server();
        TransportKind transport = TransportKind.of(server.transport());
        EventLoopGroup workerGroup = transport.newEventLoopGroup(server.effectiveWorkerThreads(),
                new DefaultThreadFactory("sluice-relay"));
        // Health checks get a thread of their own: a slow or black-holed backend never delays relayed traffic.
        EventLoopGroup checkGroup = transport.newEventLoopGroup(1, new DefaultThreadFactory("sluice-health", true));
        Sluice started;
        Map<String, BackendPool> pools = new ConcurrentHashMap<>(); // config reload adds and removes
        TrafficCounters traffic = config.operations().metrics().enabled() ? new TrafficCounters(workerGroup) : null;
        SlowQueryLog slowQueryLog = new SlowQueryLog(config.operations().slowQueryLog());
        HealthChecker checker = null;
        try {
            SessionKey defaultKey = new SessionKey(Capabilities.PROXY_SUPPORTED & serverInfo.capabilities()
                    & ~Capabilities.CLIENT_MULTI_STATEMENTS, serverInfo.collationId(),
                    Capabilities.mariaDbOffered(serverInfo.mariaDbCapabilities(), config.pooling().transactionPooling()));
            BackendGroup group = new BackendGroup(config.loadBalancer(), config.healthCheck());
            for (DataSourceConfig dataSource : config.dataSources().values()) {
                BackendPool pool = new BackendPool(dataSource, workerGroup, transport, server.connBufferSize(),
                        defaultKey, checkGroup.next());
                pool.usePooling(config.pooling());
                pools.put(dataSource.name(), pool);
                // A backend that did not answer the start-up probe starts down and needs `rise` checks to come up.
                Backend backend = group.add(dataSource.name(), pool.address(), dataSource.weight(),
                        probe.reachable().contains(dataSource.name()));
                if (dataSource.drain()) {
                    group.drain(dataSource.name());
                }
                pool.setRetiring(backend.status() != BackendStatus.UP);
            }
            group.addListener((now, before) -> onStatusChanged(pools, now, before));
            checker = new HealthChecker(group, (name, timeout) -> {
                BackendPool pool = pools.get(name);
                return pool != null ? pool.check(timeout)
                        : CompletableFuture.failedFuture(new IllegalStateException("no pool for " + name));
            }, checkGroup.next());
            checker.start();
            SessionRegistry registry = new SessionRegistry(server.maxConnections(),
                    config.pooling().transactionPooling());
            FrontendContext context = new FrontendContext(config, serverInfo, group, pools, registry, traffic,
                    slowQueryLog);
            int bufferSize = server.connBufferSize();
            Channel serverChannel = new ServerBootstrap()
                    // Accepted on a relay loop, not a thread of its own: a login then costs no extra thread wake-up
                    // (decision 057). Half the clients of 2 loops even start on the loop that accepted them.
                    .group(workerGroup, workerGroup)
                    .channelFactory(transport.serverChannelFactory())
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    // No TCP_NODELAY option: every transport sets it on a new socket already, and asking again is
                    // one more setsockopt per client (NoDelayByDefaultTest checks the default).
                    .childOption(ChannelOption.SO_KEEPALIVE, true)
                    .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK,
                            new WriteBufferWaterMark(bufferSize / 2, bufferSize))
                    .childHandler(new FrontendInitializer(context))
                    .bind(server.address(), server.port())
                    .syncUninterruptibly()
                    .channel();
            Sluice sluice = new Sluice(config, workerGroup, checkGroup, pools, group, checker, context,
                    serverChannel, transport, defaultKey, traffic, slowQueryLog);
            log.info("Sluice listening on {} ({} transport, {} event loops), {} over {} ({}), health checks {}",
                    sluice.localAddress(), transport.name(), server.effectiveWorkerThreads(), config.loadBalancer(),
                    pools.keySet(), serverInfo.serverVersion(), config.healthCheck().enabled()
                            ? "every " + config.healthCheck().intervalMilliseconds() + " ms" : "off");
            started = sluice;
        } catch (Exception e) { // Netty rethrows the socket's checked BindException unchecked
            if (checker != null) {
                checker.close();
            }
            pools.values().forEach(pool -> pool.close(1000));
            workerGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            checkGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            if (isBindFailure(e) || isBindFailure(e.getCause())) {
                throw new ConfigException("server.port: " + server.port() + " on " + server.address()
                        + " cannot be bound: address already in use", e);
            }
            if (e instanceof ConfigException ce) {
                throw ce;
            }
            throw new ConfigException("server: cannot start on " + server.address() + ":" + server.port() + ": "
                    + e.getMessage(), e);
        }
        return started;
    }

    /** ShardingSphere seed files carry no authority section; ShardingSphere-Proxy then has root/root. */
    private static ProxyConfig withDefaultUsers(ProxyConfig config) {
        if (!config.users().isEmpty()) {
            return config;
        }
        log.warn("authority.users is empty: clients log in as the default account root@% with password 'root'."
                + " Set authority.users in config.yaml.");
        return config.withUsers(List.of(new UserConfig("root", "%", "root")));
    }

    /** Logs a backend's change of status and stops pooling connections to a backend that left rotation. */
    private static void onStatusChanged(Map<String, BackendPool> pools, BackendState now, BackendStatus before) {
        BackendPool pool = pools.get(now.name());
        if (pool != null) {
            pool.setRetiring(now.status() != BackendStatus.UP);
        }
        String why = now.lastCheck() == null ? "" : " (" + now.lastCheck().detail() + ")";
        if (now.status() == BackendStatus.DOWN) {
            log.warn("backend {} ({}) is DOWN{}: new sessions go elsewhere", now.name(), now.address(), why);
        } else {
            log.info("backend {} ({}) is {} (was {})", now.name(), now.address(), now.status(), before);
        }
    }

    private static boolean isBindFailure(Throwable t) {
        return t instanceof BindException
                || (t != null && String.valueOf(t.getMessage()).contains("Address already in use"));
    }

    /** What the start-up probe learned: what all reachable backends offer, and which data sources answered. */
    record ProbeResult(BackendServerInfo serverInfo, List<String> reachable, List<String> failures) {
    }

    /**
     * Reads every backend's greeting. One reachable backend is enough to start (the others are logged as
     * warnings); none is a configuration error.
     */
    private static ProbeResult probeBackends(ProxyConfig config) {
        ProbeResult result = probe(config.dataSources().values());
        if (result.serverInfo() == null) {
            throw new ConfigException("no backend is reachable: " + String.join("; ", result.failures()));
        }
        return result;
    }

    /**
     * Reads the greeting of each data source; unreachable ones are logged and listed. The server info is the first
     * reachable backend's, with only the capabilities every reachable backend offers: clients are offered what holds
     * wherever their session lands (a MariaDB 10.5 next to a 10.11 during a rolling upgrade has no metadata caching,
     * decision 062).
     */
    static ProbeResult probe(Iterable<DataSourceConfig> dataSources) {
        BackendServerInfo shared = null;
        List<String> reachable = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (DataSourceConfig dataSource : dataSources) {
            int timeout = (int) Math.min(PROBE_TIMEOUT_MILLIS, dataSource.connectionTimeoutMilliseconds());
            try {
                BackendServerInfo info = BackendProbe.probe(dataSource.jdbcUrl(), timeout);
                shared = shared == null ? info : shared.sharedWith(info);
                reachable.add(dataSource.name());
            } catch (IOException e) {
                String failure = "dataSources." + dataSource.name() + ".url: " + dataSource.url()
                        + " is unreachable (" + e.getMessage() + ")";
                failures.add(failure);
                log.warn("{}", failure);
            }
        }
        return new ProbeResult(shared, reachable, failures);
    }

    /** The port clients connect to. */
    public int port() {
        return localAddress().getPort();
    }

    /** The address the listener is bound to. */
    public InetSocketAddress localAddress() {
        return (InetSocketAddress) serverChannel.localAddress();
    }

    /** The configuration this proxy runs with. */
    public ProxyConfig config() {
        return config;
    }

    @Override
    public int clientConnections() {
        return context.registry().open();
    }

    /** Backend connections open now to the data source {@code name} (idle, lent or logging in). */
    public int backendConnections(String name) {
        BackendPool pool = pools.get(name);
        if (pool == null) {
            throw new IllegalArgumentException("data source: " + name + " (expected: one of " + pools.keySet() + ")");
        }
        return pool.openConnections();
    }

    @Override
    public List<BackendSnapshot> backends() {
        List<BackendSnapshot> snapshots = new ArrayList<>();
        for (BackendState state : group.states()) {
            BackendPool pool = pools.get(state.name());
            if (pool == null) {
                continue; // added by a reload that is still wiring it
            }
            snapshots.add(new BackendSnapshot(state, pool.openConnections(), pool.idleConnections(),
                    pool.pendingAcquires(), pool.dataSource().maxPoolSize(), pool.createdConnections(),
                    pool.closedConnections(), pool.connectionErrors(), pool.acquireWaitBuckets(),
                    pool.acquireWaitNanos()));
        }
        return snapshots;
    }

    /**
     * Takes a backend out of rotation for maintenance: its sessions finish, no new session goes to it, and its
     * pooled connections close as they come back.
     *
     * @return false when there is no backend of that name
     */
    @Override
    public boolean drain(String name) {
        return group.drain(name);
    }

    /** Puts a drained backend back into rotation. */
    @Override
    public boolean undrain(String name) {
        return group.undrain(name);
    }

    /** The backend group, for observers that want to hear of status changes ({@link BackendGroup#addListener}). */
    public BackendGroup backendGroup() {
        return group;
    }

    /** The Netty transport in use: {@code epoll}, {@code io_uring} or {@code nio}. */
    public String transport() {
        return transport.name();
    }

    /**
     * What a metrics exporter reads (the counters, client counts, backends, draining), or {@code null} when
     * {@code metrics.enabled} is false; {@code io.sluice.ops.metrics.SluiceMetrics} serves it as Prometheus text.
     */
    public MetricSources metricSources() {
        return metricSources;
    }

    @Override
    public boolean isDraining() {
        return draining;
    }

    /** Every client session now, each described on its own event loop; for {@code /api/sessions?verbose}. */
    @Override
    public List<SessionSnapshot> sessions() {
        List<Future<SessionSnapshot>> pending = new ArrayList<>();
        for (ClientSession session : context.registry().sessions()) {
            try {
                pending.add(session.eventLoop().submit(session::snapshot));
            } catch (RuntimeException e) {
                // its loop is shutting down: the session is going too
            }
        }
        List<SessionSnapshot> snapshots = new ArrayList<>(pending.size());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        for (Future<SessionSnapshot> future : pending) {
            try {
                snapshots.add(future.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (ExecutionException | TimeoutException e) {
                // closed meanwhile, or its loop is stuck: leave it out rather than hang the API
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return snapshots;
    }

    /**
     * Graceful shutdown with the configured timings ({@code shutdown} in config.yaml); see
     * {@link #shutdownGracefully(Duration, Duration)}.
     */
    public boolean shutdownGracefully() {
        var settings = config.operations().shutdown();
        return shutdownGracefully(Duration.ofMillis(settings.gracefulWaitBeforeShutdownMilliseconds()),
                Duration.ofMillis(settings.gracefulCloseTimeoutMilliseconds()));
    }

    /**
     * Stops without cutting transactions, then {@link #close() closes}. Blocks until done.
     *
     * <ol>
     *   <li>{@code /health} answers 503 at once, while new connections are still served for {@code waitBeforeRefusing},
     *       so that load balancers and Kubernetes probes take this instance out first;
     *   <li>then new connections get ERR 1053 "Server shutdown in progress", and each session is closed at its first
     *       idle moment outside a transaction: between commands with the server reporting no open transaction;
     *   <li>after {@code closeTimeout}, sessions still in a transaction or a command are closed anyway.
     * </ol>
     * A second call waits for the first one to finish.
     *
     * @return true when every session ended on its own, false when some had to be cut
     */
    public boolean shutdownGracefully(Duration waitBeforeRefusing, Duration closeTimeout) {
        synchronized (shutdownLock) {
            if (closed.get()) {
                return true;
            }
            draining = true;
            log.info("Graceful shutdown: /health answers 503; new connections are refused in {} ms, then sessions get"
                    + " up to {} ms to finish their transactions", waitBeforeRefusing.toMillis(),
                    closeTimeout.toMillis());
            sleep(waitBeforeRefusing.toMillis());
            SessionRegistry sessions = context.registry();
            sessions.startClosing();
            log.info("Refusing new connections; {} session(s) open", sessions.open());
            long deadline = System.nanoTime() + closeTimeout.toNanos();
            long nextNudge = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
            while (sessions.open() > 0 && System.nanoTime() - deadline < 0) {
                sleep(20);
                if (System.nanoTime() - nextNudge >= 0) {
                    // Sessions that went idle without a response ending (a login finishing) are caught here.
                    sessions.startClosing();
                    nextNudge = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(500);
                }
            }
            int cut = sessions.open();
            if (cut > 0) {
                log.warn("Graceful shutdown: closing {} session(s) still in a transaction or a command after {} ms",
                        cut, closeTimeout.toMillis());
            } else {
                log.info("Graceful shutdown: every session ended");
            }
            close();
            return cut == 0;
        }
    }

    private static void sleep(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Tells {@link #reload()} where the configuration comes from: the standalone proxy reads config.yaml again.
     */
    public void configSource(Supplier<ProxyConfig> source) {
        this.configSource = source;
    }

    /**
     * Reads the configuration again from its {@link #configSource(Supplier) source} and applies what can change
     * without a restart.
     *
     * @throws ConfigException when the source refuses the file; nothing changes then
     * @throws IllegalStateException when there is no source (a proxy built in code: use {@link #reload(ProxyConfig)})
     */
    @Override
    public ReloadResult reload() {
        Supplier<ProxyConfig> source = configSource;
        if (source == null) {
            throw new IllegalStateException("no config file to reload: this Sluice was started from code");
        }
        return reload(source.get());
    }

    /**
     * Applies a new configuration without a restart: data sources added and removed, weights, drain, pool sizes,
     * timeouts and credentials, users, databaseName, the load-balancing policy, the slow-query log and the shutdown
     * timings. What needs a restart (the listener, event loops, health checks, admin port, metrics switch, a data
     * source's URL) is listed in the result and keeps its running value. See docs/operations.md.
     */
    public ReloadResult reload(ProxyConfig next) {
        synchronized (reloadLock) {
            if (draining) {
                throw new IllegalStateException("Sluice is shutting down: no reload");
            }
            ConfigReload reload = new ConfigReload(this, config, withDefaultUsers(next));
            ReloadResult result = reload.apply();
            config = reload.effective();
            context.reconfigure(config);
            slowQueryLog.update(config.operations().slowQueryLog());
            return result;
        }
    }

    // For ConfigReload, which changes the running proxy.

    BackendGroup group() {
        return group;
    }

    Map<String, BackendPool> pools() {
        return pools;
    }

    FrontendContext context() {
        return context;
    }

    /** A pool for a data source added by reload, on the same loops and transport as the others. */
    BackendPool newPool(DataSourceConfig dataSource) {
        BackendPool pool = new BackendPool(dataSource, workerGroup, transport, config.server().connBufferSize(),
                defaultKey, checkGroup.next());
        pool.usePooling(config.pooling());
        return pool;
    }

    /** A removed backend's pool: closed once its last session has gone, checked every second. */
    void retire(BackendPool pool, Backend backend) {
        pool.setRetiring(true);
        retiredPools.add(pool);
        AtomicReference<ScheduledFuture<?>> schedule = new AtomicReference<>();
        schedule.set(checkGroup.next().scheduleAtFixedRate(() -> {
            if (retiredPools.contains(pool) && backend.activeSessions() == 0 && pool.openConnections() == 0) {
                retiredPools.remove(pool);
                pool.close(1000);
            }
            if (!retiredPools.contains(pool) && schedule.get() != null) {
                schedule.get().cancel(false);
            }
        }, 1, 1, TimeUnit.SECONDS));
    }

    // ---- traffic capture (docs/traffic-capture.md) -----------------------------------------------------------

    /**
     * Starts capturing every client command to files in {@code options.output()}.
     *
     * @throws CaptureException when a capture already runs, the options are invalid or the directory is unusable
     */
    public CaptureStatus startCapture(CaptureOptions options) {
        return context.capture().start(options);
    }

    /**
     * Stops the running capture once what it queued is written.
     *
     * @throws CaptureException when no capture is running
     */
    public CaptureStatus stopCapture() {
        return context.capture().stop();
    }

    /** The running capture's status, or the last one's, or {@code idle}. */
    public CaptureStatus captureStatus() {
        return context.capture().status();
    }

    /** The capture itself, for an admin server's {@link io.sluice.capture.CaptureEndpoints}. */
    public TrafficCapture trafficCapture() {
        return context.capture();
    }

    /** Closes the listener, every client session and every backend connection. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        draining = true;
        context.capture().stop("proxy stopped", false);
        serverChannel.close().syncUninterruptibly();
        healthChecker.close();
        pools.values().forEach(pool -> pool.close(2000));
        retiredPools.forEach(pool -> pool.close(1000));
        workerGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        checkGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        log.info("Sluice on {} stopped", serverChannel.localAddress());
    }
}
