package io.sluice;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.sluice.backend.BackendPool;
import io.sluice.backend.BackendProbe;
import io.sluice.backend.BackendServerInfo;
import io.sluice.backend.SessionKey;
import io.sluice.balancer.SingleBackend;
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
    private final Map<String, BackendPool> pools;
    private final FrontendContext context;
    private final Channel serverChannel;
    private final TransportKind transport;

    private Sluice(ProxyConfig config, EventLoopGroup bossGroup, EventLoopGroup workerGroup,
            Map<String, BackendPool> pools, FrontendContext context, Channel serverChannel, TransportKind transport) {
        this.config = config;
        this.bossGroup = bossGroup;
        this.workerGroup = workerGroup;
        this.pools = pools;
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
        Map<String, BackendPool> pools = new LinkedHashMap<>();
        try {
            SessionKey defaultKey = new SessionKey(Capabilities.PROXY_SUPPORTED & serverInfo.capabilities()
                    & ~Capabilities.CLIENT_MULTI_STATEMENTS, serverInfo.collationId(),
                    serverInfo.mariaDbCapabilities());
            for (DataSourceConfig dataSource : config.dataSources().values()) {
                pools.put(dataSource.name(), new BackendPool(dataSource, workerGroup, transport,
                        server.connBufferSize(), defaultKey));
            }
            // Until backend groups arrive (issue #4), sessions go to the first data source that answered at start.
            String backend = probe.reachable().get(0);
            FrontendContext context = new FrontendContext(config, serverInfo, new SingleBackend(backend), pools);
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
            Sluice sluice = new Sluice(config, bossGroup, workerGroup, pools, context, serverChannel, transport);
            log.info("Sluice listening on {} ({} transport, {} event loops), backend {} {}", sluice.localAddress(),
                    transport.name(), server.effectiveWorkerThreads(), backend, serverInfo.serverVersion());
            return sluice;
        } catch (Exception e) { // Netty rethrows the socket's checked BindException unchecked
            pools.values().forEach(pool -> pool.close(1000));
            bossGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS);
            workerGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS);
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

    /** The Netty transport in use: {@code epoll}, {@code io_uring} or {@code nio}. */
    public String transport() {
        return transport.name();
    }

    /** Closes the listener, every client session and every backend connection. */
    @Override
    public void close() {
        serverChannel.close().syncUninterruptibly();
        pools.values().forEach(pool -> pool.close(2000));
        bossGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        workerGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        log.info("Sluice on {} stopped", serverChannel.localAddress());
    }
}
