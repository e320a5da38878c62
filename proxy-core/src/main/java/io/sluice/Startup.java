package io.sluice;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sluice.backend.BackendServerInfo;
import io.sluice.backend.SessionKey;
import io.sluice.config.ConfigException;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.StatisticsConfig;
import io.sluice.config.UserConfig;
import io.sluice.frontend.FrontendContext;
import io.sluice.frontend.FrontendInitializer;
import io.sluice.frontend.SessionMoves;
import io.sluice.frontend.SessionRegistry;
import io.sluice.metrics.TrafficCounters;
import io.sluice.routing.ReadWriteGroup;
import io.sluice.protocol.Capabilities;
import io.sluice.slowlog.SlowQueryLog;
import io.sluice.statistics.DigestStatistics;
import io.sluice.transport.TransportKind;
import java.net.BindException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start of a proxy: probes the backends, makes the event loops, the pools, the backend group and its health
 * checks, and binds the listener; on any failure it closes what it made and says why as a {@link ConfigException}.
 */
final class Startup {
    private static final Logger log = LoggerFactory.getLogger(Startup.class);

    private Startup() {
    }

    /** See {@link Sluice#start(ProxyConfig)}. */
    static Sluice start(ProxyConfig config) {
        config = withDefaultUsers(config);
        ProbeResult probe = ProbeResult.probe(config.dataSources().values());
        boolean provisional = probe.serverInfo() == null;
        BackendServerInfo serverInfo = provisional ? BackendServerInfo.provisional() : probe.serverInfo();
        if (provisional) {
            log.warn("no backend is reachable yet ({}): starting anyway; logins get an error until one comes up",
                    String.join("; ", probe.failures()));
        }
        ServerConfig server = config.server();
        TransportKind transport = TransportKind.of(server.transport());
        EventLoopGroup workerGroup = transport.newEventLoopGroup(server.effectiveWorkerThreads(),
                new DefaultThreadFactory("sluice-relay"));
        // Health checks get a thread of their own: a slow or black-holed backend never delays relayed traffic.
        EventLoopGroup checkGroup = transport.newEventLoopGroup(1, new DefaultThreadFactory("sluice-health", true));
        TrafficCounters traffic = config.operations().metrics().enabled() ? new TrafficCounters(workerGroup) : null;
        SlowQueryLog slowQueryLog = new SlowQueryLog(config.operations().slowQueryLog());
        Backends backends = null;
        try {
            SessionKey defaultKey = new SessionKey(Capabilities.PROXY_SUPPORTED & serverInfo.capabilities()
                    & ~Capabilities.CLIENT_MULTI_STATEMENTS, serverInfo.collationId(), Capabilities.mariaDbOffered(
                            serverInfo.mariaDbCapabilities(), config.pooling().transactionPooling()));
            backends = new Backends(config, workerGroup, checkGroup, transport, defaultKey);
            for (DataSourceConfig dataSource : config.dataSources().values()) {
                // A read/write split group's replicas take reads from its sessions only: never a session of their own.
                boolean replica = config.readWriteSplitting().stream()
                        .anyMatch(g -> g.readDataSourceNames().contains(dataSource.name()));
                backends.add(replica ? dataSource.withWeight(0) : dataSource,
                        probe.reachable().contains(dataSource.name()));
            }
            SessionRegistry registry = new SessionRegistry(server.maxConnections(),
                    config.pooling().transactionPooling());
            FrontendContext context = new FrontendContext(config, serverInfo, backends.group(), backends.pools(),
                    registry, traffic, slowQueryLog);
            StatisticsConfig statistics = config.operations().metrics().statistics();
            context.useStatistics(statistics.enabled() ? new DigestStatistics(statistics.maxDigests()) : null);
            if (provisional) {
                context.startProvisional();
                long interval = config.healthCheck().enabled() ? config.healthCheck().intervalMilliseconds() : 2_000;
                FirstBackendWatch.start(List.copyOf(config.dataSources().values()), context, interval,
                        checkGroup::isShuttingDown);
            }
            backends.start(context::addPool);
            if (config.pooling().transactionPooling() || !context.readWriteGroups().isEmpty()) {
                // Before the listener opens, so that a session's first INSERT into a table whose trigger takes a
                // named lock keeps its connection (decision 200); an unreachable server delays the start 5 s at most.
                try {
                    context.hiddenCode().start(checkGroup.next()).get(5, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    log.warn("the triggers and views whose code leaves session state are not read yet: sessions"
                            + " pool without knowing them until they are");
                }
            }
            if (config.usersFromBackend()) {
                // Read on the health-check thread: a slow server never delays relayed traffic (decision 146).
                context.useServerAccounts(config.serverAccounts(), checkGroup.next());
            }
            new SessionMoves(context, checkGroup.next()).start();
            long watchInterval = config.healthCheck().enabled() ? config.healthCheck().intervalMilliseconds() : 2_000;
            for (ReadWriteGroup split : context.readWriteGroups()) {
                PrimaryChanges.follow(split, backends.pools()::get, backends.group(), config.dataSources());
            }
            long readTimeout = Math.max(1_000, config.healthCheck().timeoutMilliseconds());
            Map<String, FailoverWatch> failovers = new HashMap<>();
            for (ReadWriteGroup split : context.readWriteGroups()) {
                if (split.config().autoFailover().enabled()) {
                    failovers.put(split.name(), new FailoverWatch(split, backends.pools()::get, config.dataSources(),
                            Math.max(5_000, readTimeout)));
                }
            }
            new ReplicaWatch(List.copyOf(context.readWriteGroups()), backends.pools()::get, readTimeout, failovers)
                    .start(checkGroup.next(), watchInterval);
            Channel serverChannel = bind(server, transport, workerGroup, context);
            Sluice sluice = new Sluice(config, workerGroup, checkGroup, transport, backends, context, serverChannel,
                    traffic, slowQueryLog);
            log.info("Sluice listening on {} ({} transport, {} event loops), {} over {} ({}), health checks {}",
                    sluice.localAddress(), transport.name(), server.effectiveWorkerThreads(), config.loadBalancer(),
                    backends.pools().keySet(), serverInfo.serverVersion(), config.healthCheck().enabled()
                            ? "every " + config.healthCheck().intervalMilliseconds() + " ms" : "off");
            return sluice;
        } catch (Exception e) { // Netty rethrows the socket's checked BindException unchecked
            if (backends != null) {
                backends.close(1000);
            }
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

    private static Channel bind(ServerConfig server, TransportKind transport, EventLoopGroup workerGroup,
            FrontendContext context) {
        int bufferSize = server.connBufferSize();
        return new ServerBootstrap()
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
    }

    /** ShardingSphere seed files carry no authority section; ShardingSphere-Proxy then has root/root. */
    static ProxyConfig withDefaultUsers(ProxyConfig config) {
        if (!config.users().isEmpty() || config.usersFromBackend()) {
            return config;
        }
        log.warn("authority.users is empty: clients log in as the default account root@% with password 'root'."
                + " Set authority.users in config.yaml.");
        return config.withUsers(List.of(new UserConfig("root", "%", "root")));
    }

    /**
     * Reads every backend's greeting. One reachable backend is enough to start (the others are logged as
     * warnings); none is a configuration error.
     */
    private static boolean isBindFailure(Throwable t) {
        return t instanceof BindException
                || (t != null && String.valueOf(t.getMessage()).contains("Address already in use"));
    }
}
