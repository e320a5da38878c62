package io.sluice.config;

import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads each section of config.yaml into the record it configures: {@code dataSources.<name>} into a {@link
 * DataSourceConfig}, {@code server} into a {@link ServerConfig}, and so on. The keys a reader asks its {@link
 * YamlSection} for are the keys the section accepts, so a key is added to the format by reading it here, and
 * docs/configuration.md is the only other place that names it. A key left out of the file takes the record's
 * default.
 */
final class SectionReaders {

    /** The conf dir: where relative file names are read from and generated certificates go; {@code null}: none. */
    private final Path baseDirectory;

    SectionReaders(Path baseDirectory) {
        this.baseDirectory = baseDirectory;
    }

    DataSourceConfig dataSource(String name, YamlSection section) {
        String url = section.requiredString("url", "a JDBC URL such as jdbc:mysql://127.0.0.1:3306/test");
        String username = section.requiredString("username", "the backend user name");
        String password = secret(section, "password", "passwordFile", "");
        long connectionTimeout = section.milliseconds("connectionTimeoutMilliseconds",
                DataSourceConfig.DEFAULT_CONNECTION_TIMEOUT_MILLISECONDS);
        long idleTimeout = section.milliseconds("idleTimeoutMilliseconds",
                DataSourceConfig.DEFAULT_IDLE_TIMEOUT_MILLISECONDS);
        long maxLifetime = section.milliseconds("maxLifetimeMilliseconds",
                DataSourceConfig.DEFAULT_MAX_LIFETIME_MILLISECONDS);
        int maxPoolSize = section.integer("maxPoolSize", DataSourceConfig.DEFAULT_MAX_POOL_SIZE);
        int minPoolSize = section.integer("minPoolSize", DataSourceConfig.DEFAULT_MIN_POOL_SIZE);
        int maxPoolSizePerAccount = section.integer("maxPoolSizePerAccount", 0);
        int weight = section.integer("weight", DataSourceConfig.DEFAULT_WEIGHT);
        boolean drain = section.flag("drain", false);
        SslMode sslMode = section.oneOf("sslMode", SslMode.class, DataSourceConfig.DEFAULT_SSL_MODE);
        Path sslCa = section.file("sslCa", baseDirectory);
        return section.done(() -> new DataSourceConfig(name, url, username, password, connectionTimeout, idleTimeout,
                maxLifetime, maxPoolSize, minPoolSize, weight, drain, sslMode, sslCa, maxPoolSizePerAccount));
    }

    /** A group's {@code administration} or {@code replication} account: {username, password | passwordFile}. */
    ServerAccount account(YamlSection section) {
        String username = section.requiredString("username", "the account's user name");
        String password = secret(section, "password", "passwordFile", "");
        return section.done(() -> new ServerAccount(username, password));
    }

    /** What a file without a {@code server} section gets: the defaults, with certificates kept in the conf dir. */
    ServerConfig defaultServer() {
        return ServerConfig.defaults().withTls(defaultTls());
    }

    ServerConfig server(YamlSection section) {
        ServerConfig defaults = ServerConfig.defaults();
        String address = section.string("address", defaults.address());
        int port = section.integer("port", defaults.port());
        int workerThreads = section.integer("workerThreads", defaults.workerThreads());
        int connBufferSize = section.integer("connBufferSize", defaults.connBufferSize());
        int maxConnections = section.integer("maxConnections", defaults.maxConnections());
        String serverVersion = section.string("serverVersion", defaults.serverVersion());
        int maxPacketSize = section.integer("maxPacketSize", defaults.maxPacketSize());
        Transport transport = section.oneOf("transport", Transport.class, defaults.transport());
        long handshakeTimeout = section.milliseconds("handshakeTimeoutMilliseconds",
                defaults.handshakeTimeoutMilliseconds());
        long idleTimeout = section.milliseconds("idleTimeoutMilliseconds", defaults.idleTimeoutMilliseconds());
        long netReadTimeout = section.milliseconds("netReadTimeoutMilliseconds",
                defaults.netReadTimeoutMilliseconds());
        LoginBackoff loginBackoff = section.section("loginBackoff", defaults.loginBackoff(),
                SectionReaders::loginBackoff);
        TlsConfig tls = section.section("tls", defaultTls(), this::tls);
        ProxyProtocol proxyProtocol = section.section("proxyProtocol", ProxyProtocol.off(),
                SectionReaders::proxyProtocol);
        return section.done(() -> new ServerConfig(address, port, workerThreads, connBufferSize, maxConnections,
                serverVersion, maxPacketSize, transport, tls, handshakeTimeout, idleTimeout, loginBackoff,
                netReadTimeout, proxyProtocol));
    }

    private static ProxyProtocol proxyProtocol(YamlSection section) {
        List<String> trusted = section.strings("trustedNetworks", List.of());
        return section.done(() -> new ProxyProtocol(trusted));
    }

    private static LoginBackoff loginBackoff(YamlSection section) {
        LoginBackoff defaults = LoginBackoff.defaults();
        int afterFailures = section.integer("afterFailures", defaults.afterFailures());
        long delay = section.milliseconds("delayMilliseconds", defaults.delayMilliseconds());
        // A first delay above the default ceiling, written alone, must not be refused for exceeding a ceiling the
        // file never set.
        long maxDelay = section.milliseconds("maxDelayMilliseconds",
                Math.max(delay, defaults.maxDelayMilliseconds()));
        return section.done(() -> new LoginBackoff(afterFailures, delay, maxDelay));
    }

    private TlsConfig defaultTls() {
        return TlsConfig.defaults().withGeneratedDirectory(baseDirectory);
    }

    private TlsConfig tls(YamlSection section) {
        TlsConfig defaults = TlsConfig.defaults();
        boolean enabled = section.flag("enabled", defaults.enabled());
        Path certFile = section.file("certFile", baseDirectory);
        Path keyFile = section.file("keyFile", baseDirectory);
        Path caFile = section.file("caFile", baseDirectory);
        TlsConfig.VerifyClient verifyClient = section.oneOf("verifyClient", TlsConfig.VerifyClient.class,
                defaults.verifyClient());
        boolean requireSecureTransport = section.flag("requireSecureTransport", defaults.requireSecureTransport());
        TlsConfig.Provider provider = section.oneOf("provider", TlsConfig.Provider.class, defaults.provider());
        List<String> protocols = section.strings("protocols", defaults.protocols());
        return section.done(() -> new TlsConfig(enabled, certFile, keyFile, caFile, verifyClient,
                requireSecureTransport, provider, protocols, baseDirectory));
    }

    /**
     * A secret written in the file under {@code key}, or read from the file named under {@code fileKey} (relative to
     * the conf dir), such as a Kubernetes Secret or a systemd credential mounted as a file; {@code absent} when
     * neither is there. Both at once are refused: which one wins would be a guess.
     */
    private String secret(YamlSection section, String key, String fileKey, String absent) {
        String written = section.string(key, null);
        String fromFile = section.fileText(fileKey, baseDirectory);
        if (written != null && fromFile != null) {
            section.refuse(fileKey, "set together with " + key + " (expected: one of the two)");
        }
        return written != null ? written : fromFile != null ? fromFile : absent;
    }

    /**
     * The {@code authority} section: Sluice's own users (a list), or {@code users: FROM_BACKEND}, the server's
     * accounts, with how often they are read ({@code refreshMilliseconds}, {@code minRefreshIntervalMilliseconds}).
     */
    Authority authority(YamlSection section) {
        boolean fromServer = section.isScalar("users");
        // Accepted so that ShardingSphere's server.yaml section pastes in unchanged: Sluice authorises nothing
        // itself, the server's account does.
        section.ignore("privilege");
        if (!fromServer) {
            Map<String, Integer> lines = new HashMap<>();
            List<UserConfig> users = section.list("users", "a list of {user: name@host, password: ...}, or "
                    + FROM_BACKEND, item -> user(item, lines));
            section.done();
            return new Authority(users, null);
        }
        String source = section.string("users", null);
        if (!FROM_BACKEND.equals(source)) {
            throw section.invalid("users", "a list of {user: name@host, password: ...}, or " + FROM_BACKEND);
        }
        long refresh = section.milliseconds("refreshMilliseconds", ServerAccountsConfig.DEFAULT_REFRESH_MILLISECONDS);
        long minInterval = section.milliseconds("minRefreshIntervalMilliseconds",
                ServerAccountsConfig.DEFAULT_MIN_REFRESH_INTERVAL_MILLISECONDS);
        return section.done(() -> new Authority(List.of(), new ServerAccountsConfig(refresh, minInterval)));
    }

    /** {@code authority.users}' value that takes the accounts from the server. */
    static final String FROM_BACKEND = "FROM_BACKEND";

    /** What the {@code authority} section says: Sluice's users, or the server's accounts ({@code fromServer}). */
    record Authority(List<UserConfig> users, ServerAccountsConfig fromServer) {
        static final Authority NONE = new Authority(List.of(), null);
    }

    /** One {@code authority.users} item; {@code lines} holds the line of each user@host read so far. */
    private UserConfig user(YamlSection item, Map<String, Integer> lines) {
        String name = item.requiredString("user", "a user name, or name@host");
        String password = secret(item, "password", "passwordFile", "");
        String passwordHash = item.string("passwordHash", null);
        int maxConnections = item.integer("maxConnections", 0);
        String backendUser = item.string("backendUser", null);
        String backendPassword = secret(item, "backendPassword", "backendPasswordFile", null);
        // The record's refusals never quote a hash: it is as good as a password to whoever runs a dictionary at it.
        UserConfig user = item.done(() -> UserConfig.parse(name, password, passwordHash, maxConnections, backendUser,
                backendPassword));
        if (user.user().isEmpty()) {
            throw item.invalid("user", "a user name, or name@host");
        }
        String identity = user.user() + "@" + user.host();
        Integer first = lines.putIfAbsent(identity, item.line("user"));
        if (first != null) {
            throw item.invalid("user", "each user once; " + identity + " is also at line " + first);
        }
        return user;
    }

    static Policy loadBalancer(YamlSection section) {
        Policy policy = section.oneOf("type", Policy.class, ProxyConfig.DEFAULT_LOAD_BALANCER);
        section.done();
        return policy;
    }

    static HealthCheckConfig healthCheck(YamlSection section) {
        long interval = section.milliseconds("intervalMilliseconds", HealthCheckConfig.DEFAULT_INTERVAL_MILLISECONDS);
        long timeout = section.milliseconds("timeoutMilliseconds", HealthCheckConfig.DEFAULT_TIMEOUT_MILLISECONDS);
        int rise = section.integer("rise", HealthCheckConfig.DEFAULT_RISE);
        int fall = section.integer("fall", HealthCheckConfig.DEFAULT_FALL);
        return section.done(() -> new HealthCheckConfig(interval, timeout, rise, fall));
    }

    /**
     * {@code pooling: {mode: transaction, preparedStatementCacheSize: 256, sessionMovesPerSecond: 100,
     * moveGtidWaitMilliseconds: 0}}.
     */
    static PoolingConfig pooling(YamlSection section) {
        PoolingMode mode = section.oneOf("mode", PoolingMode.class, PoolingMode.SESSION);
        int cacheSize = section.integer("preparedStatementCacheSize",
                PoolingConfig.DEFAULT_PREPARED_STATEMENT_CACHE_SIZE);
        int movesPerSecond = section.integer("sessionMovesPerSecond", PoolingConfig.DEFAULT_SESSION_MOVES_PER_SECOND);
        int moveGtidWait = section.integer("moveGtidWaitMilliseconds", 0);
        return section.done(() -> new PoolingConfig(mode, cacheSize, movesPerSecond, moveGtidWait));
    }

    // ---- operations: admin, metrics, shutdown, slowQueryLog, reload -------------------------------
    // enabled is true in a section that is there: whoever writes "slowQueryLog:" wants the log.

    AdminConfig admin(YamlSection section) {
        boolean enabled = section.flag("enabled", true);
        String address = section.string("address", AdminConfig.DEFAULT_ADDRESS);
        int port = section.integer("port", AdminConfig.DEFAULT_PORT);
        String token = secret(section, "token", "tokenFile", null);
        String readToken = secret(section, "readToken", "readTokenFile", null);
        return section.done(() -> new AdminConfig(enabled, address, port, token, readToken));
    }

    static MetricsConfig metrics(YamlSection section) {
        boolean enabled = section.flag("enabled", true);
        return section.done(() -> new MetricsConfig(enabled));
    }

    /** {@code statistics: {enabled, maxDigests, metricsTopN}}; {@code statistics: off} is read by the caller. */
    static StatisticsConfig statistics(YamlSection section) {
        boolean enabled = section.flag("enabled", true);
        int maxDigests = section.integer("maxDigests", StatisticsConfig.DEFAULT_MAX_DIGESTS);
        int topN = section.integer("metricsTopN", StatisticsConfig.DEFAULT_METRICS_TOP_N);
        return section.done(() -> new StatisticsConfig(enabled, maxDigests, topN));
    }

    static ShutdownConfig shutdown(YamlSection section) {
        long waitBeforeShutdown = section.milliseconds("gracefulWaitBeforeShutdownMilliseconds",
                ShutdownConfig.DEFAULT_GRACEFUL_WAIT_BEFORE_SHUTDOWN_MILLISECONDS);
        long closeTimeout = section.milliseconds("gracefulCloseTimeoutMilliseconds",
                ShutdownConfig.DEFAULT_GRACEFUL_CLOSE_TIMEOUT_MILLISECONDS);
        return section.done(() -> new ShutdownConfig(waitBeforeShutdown, closeTimeout));
    }

    /** What a file without a {@code capture} section gets: {@code captures/} beside the conf dir, keys from it. */
    CaptureConfig defaultCapture() {
        return CaptureConfig.defaults(baseDirectory);
    }

    /** Relative directories are taken from the conf dir, as every file name in config.yaml is. */
    CaptureConfig capture(YamlSection section) {
        CaptureConfig defaults = defaultCapture();
        Path base = baseDirectory == null ? Path.of("") : baseDirectory;
        String directory = section.string("directory", defaults.directory().toString());
        String keyDirectory = section.string("keyDirectory", defaults.keyDirectory().toString());
        return section.done(() -> new CaptureConfig(base.resolve(directory), base.resolve(keyDirectory)));
    }

    static SlowQueryLogConfig slowQueryLog(YamlSection section) {
        boolean enabled = section.flag("enabled", true);
        long threshold = section.milliseconds("thresholdMilliseconds",
                SlowQueryLogConfig.DEFAULT_THRESHOLD_MILLISECONDS);
        int maxSqlLength = section.integer("maxSqlLength", SlowQueryLogConfig.DEFAULT_MAX_SQL_LENGTH);
        return section.done(() -> new SlowQueryLogConfig(enabled, threshold, maxSqlLength));
    }

    /** The {@code reload} section: whether the standalone proxy watches the file. */
    static boolean watchFile(YamlSection section) {
        boolean watchFile = section.flag("watchFile", true);
        section.done();
        return watchFile;
    }
}
