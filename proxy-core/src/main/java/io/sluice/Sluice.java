package io.sluice;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.backend.BackendPool;
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
import io.sluice.protocol.Capabilities;
import io.sluice.transport.TransportKind;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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
 */
public final class Sluice implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Sluice.class);
    private static final int PROBE_TIMEOUT_MILLIS = 5_000;

    private final ProxyConfig config;
    private final EventLoopGroup bossGroup;
    private final EventLoopGroup workerGroup;
    private final EventLoopGroup checkGroup;
    private final Map<String, BackendPool> pools;
    private final BackendGroup group;
    private final HealthChecker healthChecker;
    private final FrontendContext context;
    private final Channel serverChannel;
    private final TransportKind transport;

    private Sluice(ProxyConfig config, EventLoopGroup bossGroup, EventLoopGroup workerGroup,
            EventLoopGroup checkGroup, Map<String, BackendPool> pools, BackendGroup group, HealthChecker healthChecker,
            FrontendContext context, Channel serverChannel, TransportKind transport) {
        this.config = config;
        this.bossGroup = bossGroup;
        this.workerGroup = workerGroup;
        this.checkGroup = checkGroup;
        this.pools = pools;
        this.group = group;
        this.healthChecker = healthChecker;
        this.context = context;
        this.serverChannel = serverChannel;
        this.transport = transport;
    }

    /**
     * Starts a proxy and returns once it accepts connections.
     *
     * @throws ConfigException when the configuration cannot be served: the port is taken, or no backend can be
     *     reached (an unreachable backend among reachable ones is only logged)
     */
    public static Sluice start(ProxyConfig config) {
        if (config.users().isEmpty()) {
            // ShardingSphere seed files carry no authority section; ShardingSphere-Proxy then has root/root.
            log.warn("authority.users is empty: clients log in as the default account root@% with password 'root'."
                    + " Set authority.users in config.yaml.");
            config = new ProxyConfig(config.databaseName(), config.dataSources(), config.server(),
                    List.of(new UserConfig("root", "%", "root")));
        }
        ProbeResult probe = probeBackends(config);
        BackendServerInfo serverInfo = probe.serverInfo();
        ServerConfig server = config.server();
        TransportKind transport = TransportKind.of(server.transport());
        EventLoopGroup bossGroup = new MultiThreadIoEventLoopGroup(1, transport.ioHandlerFactory());
        EventLoopGroup workerGroup = new MultiThreadIoEventLoopGroup(server.effectiveWorkerThreads(),
                transport.ioHandlerFactory());
        // Health checks get a thread of their own: a slow or black-holed backend never delays relayed traffic.
        EventLoopGroup checkGroup = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("sluice-health", true),
                transport.ioHandlerFactory());
        Map<String, BackendPool> pools = new LinkedHashMap<>();
        HealthChecker checker = null;
        try {
            SessionKey defaultKey = new SessionKey(Capabilities.PROXY_SUPPORTED & serverInfo.capabilities()
                    & ~Capabilities.CLIENT_MULTI_STATEMENTS, serverInfo.collationId(),
                    serverInfo.mariaDbCapabilities());
            BackendGroup group = new BackendGroup(config.loadBalancer(), config.healthCheck());
            for (DataSourceConfig dataSource : config.dataSources().values()) {
                BackendPool pool = new BackendPool(dataSource, workerGroup, transport, server.connBufferSize(),
                        defaultKey, checkGroup.next());
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
            FrontendContext context = new FrontendContext(config, serverInfo, group, pools);
            int bufferSize = server.connBufferSize();
            Channel serverChannel = new ServerBootstrap()
                    .group(bossGroup, workerGroup)
                    .channelFactory(transport.serverChannelFactory())
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .option(ChannelOption.SO_REUSEADDR, true)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childOption(ChannelOption.SO_KEEPALIVE, true)
                    .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK,
                            new WriteBufferWaterMark(bufferSize / 2, bufferSize))
                    .childHandler(new FrontendInitializer(context))
                    .bind(server.address(), server.port())
                    .syncUninterruptibly()
                    .channel();
            Sluice sluice = new Sluice(config, bossGroup, workerGroup, checkGroup, pools, group, checker, context,
                    serverChannel, transport);
            log.info("Sluice listening on {} ({} transport, {} event loops), {} over {} ({}), health checks {}",
                    sluice.localAddress(), transport.name(), server.effectiveWorkerThreads(), config.loadBalancer(),
                    pools.keySet(), serverInfo.serverVersion(), config.healthCheck().enabled()
                            ? "every " + config.healthCheck().intervalMilliseconds() + " ms" : "off");
            return sluice;
        } catch (Exception e) { // Netty rethrows the socket's checked BindException unchecked
            if (checker != null) {
                checker.close();
            }
            pools.values().forEach(pool -> pool.close(1000));
            bossGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS);
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

    /** What the start-up probe learned: the first reachable backend's greeting and which data sources answered. */
    private record ProbeResult(BackendServerInfo serverInfo, List<String> reachable) {
    }

    /**
     * Reads every backend's greeting. One reachable backend is enough to start (the others are logged as
     * warnings); none is a configuration error.
     */
    private static ProbeResult probeBackends(ProxyConfig config) {
        BackendServerInfo first = null;
        List<String> reachable = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        for (DataSourceConfig dataSource : config.dataSources().values()) {
            int timeout = (int) Math.min(PROBE_TIMEOUT_MILLIS, dataSource.connectionTimeoutMilliseconds());
            try {
                BackendServerInfo info = BackendProbe.probe(dataSource.jdbcUrl(), timeout);
                if (first == null) {
                    first = info;
                }
                reachable.add(dataSource.name());
            } catch (IOException e) {
                String failure = "dataSources." + dataSource.name() + ".url: " + dataSource.url()
                        + " is unreachable (" + e.getMessage() + ")";
                failures.add(failure);
                log.warn("{}", failure);
            }
        }
        if (first == null) {
            throw new ConfigException("no backend is reachable: " + String.join("; ", failures));
        }
        return new ProbeResult(first, reachable);
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

    /** Client connections open now. */
    public int clientConnections() {
        return context.clientConnections();
    }

    /** Backend connections open now to the data source {@code name} (idle, lent or logging in). */
    public int backendConnections(String name) {
        BackendPool pool = pools.get(name);
        if (pool == null) {
            throw new IllegalArgumentException("data source: " + name + " (expected: one of " + pools.keySet() + ")");
        }
        return pool.openConnections();
    }

    /** Every backend's status, sessions, last health check and pool, in configuration order. */
    public List<BackendSnapshot> backends() {
        List<BackendSnapshot> snapshots = new ArrayList<>();
        for (BackendState state : group.states()) {
            BackendPool pool = pools.get(state.name());
            snapshots.add(new BackendSnapshot(state, pool.openConnections(), pool.idleConnections(),
                    pool.pendingAcquires(), pool.dataSource().maxPoolSize()));
        }
        return snapshots;
    }

    /**
     * Takes a backend out of rotation for maintenance: its sessions finish, no new session goes to it, and its
     * pooled connections close as they come back.
     *
     * @return false when there is no backend of that name
     */
    public boolean drain(String name) {
        return group.drain(name);
    }

    /** Puts a drained backend back into rotation. */
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

    /** Closes the listener, every client session and every backend connection. */
    @Override
    public void close() {
        context.capture().stop("proxy stopped", false);
        serverChannel.close().syncUninterruptibly();
        healthChecker.close();
        pools.values().forEach(pool -> pool.close(2000));
        bossGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workerGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        checkGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        log.info("Sluice on {} stopped", serverChannel.localAddress());
    }
}
