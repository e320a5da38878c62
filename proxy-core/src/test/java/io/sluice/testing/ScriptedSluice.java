package io.sluice.testing;

import io.sluice.backend.BackendServerInfo;
import io.sluice.backend.SessionKey;
import io.sluice.backend.pool.BackendPool;
import io.sluice.backend.pool.ScriptedDialing;
import io.sluice.balancer.BackendGroup;
import io.sluice.config.CaptureConfig;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.Transport;
import io.sluice.frontend.FrontendContext;
import io.sluice.frontend.SessionRegistry;
import io.sluice.slowlog.SlowQueryLog;
import io.sluice.frontend.FrontendInitializer;
import io.sluice.protocol.Capabilities;
import io.sluice.transport.TransportKind;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Sluice's session core wired as {@code Sluice.start} wires it (one data source's {@link BackendPool}, the balancer's
 * {@link BackendGroup}, the {@link FrontendContext}, the client pipeline), on one {@link ScriptedLoop} and without a
 * socket: clients are {@link ScriptedClient}s, and the pool opens its connections to a {@link ScriptedBackend}. Every
 * step runs on the test's thread when the test says, so failure paths (a server that dies mid-response, a waiter
 * served at a given moment) can be reached exactly, every time.
 *
 * <p>Only the network peers are scripted. Not covered here: sockets, TLS, and the start-up probe; the tests against
 * MariaDB cover those.
 */
public final class ScriptedSluice implements AutoCloseable {
    /** The proxy user clients log in as; it has no password. */
    public static final String USER = "app";
    /** The data source's name. */
    public static final String DATA_SOURCE = "ds_0";

    private final ScriptedLoop loop = new ScriptedLoop();
    private final ScriptedBackend backend = new ScriptedBackend(loop);
    private final BackendPool pool;
    private final BackendGroup group;
    private final FrontendContext context;
    private final FrontendInitializer initializer;
    private final List<ScriptedClient> clients = new ArrayList<>();
    private int connected;

    private ScriptedSluice(PoolingConfig pooling, int maxPoolSize) {
        this(pooling, maxPoolSize, ScriptedBackend.serverInfo());
    }

    /** @param serverInfo the face of the backend Sluice presents to clients, and whose flavour it acts on */
    private ScriptedSluice(PoolingConfig pooling, int maxPoolSize, BackendServerInfo serverInfo) {
        DataSourceConfig dataSource = new DataSourceConfig(DATA_SOURCE, "jdbc:mysql://"
                + ScriptedBackend.ADDRESS.getHostString() + ":" + ScriptedBackend.ADDRESS.getPort() + "/",
                ScriptedBackend.USER, "", DataSourceConfig.DEFAULT_CONNECTION_TIMEOUT_MILLISECONDS,
                DataSourceConfig.DEFAULT_IDLE_TIMEOUT_MILLISECONDS, DataSourceConfig.DEFAULT_MAX_LIFETIME_MILLISECONDS,
                maxPoolSize, 0);
        ProxyConfig config = ProxyConfig.builder()
                .dataSource(dataSource)
                .server(ServerConfig.defaults().withAddress("127.0.0.1"))
                .user(USER, "")
                .pooling(pooling)
                .build();
        // Tests capture to their own temporary directories: the capture directories are the temporary one.
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        config = config.withOperations(config.operations().withCapture(new CaptureConfig(tmp, tmp)));
        SessionKey defaultKey = new SessionKey(Capabilities.PROXY_SUPPORTED & ScriptedBackend.CAPABILITIES,
                MySqlWire.UTF8MB4_GENERAL_CI);
        pool = new BackendPool(dataSource, loop.loop(), TransportKind.of(Transport.NIO),
                config.server().connBufferSize(), defaultKey, loop.loop());
        pool.usePooling(pooling);
        ScriptedDialing.openWith(pool, backend::open);
        group = new BackendGroup(config.loadBalancer(), config.healthCheck());
        group.add(DATA_SOURCE, pool.address(), dataSource.weight(), true);
        context = new FrontendContext(config, serverInfo, group, Map.of(DATA_SOURCE, pool),
                new SessionRegistry(config.server().maxConnections(), pooling.transactionPooling()), null,
                new SlowQueryLog(config.operations().slowQueryLog()));
        initializer = new FrontendInitializer(context);
    }

    /** Session pooling, up to {@code maxPoolSize} backend connections. */
    public static ScriptedSluice sessionPooling(int maxPoolSize) {
        return new ScriptedSluice(PoolingConfig.defaults(), maxPoolSize);
    }

    /** Transaction pooling with the default prepared-statement cache, up to {@code maxPoolSize} connections. */
    public static ScriptedSluice transactionPooling(int maxPoolSize) {
        return new ScriptedSluice(PoolingConfig.transaction(), maxPoolSize);
    }

    /**
     * Transaction pooling in front of a server Sluice takes for MariaDB (its greeting leaves CLIENT_LONG_PASSWORD
     * unset): user variables are then read back and carried instead of pinning. The scripted connections still greet
     * as they always do.
     */
    public static ScriptedSluice transactionPoolingOnMariaDb(int maxPoolSize) {
        return new ScriptedSluice(PoolingConfig.transaction(), maxPoolSize, new BackendServerInfo(
                "10.11.19-MariaDB-scripted", ScriptedBackend.CAPABILITIES & ~Capabilities.CLIENT_LONG_PASSWORD,
                MySqlWire.UTF8MB4_GENERAL_CI));
    }

    /** A client connects: Sluice's client pipeline greets it. */
    public ScriptedClient connect() {
        int number = connected++;
        clients.removeIf(client -> !client.isOpen()); // a fuzz test's hundred thousand clients: keep the open ones
        // Ports wrap: a long fuzz run connects more clients than there are ports; an address is reused long after.
        MemoryChannel channel = new MemoryChannel(new InetSocketAddress("127.0.0.1", 3307),
                new InetSocketAddress("127.0.0.1", 50_000 + number % 15_000), true);
        channel.pipeline().addLast(initializer);
        loop.register(channel);
        loop.runTasks();
        ScriptedClient client = new ScriptedClient(channel, loop);
        clients.add(client);
        return client;
    }

    /**
     * A client logs in to {@code schema}; the backend connection the login takes (Sluice checks the schema on the
     * server) is a new one, logged in by the script, unless the pool has an idle one.
     */
    public ScriptedClient connectAndLogin(String schema) {
        int before = backend.opened();
        ScriptedClient client = connect().sendLogin(USER, schema);
        if (backend.opened() > before) {
            backend.next().login();
        }
        client.expectOk();
        return client;
    }

    public ScriptedBackend backend() {
        return backend;
    }

    public ScriptedLoop loop() {
        return loop;
    }

    /** The data source's pool: its idle, open and waiting counts are what tests check. */
    public BackendPool pool() {
        return pool;
    }

    /** The balancer's view of the one backend: whether passive health has taken it down. */
    public BackendGroup group() {
        return group;
    }

    /** What sessions share; its {@code capture()} starts traffic captures. */
    public FrontendContext context() {
        return context;
    }

    /** Clients vanish, the server stops, the pool closes and the loop lets go: nothing of the test is left open. */
    @Override
    public void close() {
        try {
            for (ScriptedClient client : clients) {
                client.channel().peerClose();
            }
            loop.runTasks();
            backend.stop();
            pool.close(1000);
            loop.runTasks();
        } finally {
            loop.close();
        }
    }
}
