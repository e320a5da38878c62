package io.sluice.frontend;

import io.netty.util.concurrent.EventExecutor;
import io.sluice.backend.BackendServerInfo;
import io.sluice.backend.pool.BackendPool;
import io.sluice.balancer.BackendGroup;
import io.sluice.capture.TrafficCapture;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.metrics.CommandObserver;
import io.sluice.metrics.TrafficCounters;
import io.sluice.pooling.PinReason;
import io.sluice.protocol.Capabilities;
import io.sluice.slowlog.SlowQueryLog;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What every client session shares: configuration, users, the backends' face and pools. Built once at start;
 * read from every event loop, so everything here is immutable or atomic.
 */
public final class FrontendContext {
    /** Replaced on config reload (databaseName, users); the rest of what sessions read from it does not change. */
    private volatile ProxyConfig config;
    /** Replaced on config reload; a session checks a login against the users of that moment. */
    private volatile ProxyUsers users;
    private final BackendServerInfo serverInfo;
    private final BackendGroup group;
    /** By data source name; concurrent so that a config reload can add and remove backends. */
    private final Map<String, BackendPool> pools;
    private final int capabilities;
    private final int mariaDbCapabilities;
    private final AtomicInteger connectionIds = new AtomicInteger();
    private final AtomicInteger clientConnections = new AtomicInteger();
    private final TrafficCapture capture = new TrafficCapture();

    /** Per-loop command and byte counters; {@code null} when metrics are off. */
    private final TrafficCounters traffic;
    private final SlowQueryLog slowQueryLog;
    /** Each loop's {@link CommandObserver}, made once per loop. */
    private final Map<EventExecutor, CommandObserver> observers = new ConcurrentHashMap<>();
    /** Logged-in or logging-in sessions, for graceful shutdown and {@code /api/sessions}. */
    private final Set<ClientSession> sessions = ConcurrentHashMap.newKeySet();
    /** Set once graceful shutdown refuses new connections. */
    private volatile boolean closing;
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong rejectedTooMany = new AtomicLong();
    private final AtomicLong rejectedClosing = new AtomicLong();
    private final AtomicLong authFailures = new AtomicLong();
    /** Transaction pooling: sessions pinned, by {@link PinReason} ordinal. Counted per pin, never per command. */
    private final AtomicLongArray pins = new AtomicLongArray(PinReason.values().length);
    /** Session or transaction pooling: fixed at start (a reload that changes it needs a restart). */
    private final PoolingConfig pooling;

    public FrontendContext(ProxyConfig config, BackendServerInfo serverInfo, BackendGroup group,
            Map<String, BackendPool> pools) {
        this(config, serverInfo, group, pools, null, new SlowQueryLog(config.operations().slowQueryLog()));
    }

    /**
     * @param traffic per-loop counters, or {@code null} with metrics off
     * @param slowQueryLog the slow-query log (it may be switched off)
     */
    public FrontendContext(ProxyConfig config, BackendServerInfo serverInfo, BackendGroup group,
            Map<String, BackendPool> pools, TrafficCounters traffic, SlowQueryLog slowQueryLog) {
        this.traffic = traffic;
        this.slowQueryLog = slowQueryLog;
        this.config = config;
        this.pooling = config.pooling();
        this.users = new ProxyUsers(config.users());
        this.serverInfo = serverInfo;
        this.group = group;
        this.pools = new ConcurrentHashMap<>(pools);
        // Facing a MariaDB, Sluice leaves CLIENT_LONG_PASSWORD ("CLIENT_MYSQL") unset as the server does, so that
        // MariaDB clients read and send the extended capabilities Sluice can relay.
        int offered = Capabilities.PROXY_SUPPORTED & serverInfo.capabilities();
        this.capabilities = serverInfo.hasMariaDbCapabilities() ? offered : offered | Capabilities.CLIENT_LONG_PASSWORD;
        this.mariaDbCapabilities = serverInfo.hasMariaDbCapabilities()
                ? Capabilities.mariaDbOffered(serverInfo.mariaDbCapabilities(), pooling.transactionPooling()) : 0;
    }

    public ProxyConfig config() {
        return config;
    }

    ProxyUsers users() {
        return users;
    }

    BackendServerInfo serverInfo() {
        return serverInfo;
    }

    BackendGroup group() {
        return group;
    }

    BackendPool pool(String dataSource) {
        return pools.get(dataSource);
    }

    /** The capability flags offered to clients: what Sluice relays, less what the backend lacks. */
    int capabilities() {
        return capabilities;
    }

    /** The MariaDB extended capabilities offered to clients (0 facing MySQL). */
    int mariaDbCapabilities() {
        return mariaDbCapabilities;
    }

    String serverVersion() {
        String configured = config.server().serverVersion();
        return configured != null ? configured : serverInfo.serverVersion();
    }

    /**
     * The schema a session on {@code dataSource} gets when it asks for {@code requested}: {@code databaseName} maps
     * to the database in that data source's URL; every other name passes through.
     */
    String resolveSchema(String requested, String dataSource) {
        if (requested == null || !requested.equals(config.databaseName())) {
            return requested;
        }
        String target = pools.get(dataSource).urlDatabase(); // not dataSource().jdbcUrl(): that parses per login
        return target != null ? target : requested;
    }

    /** Applies a reloaded configuration: users and databaseName take effect for the next login. */
    public void reconfigure(ProxyConfig newConfig) {
        this.users = new ProxyUsers(newConfig.users());
        this.config = newConfig;
    }

    /** Makes a data source's pool known to sessions (config reload added it). */
    public void addPool(String name, BackendPool pool) {
        pools.put(name, pool);
    }

    /**
     * Forgets a removed data source's pool. Sessions still on it keep their own reference to its per-loop part; only
     * lookups by name stop finding it.
     */
    public void removePool(String name) {
        pools.remove(name);
    }

    /** Where a loop's sessions report their commands: its counters (none with metrics off) and the slow-query log. */
    CommandObserver commandObserver(EventExecutor loop) {
        return observers.computeIfAbsent(loop,
                l -> new CommandObserver(traffic == null ? null : traffic.forLoop(l), slowQueryLog));
    }

    /** Graceful shutdown: refuse new connections and close every session at its first idle moment. */
    public void startClosing() {
        closing = true;
        for (ClientSession session : sessions) {
            session.closeWhenIdle();
        }
    }

    boolean isClosing() {
        return closing;
    }

    void sessionOpened(ClientSession session) {
        sessions.add(session);
        if (closing) {
            session.closeWhenIdle(); // raced with startClosing
        }
    }

    void sessionClosed(ClientSession session) {
        sessions.remove(session);
    }

    /** The sessions open now, for the admin API. */
    public List<ClientSession> sessions() {
        return List.copyOf(sessions);
    }

    void refusedClosing() {
        rejectedClosing.incrementAndGet();
    }

    /** Session or transaction pooling, as Sluice started with. */
    public PoolingConfig pooling() {
        return pooling;
    }

    void pinned(PinReason reason) {
        pins.incrementAndGet(reason.ordinal());
    }

    /** Sessions pinned to their backend connection for {@code reason}, since start (transaction pooling). */
    public long pins(PinReason reason) {
        return pins.get(reason.ordinal());
    }

    void authenticationFailed() {
        authFailures.incrementAndGet();
    }

    /** Client connections admitted, since start. */
    public long acceptedConnections() {
        return accepted.get();
    }

    /** Client connections refused because of {@code server.maxConnections}, since start. */
    public long rejectedTooManyConnections() {
        return rejectedTooMany.get();
    }

    /** Client connections refused because Sluice was shutting down, since start. */
    public long rejectedWhileClosing() {
        return rejectedClosing.get();
    }

    /** Logins refused for a wrong password or unknown user, since start. */
    public long authenticationFailures() {
        return authFailures.get();
    }

    int nextConnectionId() {
        return connectionIds.incrementAndGet() & 0x7FFFFFFF;
    }

    /** Counts a new client; false when {@code server.maxConnections} is reached (the count is then unchanged). */
    boolean admitClient() {
        int max = config.server().maxConnections();
        int now = clientConnections.incrementAndGet();
        if (max > 0 && now > max) {
            clientConnections.decrementAndGet();
            rejectedTooMany.incrementAndGet();
            return false;
        }
        accepted.incrementAndGet();
        return true;
    }

    void clientClosed() {
        clientConnections.decrementAndGet();
    }

    /** Traffic capture: sessions read its {@link TrafficCapture#run()} once per command. */
    public TrafficCapture capture() {
        return capture;
    }

    /** Client connections currently open. */
    public int clientConnections() {
        return clientConnections.get();
    }
}
