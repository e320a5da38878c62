package io.sluice.frontend;

import io.sluice.backend.BackendPool;
import io.sluice.backend.BackendServerInfo;
import io.sluice.balancer.BackendGroup;
import io.sluice.capture.TrafficCapture;
import io.sluice.config.ProxyConfig;
import io.sluice.protocol.Capabilities;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every client session shares: configuration, users, the backends' face and pools. Built once at start;
 * read from every event loop, so everything here is immutable or atomic.
 */
public final class FrontendContext {
    private final ProxyConfig config;
    private final ProxyUsers users;
    private final BackendServerInfo serverInfo;
    private final BackendGroup group;
    /** By data source name; concurrent so that a config reload can add and remove backends. */
    private final Map<String, BackendPool> pools;
    private final int capabilities;
    private final int mariaDbCapabilities;
    private final AtomicInteger connectionIds = new AtomicInteger();
    private final AtomicInteger clientConnections = new AtomicInteger();
    private final TrafficCapture capture = new TrafficCapture();

    public FrontendContext(ProxyConfig config, BackendServerInfo serverInfo, BackendGroup group,
            Map<String, BackendPool> pools) {
        this.config = config;
        this.users = new ProxyUsers(config.users());
        this.serverInfo = serverInfo;
        this.group = group;
        this.pools = new ConcurrentHashMap<>(pools);
        // Facing a MariaDB, Sluice leaves CLIENT_LONG_PASSWORD ("CLIENT_MYSQL") unset as the server does, so that
        // MariaDB clients read and send the extended capabilities Sluice can relay.
        int offered = Capabilities.PROXY_SUPPORTED & serverInfo.capabilities();
        this.capabilities = serverInfo.hasMariaDbCapabilities() ? offered : offered | Capabilities.CLIENT_LONG_PASSWORD;
        this.mariaDbCapabilities = serverInfo.hasMariaDbCapabilities()
                ? serverInfo.mariaDbCapabilities() & Capabilities.MARIADB_PROXY_SUPPORTED : 0;
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
        String target = pools.get(dataSource).dataSource().jdbcUrl().database();
        return target != null ? target : requested;
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
            return false;
        }
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
