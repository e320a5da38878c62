package io.sluice;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.sluice.api.BackendSnapshot;
import io.sluice.api.GroupTopology;
import io.sluice.api.MetricSources;
import io.sluice.api.ProxyControl;
import io.sluice.api.RejoinReport;
import io.sluice.api.ReloadResult;
import io.sluice.api.SessionSnapshot;
import io.sluice.api.SwitchoverReport;
import io.sluice.balancer.BackendGroup;
import io.sluice.capture.CaptureException;
import io.sluice.capture.CaptureOptions;
import io.sluice.capture.CaptureStatus;
import io.sluice.capture.TrafficCapture;
import io.sluice.config.ConfigException;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ShutdownConfig;
import io.sluice.frontend.FrontendContext;
import io.sluice.frontend.SessionRegistry;
import io.sluice.metrics.TrafficCounters;
import io.sluice.routing.ReadWriteGroup;
import io.sluice.slowlog.SlowQueryLog;
import io.sluice.rules.QueryRules;
import io.sluice.statistics.DigestStatistics;
import io.sluice.transport.TransportKind;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
 * {@code metrics} say. {@code SluiceServer.start(config)} (package {@code ops}, above this one) starts it with both,
 * as the standalone proxy does; an embedder can also serve {@link #metricSources()} with an exporter of its own.
 */
public final class Sluice implements ProxyControl, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(Sluice.class);

    /** Replaced by config reload with what was applied. */
    private volatile ProxyConfig config;
    private final EventLoopGroup workerGroup;
    private final EventLoopGroup checkGroup;
    private final TransportKind transport;
    private final Backends backends;
    private final FrontendContext context;
    private final SessionRegistry sessions;
    private final Channel serverChannel;
    private final SlowQueryLog slowQueryLog;
    /** {@code null} when {@code metrics.enabled} is false: nothing is counted then. */
    private final MetricSources metricSources;
    private final GracefulShutdown shutdown;
    /** Where {@link #reload()} reads the configuration from; {@code null} for a proxy built in code. */
    private volatile Supplier<ProxyConfig> configSource;
    private final Object shutdownLock = new Object();
    /**
     * Not the shutdown lock: graceful shutdown holds that while sessions drain, and a reload asked meanwhile must be
     * refused at once rather than wait.
     */
    private final Object reloadLock = new Object();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** See {@link Startup}, which makes the parts. */
    Sluice(ProxyConfig config, EventLoopGroup workerGroup, EventLoopGroup checkGroup, TransportKind transport,
            Backends backends, FrontendContext context, Channel serverChannel, TrafficCounters traffic,
            SlowQueryLog slowQueryLog) {
        this.config = config;
        this.workerGroup = workerGroup;
        this.checkGroup = checkGroup;
        this.transport = transport;
        this.backends = backends;
        this.context = context;
        this.sessions = context.registry();
        this.serverChannel = serverChannel;
        this.slowQueryLog = slowQueryLog;
        this.shutdown = new GracefulShutdown(sessions);
        this.metricSources = traffic == null ? null
                : new MetricSources(traffic, workerGroup, sessions, backends::snapshots, shutdown::isDraining,
                        List.copyOf(context.readWriteGroups()), context.statistics(),
                        config.operations().metrics().statistics().metricsTopN(), context.queryRules());
    }

    /**
     * Starts a proxy and returns once it accepts connections.
     *
     * @throws ConfigException when the configuration cannot be served: the port is taken, or no backend can be
     *     reached (an unreachable backend among reachable ones is only logged)
     */
    public static Sluice start(ProxyConfig config) {
        return Startup.start(config);
    }

    // ---- where it runs ----------------------------------------------------------------------------------------

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

    /** The Netty transport in use: {@code epoll}, {@code io_uring} or {@code nio}. */
    public String transport() {
        return transport.name();
    }

    // ---- sessions and backends --------------------------------------------------------------------------------

    @Override
    public int clientConnections() {
        return sessions.open();
    }

    /** Every client session now, each described on its own event loop; for {@code /api/sessions?verbose}. */
    @Override
    public List<SessionSnapshot> sessions() {
        return sessions.snapshots();
    }

    @Override
    public List<BackendSnapshot> backends() {
        return backends.snapshots();
    }

    /** Backend connections open now to the data source {@code name} (idle, lent or logging in). */
    public int backendConnections(String name) {
        return backends.openConnections(name);
    }

    /**
     * Takes a backend out of rotation for maintenance: its sessions finish, no new session goes to it, and its
     * pooled connections close as they come back.
     *
     * @return false when there is no backend of that name
     */
    @Override
    public List<GroupTopology> groups() {
        return context.readWriteGroups().stream().map(group -> new GroupTopology(group.name(),
                group.config().primaryDiscovery().name(), group.config().administration() != null, group.roles(),
                group.waitingForPrimary(), group.topology().primaryChanges(), group.topology().events(),
                group.config().autoFailover().enabled(), group.topology().failovers(true),
                group.topology().fenced())).toList();
    }

    @Override
    public SwitchoverReport switchover(String group, String to, boolean dryRun, boolean force, long timeoutMillis) {
        for (ReadWriteGroup each : context.readWriteGroups()) {
            if (each.name().equals(group)) {
                ProxyConfig running = config();
                return new SwitchoverRun(each, backends.pools()::get, running.dataSources(),
                        Math.max(5_000, running.healthCheck().timeoutMilliseconds()))
                        .run(to, dryRun, force, timeoutMillis);
            }
        }
        return null;
    }

    @Override
    public RejoinReport rejoin(String group, String server) {
        for (ReadWriteGroup each : context.readWriteGroups()) {
            if (each.name().equals(group)) {
                ProxyConfig running = config();
                return new RejoinRun(each, backends.pools()::get, running.dataSources(),
                        Math.max(5_000, running.healthCheck().timeoutMilliseconds())).run(server);
            }
        }
        return null;
    }

    @Override
    public boolean drain(String name) {
        return backends.group().drain(name);
    }

    /** Puts a drained backend back into rotation. */
    @Override
    public boolean undrain(String name) {
        return backends.group().undrain(name);
    }

    /** The backend group, for observers that want to hear of status changes ({@link BackendGroup#addListener}). */
    public BackendGroup backendGroup() {
        return backends.group();
    }

    /** The query rules running now ({@code !QUERY_RULES}); empty when none are configured. */
    @Override
    public QueryRules queryRules() {
        return context.queryRules();
    }

    /** Statement statistics by digest, or {@code null} when {@code statistics} is off. */
    @Override
    public DigestStatistics statistics() {
        return context.statistics();
    }

    /**
     * What a metrics exporter reads (the counters, client counts, backends, draining), or {@code null} when
     * {@code metrics.enabled} is false; {@code SluiceMetrics} serves it as Prometheus text.
     */
    public MetricSources metricSources() {
        return metricSources;
    }

    // ---- config reload ----------------------------------------------------------------------------------------

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
            if (shutdown.isDraining()) {
                throw new IllegalStateException("Sluice is shutting down: no reload");
            }
            ConfigReload reload = new ConfigReload(backends, config, Startup.withDefaultUsers(next));
            ReloadResult result = reload.apply();
            config = reload.effective();
            context.reconfigure(config);
            slowQueryLog.update(config.operations().slowQueryLog());
            return result;
        }
    }

    // ---- traffic capture (docs/traffic-capture.md) ------------------------------------------------------------

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

    // ---- stopping ---------------------------------------------------------------------------------------------

    @Override
    public boolean isDraining() {
        return shutdown.isDraining();
    }

    /**
     * Graceful shutdown with the configured timings ({@code shutdown} in config.yaml); see
     * {@link #shutdownGracefully(Duration, Duration)}.
     */
    public boolean shutdownGracefully() {
        ShutdownConfig settings = config.operations().shutdown();
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
            boolean ended = shutdown.drain(waitBeforeRefusing, closeTimeout);
            close();
            return ended;
        }
    }

    /** Closes the listener, every client session and every backend connection. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        shutdown.markDraining();
        context.capture().stop("proxy stopped", false);
        serverChannel.close().syncUninterruptibly();
        backends.close(2000);
        workerGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        checkGroup.shutdownGracefully(0, 2, TimeUnit.SECONDS).syncUninterruptibly();
        log.info("Sluice on {} stopped", serverChannel.localAddress());
    }
}
