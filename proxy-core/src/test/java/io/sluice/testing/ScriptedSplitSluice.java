package io.sluice.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.backend.SessionKey;
import io.sluice.backend.pool.BackendPool;
import io.sluice.backend.pool.ScriptedDialing;
import io.sluice.balancer.BackendGroup;
import io.sluice.config.CausalReads;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ReadLoadBalancer;
import io.sluice.config.ReadWriteSplittingConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.Transport;
import io.sluice.frontend.FrontendContext;
import io.sluice.frontend.FrontendInitializer;
import io.sluice.frontend.SessionRegistry;
import io.sluice.protocol.Capabilities;
import io.sluice.slowlog.SlowQueryLog;
import io.sluice.testing.MemoryChannel.Packet;
import io.sluice.transport.TransportKind;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A read/write split group on scripted servers: a primary and one replica, each a {@link ScriptedBackend} that greets
 * as MySQL 8.0, behind Sluice's real session core (pools, balancer group, {@link FrontendContext}, client pipeline) on
 * one {@link ScriptedLoop}. Unlike {@link ScriptedSluice}, the servers are played by rules rather than step by step:
 * {@link #pump} answers every command Sluice has sent, on every connection, until it sends no more: logins, Sluice's
 * session trackers and checks, COM_INIT_DB, resets and pings by themselves, anything else by the test's
 * {@link Server#answers} (which fails the test for a command it has no answer to). Each server logs what it received,
 * for the test to assert what ran where.
 *
 * <p>This is how the MySQL side of read/write splitting is tested without a MySQL server (none is installable on the
 * build machines): the bytes are MySQL 8.0's as its protocol documentation and source give them.
 */
public final class ScriptedSplitSluice implements AutoCloseable {
    /** The group's name: a client names it as its database to be split. */
    public static final String GROUP = "app_rw";
    public static final String PRIMARY = "primary";
    public static final String REPLICA = "replica";

    /** How a scripted server answers a statement. */
    @FunctionalInterface
    public interface Answers {
        /**
         * @param deprecateEof whether the connection negotiated CLIENT_DEPRECATE_EOF (how a result set ends)
         * @return the payloads to send, or {@code null} for a statement the test did not expect (it fails)
         */
        List<byte[]> answer(String sql, boolean deprecateEof);
    }

    /** One scripted server of the group, its answers and what it received. */
    public static final class Server {
        private final String name;
        private final ScriptedBackend backend;
        private final Set<ScriptedServerConnection> loggedIn = new HashSet<>();
        /** Every command received, in order: a COM_QUERY's SQL, or {@code COM_0xNN}. */
        private final List<String> received = new ArrayList<>();
        /** The test's answers to statements other than Sluice's session trackers and checks. */
        public Answers answers = (sql, deprecateEof) -> null;

        Server(String name, ScriptedLoop loop) {
            this.name = name;
            this.backend = new ScriptedBackend(loop);
        }

        public ScriptedBackend backend() {
            return backend;
        }

        /** Every command this server received, in order. */
        public List<String> received() {
            return received;
        }

        /** The statements received that start with {@code prefix}. */
        public List<String> received(String prefix) {
            return received.stream().filter(s -> s.startsWith(prefix)).toList();
        }

        /** Answers every command on every connection once; whether there was any. */
        boolean answerAll() {
            boolean any = false;
            for (int i = 0; i < backend.opened(); i++) {
                ScriptedServerConnection connection = backend.connection(i);
                if (!connection.isOpen()) {
                    continue;
                }
                if (loggedIn.add(connection)) {
                    connection.acceptLogin();
                    any = true;
                }
                Packet command;
                while ((command = connection.nextCommand()) != null) {
                    any = true;
                    answer(connection, command);
                }
            }
            return any;
        }

        private void answer(ScriptedServerConnection connection, Packet command) {
            int c = command.first();
            if (c != MySqlWire.COM_QUERY) {
                received.add("COM_0x" + Integer.toHexString(c));
                if (c == MySqlWire.COM_QUIT) {
                    return;
                }
                connection.respond(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)); // INIT_DB, RESET, PING
                return;
            }
            String sql = ScriptedServerConnection.text(command);
            received.add(sql);
            if (sql.startsWith("SET SESSION session_track_system_variables")) {
                connection.respond(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT));
            } else if (sql.equals("SET SESSION TRANSACTION READ ONLY")) {
                connection.respond(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)); // a replica's (decision 110)
            } else if (sql.startsWith("SELECT DATABASE(), @@character_set_client")) {
                connection.respond(connection.sessionCheckResult(sql.contains("session_track"),
                        sql.contains("read_only")));
            } else {
                List<byte[]> answer = answers.answer(sql, connection.deprecateEof());
                assertThat(answer).as("%s's answer to %s", name, sql).isNotNull();
                connection.respond(answer);
            }
        }
    }

    private final ScriptedLoop loop = new ScriptedLoop();
    private final Map<String, Server> servers = new LinkedHashMap<>();
    private final Map<String, BackendPool> pools = new LinkedHashMap<>();
    private final FrontendInitializer initializer;
    private final FrontendContext context;
    private final List<MemoryChannel> clients = new ArrayList<>();

    /**
     * @param causalReads the group's causal reads
     * @param causalTimeout its {@code causalReadsTimeoutMilliseconds}
     */
    public ScriptedSplitSluice(CausalReads causalReads, Duration causalTimeout) {
        PoolingConfig pooling = PoolingConfig.transaction();
        ProxyConfig.Builder builder = ProxyConfig.builder()
                .server(ServerConfig.defaults().withAddress("127.0.0.1"))
                .user(ScriptedSluice.USER, "")
                .pooling(pooling)
                .readWriteSplitting(new ReadWriteSplittingConfig(GROUP, PRIMARY, List.of(REPLICA),
                        ReadWriteSplittingConfig.DEFAULT_TRANSACTIONAL_READ_QUERY_STRATEGY, ReadLoadBalancer.DEFAULT,
                        ReadWriteSplittingConfig.DEFAULT_MAX_REPLICATION_LAG, causalReads, causalTimeout));
        List<DataSourceConfig> dataSources = new ArrayList<>();
        for (String name : List.of(PRIMARY, REPLICA)) {
            // Each server's database is "app"; the group's name stands for it (decision 095).
            DataSourceConfig dataSource = new DataSourceConfig(name, "jdbc:mysql://scripted-" + name + ":3306/app",
                    ScriptedBackend.USER, "", DataSourceConfig.DEFAULT_CONNECTION_TIMEOUT_MILLISECONDS,
                    DataSourceConfig.DEFAULT_IDLE_TIMEOUT_MILLISECONDS,
                    DataSourceConfig.DEFAULT_MAX_LIFETIME_MILLISECONDS, 4, 0);
            dataSources.add(dataSource);
            builder.dataSource(dataSource);
        }
        ProxyConfig config = builder.build();
        SessionKey defaultKey = new SessionKey(Capabilities.PROXY_SUPPORTED & ScriptedBackend.CAPABILITIES,
                MySqlWire.UTF8MB4_GENERAL_CI);
        BackendGroup group = new BackendGroup(config.loadBalancer(), config.healthCheck());
        for (DataSourceConfig dataSource : dataSources) {
            Server server = new Server(dataSource.name(), loop);
            servers.put(dataSource.name(), server);
            BackendPool pool = new BackendPool(dataSource, loop.loop(), TransportKind.of(Transport.NIO),
                    config.server().connBufferSize(), defaultKey, loop.loop());
            pool.usePooling(pooling);
            pool.servesReplica(!dataSource.name().equals(PRIMARY)); // as Backends wires a group (decision 110)
            ScriptedDialing.openWith(pool, server.backend()::open);
            pools.put(dataSource.name(), pool);
            // The replica takes no session of its own (weight 0), as Startup wires a group.
            group.add(dataSource.name(), pool.address(), dataSource.name().equals(PRIMARY) ? 1 : 0, true);
        }
        context = new FrontendContext(config, ScriptedBackend.serverInfo(), group, Map.copyOf(pools),
                new SessionRegistry(config.server().maxConnections(), true), null,
                new SlowQueryLog(config.operations().slowQueryLog()));
        initializer = new FrontendInitializer(context);
    }

    public Server primary() {
        return servers.get(PRIMARY);
    }

    public Server replica() {
        return servers.get(REPLICA);
    }

    public BackendPool pool(String name) {
        return pools.get(name);
    }

    public FrontendContext context() {
        return context;
    }

    /** Both servers answer everything Sluice sent, until it sends nothing more. */
    public void pump() {
        for (int round = 0; round < 1_000; round++) {
            loop.runTasks();
            boolean any = false;
            for (Server server : servers.values()) {
                any |= server.answerAll();
            }
            if (!any) {
                return;
            }
        }
        throw new AssertionError("Sluice and the scripted servers never fell quiet");
    }

    /**
     * A client with {@code capabilities} logs in to the group, the servers playing their part.
     *
     * @param capabilities the client's; {@link ScriptedClient#CAPABILITIES} without CLIENT_SESSION_TRACK for a client
     *     that did not negotiate it
     */
    public ScriptedClient login(int capabilities) {
        MemoryChannel channel = new MemoryChannel(new InetSocketAddress("127.0.0.1", 3307),
                new InetSocketAddress("127.0.0.1", 50_000 + clients.size()), true);
        channel.pipeline().addLast(initializer);
        loop.register(channel);
        loop.runTasks();
        clients.add(channel);
        ScriptedClient client = new ScriptedClient(channel, loop);
        client.sendLogin(ScriptedSluice.USER, GROUP, capabilities);
        pump();
        client.expectOk();
        return client;
    }

    /** The client sends {@code sql}; the servers answer whatever it takes. */
    public void query(ScriptedClient client, String sql) {
        client.send(MySqlWire.comQuery(sql));
        pump();
    }

    @Override
    public void close() {
        try {
            for (MemoryChannel client : clients) {
                client.peerClose();
            }
            pump();
            for (Server server : servers.values()) {
                server.backend().stop();
            }
            for (BackendPool pool : pools.values()) {
                pool.close(1000);
            }
            loop.runTasks();
        } finally {
            loop.close();
        }
    }
}
