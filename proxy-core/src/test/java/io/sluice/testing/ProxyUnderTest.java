package io.sluice.testing;

import io.sluice.Sluice;
import io.sluice.config.AdminConfig;
import io.sluice.config.CaptureConfig;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.Transport;
import io.sluice.config.UserConfig;
import io.sluice.ops.SluiceServer;
import io.sluice.ops.metrics.SluiceMetrics;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A Sluice proxy started in-process on a free port in front of {@link TestMariaDb}, with two proxy users and the
 * server's root account as the data source. It is started as the standalone proxy is ({@link SluiceServer}), so its
 * metrics are there too, and its admin port when the settings ask for one.
 *
 * <p>With {@code -Dsluice.test.direct=true} nothing is started: URLs point straight at MariaDB and the "proxy users"
 * are real MariaDB accounts with the same passwords. The same tests then run against the server alone, which shows
 * that what they assert is what MySQL clients really see.
 *
 * <p>A test class that uses one proxy for all its tests registers a {@link SluiceExtension}, which is a
 * {@code ProxyUnderTest} that JUnit starts before the class and closes after it; a test that needs a proxy of its
 * own starts one with {@link Builder#start()} in a try-with-resources.
 */
public class ProxyUnderTest implements AutoCloseable {

    public static final String USER = "app";
    public static final String PASSWORD = "app-secret";
    public static final String USER2 = "app2";
    public static final String PASSWORD2 = "app2-secret";

    /** In direct mode the proxy users exist on the shared server under these names, out of other engineers' way. */
    private static final String DIRECT_USER = "sluice_app";
    private static final String DIRECT_USER2 = "sluice_app2";

    private TestMariaDb mariaDb;
    /** Sluice with its metrics and, when the settings ask, its admin port; {@code null} in direct mode. */
    private SluiceServer server;
    private int maxPacketSize;

    private ProxyUnderTest(TestMariaDb mariaDb, SluiceServer server, int maxPacketSize) {
        this.mariaDb = mariaDb;
        this.server = server;
        this.maxPacketSize = maxPacketSize;
    }

    /** Not started yet: {@link SluiceExtension} {@linkplain #takeOver takes over} a started one. */
    ProxyUnderTest() {
    }

    /** Becomes {@code started}, which then belongs to this instance (its {@link #close} closes it). */
    void takeOver(ProxyUnderTest started) {
        this.mariaDb = started.mariaDb;
        this.server = started.server;
        this.maxPacketSize = started.maxPacketSize;
    }

    /** Whether the endpoint is MariaDB itself; fails when nothing was started, rather than pass for direct mode. */
    private boolean direct() {
        if (mariaDb == null) {
            throw new IllegalStateException("not started: a SluiceExtension starts before the tests of the class"
                    + " whose static field it is (with @RegisterExtension), and is closed after them");
        }
        return server == null;
    }

    /** True when the suite runs against MariaDB directly ({@code -Dsluice.test.direct=true}). */
    public static boolean isDirect() {
        return Boolean.getBoolean("sluice.test.direct");
    }

    /** A proxy with the default settings. */
    public static ProxyUnderTest start() {
        return builder().start();
    }

    public static Builder builder() {
        return new Builder();
    }

    public String host() {
        return TestMariaDb.HOST;
    }

    public int port() {
        return direct() ? mariaDb.port() : server.sluice().port();
    }

    /** The running proxy; {@code null} in direct mode. */
    public Sluice sluice() {
        return direct() ? null : server.sluice();
    }

    /** The admin API's port: -1 unless the settings turned it on ({@code admin(...)}); fails in direct mode. */
    public int adminPort() {
        requireSluice();
        return server.adminPort();
    }

    /** The Prometheus metrics, {@code null} when the settings turned them off; fails in direct mode. */
    public SluiceMetrics metrics() {
        requireSluice();
        return server.metrics();
    }

    private void requireSluice() {
        if (direct()) {
            throw new IllegalStateException("direct mode: there is no Sluice (mark the class sluiceOnly)");
        }
    }

    /** The proxy user clients log in as. */
    public String user() {
        return direct() ? DIRECT_USER : USER;
    }

    public String password() {
        return PASSWORD;
    }

    /** A second proxy user, for COM_CHANGE_USER. */
    public String user2() {
        return direct() ? DIRECT_USER2 : USER2;
    }

    public String password2() {
        return PASSWORD2;
    }

    /** The largest command the endpoint accepts: Sluice's {@code maxPacketSize}, or -1 in direct mode. */
    public int maxPacketSize() {
        return direct() ? -1 : maxPacketSize;
    }

    public TestMariaDb mariaDb() {
        direct();
        return mariaDb;
    }

    public String jdbcUrlMariaDb(String db, String extraParams) {
        return JdbcDriver.MARIADB.url(host(), port(), db, extraParams);
    }

    public String jdbcUrlMySql(String db, String extraParams) {
        return JdbcDriver.MYSQL.url(host(), port(), db, extraParams);
    }

    public String jdbcUrl(JdbcDriver driver, String db, String extraParams) {
        return driver.url(host(), port(), db, extraParams);
    }

    /** A connection through the proxy as {@link #user()}; the caller closes it. */
    public Connection connect(JdbcDriver driver, String db, String extraParams) throws SQLException {
        return driver.connect(jdbcUrl(driver, db, extraParams), user(), password());
    }

    /** A raw client logged in as {@link #user()} to {@code db} (may be null); the caller closes it. */
    public RawMySqlClient rawLogin(String db) throws IOException {
        return RawMySqlClient.login(host(), port(), user(), password(), db);
    }

    /** Both paths for the same scenario: MariaDB as root, and this endpoint as the proxy user. */
    public Endpoints endpoints() {
        return new Endpoints(this);
    }

    @Override
    public void close() {
        if (server != null) {
            server.close();
        }
    }

    /** Settings for proxy variants; everything not set keeps Sluice's default. */
    public static final class Builder {
        private int maxConnections = ServerConfig.DEFAULT_MAX_CONNECTIONS;
        private int maxPacketSize = ServerConfig.DEFAULT_MAX_PACKET_SIZE;
        private int maxPoolSize = DataSourceConfig.DEFAULT_MAX_POOL_SIZE;
        private int minPoolSize = DataSourceConfig.DEFAULT_MIN_POOL_SIZE;
        private long connectionTimeoutMillis = 10_000;
        private int workerThreads = 2;
        private String backendUrl;
        private UnaryOperator<ServerConfig> server = UnaryOperator.identity();
        private UnaryOperator<DataSourceConfig> dataSource = UnaryOperator.identity();
        private final List<UserConfig> extraUsers = new ArrayList<>();
        private PoolingConfig pooling = PoolingConfig.defaults();
        private UnaryOperator<ProxyConfig> config = UnaryOperator.identity();

        private Builder() {
        }

        public Builder maxConnections(int value) {
            this.maxConnections = value;
            return this;
        }

        /** Event-loop threads (2 unless set): 1 puts every session on the same loop. */
        public Builder workerThreads(int value) {
            this.workerThreads = value;
            return this;
        }

        public Builder maxPacketSize(int value) {
            this.maxPacketSize = value;
            return this;
        }

        public Builder maxPoolSize(int value) {
            this.maxPoolSize = value;
            this.minPoolSize = Math.min(minPoolSize, value);
            return this;
        }

        public Builder connectionTimeoutMillis(long value) {
            this.connectionTimeoutMillis = value;
            return this;
        }

        /** Points the data source somewhere else, e.g. a closed port. */
        public Builder backendUrl(String url) {
            this.backendUrl = url;
            return this;
        }

        /** Changes the server section after the other settings (TLS, timeouts, server version...). */
        public Builder server(UnaryOperator<ServerConfig> change) {
            UnaryOperator<ServerConfig> before = server;
            this.server = s -> change.apply(before.apply(s));
            return this;
        }

        /** Changes the data source after the other settings (TLS to the backend...). */
        public Builder dataSource(UnaryOperator<DataSourceConfig> change) {
            this.dataSource = change;
            return this;
        }

        /** Session pooling (the default) or transaction pooling. */
        public Builder pooling(PoolingConfig value) {
            this.pooling = value;
            return this;
        }

        /** TRANSACTION pooling with the default prepared-statement cache. */
        public Builder transactionPooling() {
            return pooling(PoolingConfig.transaction());
        }

        /** Adds a proxy user besides {@link #USER} and {@link #USER2}. */
        public Builder user(UserConfig user) {
            extraUsers.add(user);
            return this;
        }

        /** Changes the whole configuration last, for what has no setter here (operations: metrics, slow log...). */
        public Builder config(UnaryOperator<ProxyConfig> change) {
            UnaryOperator<ProxyConfig> before = config;
            this.config = c -> change.apply(before.apply(c));
            return this;
        }

        /** Turns the admin API on with {@code admin} (e.g. {@code AdminConfig.on("127.0.0.1", 0, token)}). */
        public Builder admin(AdminConfig admin) {
            return config(c -> c.withOperations(c.operations().withAdmin(admin)));
        }

        /** The configuration {@link #start()} would use. */
        public ProxyConfig config() {
            TestMariaDb mariaDb = TestMariaDb.get();
            String url = backendUrl != null ? backendUrl : JdbcDriver.MYSQL.url(mariaDb.host(), mariaDb.port(), null, "");
            ServerConfig defaults = new ServerConfig("127.0.0.1", 0, workerThreads,
                    ServerConfig.DEFAULT_CONN_BUFFER_SIZE, maxConnections, null, maxPacketSize, Transport.AUTO);
            ProxyConfig.Builder builder = ProxyConfig.builder()
                    .dataSource(dataSource.apply(new DataSourceConfig("ds_0", url, TestMariaDb.ROOT_USER,
                            TestMariaDb.ROOT_PASSWORD, connectionTimeoutMillis,
                            DataSourceConfig.DEFAULT_IDLE_TIMEOUT_MILLISECONDS,
                            DataSourceConfig.DEFAULT_MAX_LIFETIME_MILLISECONDS, maxPoolSize, minPoolSize)))
                    .server(server.apply(defaults))
                    .pooling(pooling)
                    .user(USER, PASSWORD)
                    .user(USER2, PASSWORD2);
            extraUsers.forEach(builder::user);
            // Tests capture to their own temporary directories: the capture directories are the temporary one.
            Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
            ProxyConfig built = builder.build();
            built = built.withOperations(built.operations().withCapture(new CaptureConfig(tmp, tmp)));
            return config.apply(built);
        }

        /** Starts Sluice, or in direct mode makes sure the MariaDB accounts standing in for the proxy users exist. */
        public ProxyUnderTest start() {
            TestMariaDb mariaDb = TestMariaDb.get();
            if (isDirect()) {
                ensureDirectUsers(mariaDb);
                return new ProxyUnderTest(mariaDb, null, maxPacketSize);
            }
            return new ProxyUnderTest(mariaDb, SluiceServer.start(config()), maxPacketSize);
        }

        private static volatile boolean directUsersReady;

        private static synchronized void ensureDirectUsers(TestMariaDb mariaDb) {
            if (!directUsersReady) {
                mariaDb.ensureUser(DIRECT_USER, PASSWORD);
                mariaDb.ensureUser(DIRECT_USER2, PASSWORD2);
                directUsersReady = true;
            }
        }
    }
}
