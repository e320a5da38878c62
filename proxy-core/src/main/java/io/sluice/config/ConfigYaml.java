package io.sluice.config;

import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.SequenceNode;
import org.yaml.snakeyaml.nodes.Tag;

/**
 * Reads config.yaml into a {@link ProxyConfig}. The file format is a superset of ShardingSphere-Proxy's
 * {@code config-*.yaml} plus the {@code authority} section of its {@code server.yaml}, so a ShardingSphere seed file
 * with {@code rules: []} loads unchanged. See docs/configuration.md for every key.
 *
 * <p>The file is read as a YAML node tree rather than bound to objects, so that every refusal can name the line and
 * the key path: {@code config.yaml line 7: dataSources.ds_0.maxPoolSize: "ten" (expected: an integer)}. Unknown keys
 * are refused rather than ignored, because a misspelt pool setting silently falling back to its default is worse
 * than not starting.
 */
public final class ConfigYaml {

    private static final List<String> TOP_LEVEL_KEYS = List.of("databaseName", "dataSources", "rules", "server",
            "authority", "loadBalancer", "healthCheck", "admin", "metrics", "shutdown", "slowQueryLog", "reload",
            "pooling");
    private static final List<String> POOLING_KEYS = List.of("mode", "preparedStatementCacheSize");
    private static final List<String> DATA_SOURCE_KEYS = List.of("url", "username", "password",
            "connectionTimeoutMilliseconds", "idleTimeoutMilliseconds", "maxLifetimeMilliseconds",
            "maxPoolSize", "minPoolSize", "weight", "drain", "sslMode", "sslCa");
    private static final List<String> LOAD_BALANCER_KEYS = List.of("type");
    private static final List<String> HEALTH_CHECK_KEYS =
            List.of("intervalMilliseconds", "timeoutMilliseconds", "rise", "fall");
    private static final List<String> SERVER_KEYS = List.of("address", "port", "workerThreads", "connBufferSize",
            "maxConnections", "serverVersion", "maxPacketSize", "transport", "handshakeTimeoutMilliseconds",
            "idleTimeoutMilliseconds", "loginBackoff", "tls");
    private static final List<String> TLS_KEYS = List.of("enabled", "certFile", "keyFile", "caFile", "verifyClient",
            "requireSecureTransport", "provider", "protocols");
    private static final List<String> LOGIN_BACKOFF_KEYS =
            List.of("afterFailures", "delayMilliseconds", "maxDelayMilliseconds");
    // privilege is accepted so ShardingSphere's server.yaml section pastes in unchanged; Sluice authorises nothing
    // itself, the backend account does.
    private static final List<String> AUTHORITY_KEYS = List.of("users", "privilege");
    private static final List<String> USER_KEYS = List.of("user", "password", "passwordHash", "maxConnections");
    // ---- operations (issue #5) ----
    private static final List<String> ADMIN_KEYS = List.of("enabled", "address", "port", "token");
    private static final List<String> METRICS_KEYS = List.of("enabled");
    private static final List<String> SHUTDOWN_KEYS =
            List.of("gracefulWaitBeforeShutdownMilliseconds", "gracefulCloseTimeoutMilliseconds");
    private static final List<String> SLOW_QUERY_LOG_KEYS = List.of("enabled", "thresholdMilliseconds", "maxSqlLength");
    private static final List<String> RELOAD_KEYS = List.of("watchFile");

    // Decimal only: YAML 1.1 would read 0755 as octal and 1:30 as 90, which nobody means in a pool size.
    private static final Pattern DECIMAL = Pattern.compile("[-+]?[0-9][0-9_]*");

    private final String source;
    /** The directory relative file names are read from, and generated certificates go to; {@code null}: none. */
    private final Path baseDirectory;

    private ConfigYaml(String source, Path baseDirectory) {
        this.source = source;
        this.baseDirectory = baseDirectory;
    }

    /**
     * Reads a config.yaml file. Error messages name the file as given.
     *
     * @throws ConfigException when the file cannot be read or describes a configuration Sluice refuses
     */
    public static ProxyConfig load(Path file) {
        Objects.requireNonNull(file, "file");
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ConfigException(file + ": cannot be read (" + describe(e) + ")", e);
        }
        return parse(text, file.toString(), file.toAbsolutePath().getParent());
    }

    /**
     * Reads config.yaml text.
     *
     * @param sourceName how error messages name the text, usually its file name
     * @throws ConfigException when the text describes a configuration Sluice refuses
     */
    public static ProxyConfig parse(String yaml, String sourceName) {
        return parse(yaml, sourceName, null);
    }

    /**
     * Reads config.yaml text that belongs in {@code baseDirectory}: relative file names (certificates) are read from
     * there, and TLS certificates Sluice generates are kept there.
     *
     * @param baseDirectory the conf dir, or {@code null}: relative names are read from the working directory and
     *     generated certificates are kept in memory only
     * @throws ConfigException when the text describes a configuration Sluice refuses
     */
    public static ProxyConfig parse(String yaml, String sourceName, Path baseDirectory) {
        Objects.requireNonNull(yaml, "yaml");
        Objects.requireNonNull(sourceName, "sourceName");
        ConfigYaml reader = new ConfigYaml(sourceName, baseDirectory);
        // Editors on Windows save UTF-8 with a byte order mark, which YAML read from a String would reject.
        String text = yaml.startsWith("\uFEFF") ? yaml.substring(1) : yaml;
        Node root;
        try {
            root = new Yaml().compose(new StringReader(text));
        } catch (MarkedYAMLException e) {
            throw reader.malformed(e);
        } catch (YAMLException e) {
            throw new ConfigException(sourceName + ": malformed YAML: " + e.getMessage(), e);
        }
        if (root == null || isNull(root)) {
            throw new ConfigException(sourceName + ": empty (expected: at least a dataSources section)");
        }
        return reader.proxyConfig(root);
    }

    private ProxyConfig proxyConfig(Node root) {
        if (!(root instanceof MappingNode rootMapping)) {
            throw error(root, "(top level)", describe(root) + " (expected: a mapping of "
                    + String.join(", ", TOP_LEVEL_KEYS) + ")");
        }
        Map<String, NodeTuple> keys = keys(rootMapping, "", TOP_LEVEL_KEYS);

        NodeTuple databaseName = keys.get("databaseName");
        String database = databaseName == null ? null : string(databaseName.getValueNode(), "databaseName");

        NodeTuple dataSourcesTuple = keys.get("dataSources");
        if (dataSourcesTuple == null || isNull(dataSourcesTuple.getValueNode())) {
            Node at = dataSourcesTuple == null ? root : dataSourcesTuple.getKeyNode();
            throw error(at, "dataSources", "missing (expected: at least one data source, such as "
                    + "ds_0: {url: jdbc:mysql://127.0.0.1:3306/test, username: root, password: })");
        }
        Map<String, DataSourceConfig> dataSources = dataSources(dataSourcesTuple);

        NodeTuple rules = keys.get("rules");
        if (rules != null) {
            checkRules(rules);
        }

        NodeTuple server = keys.get("server");
        ServerConfig serverConfig = server == null || isNull(server.getValueNode())
                ? ServerConfig.defaults().withTls(TlsConfig.defaults().withGeneratedDirectory(baseDirectory))
                : server(server);

        NodeTuple authority = keys.get("authority");
        List<UserConfig> users = authority == null || isNull(authority.getValueNode())
                ? List.of() : users(authority);

        NodeTuple loadBalancer = keys.get("loadBalancer");
        Policy policy = loadBalancer == null || isNull(loadBalancer.getValueNode())
                ? ProxyConfig.DEFAULT_LOAD_BALANCER : loadBalancer(loadBalancer);

        NodeTuple healthCheck = keys.get("healthCheck");
        HealthCheckConfig checks = healthCheck == null || isNull(healthCheck.getValueNode())
                ? HealthCheckConfig.defaults() : healthCheck(healthCheck);

        OperationsConfig operations = operations(keys);

        NodeTuple poolingTuple = keys.get("pooling");
        PoolingConfig pooling = poolingTuple == null || isNull(poolingTuple.getValueNode())
                ? PoolingConfig.defaults() : pooling(poolingTuple);

        try {
            return new ProxyConfig(database, dataSources, serverConfig, users, policy, checks, operations, pooling);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(source + ": " + e.getMessage(), e);
        }
    }

    private Map<String, DataSourceConfig> dataSources(NodeTuple tuple) {
        MappingNode mapping = mapping(tuple.getValueNode(), "dataSources", "a mapping of data source names");
        Map<String, NodeTuple> entries = keys(mapping, "dataSources", null);
        if (entries.isEmpty()) {
            throw error(tuple.getValueNode(), "dataSources",
                    "empty (expected: at least one data source)");
        }
        Map<String, DataSourceConfig> dataSources = new LinkedHashMap<>();
        for (Map.Entry<String, NodeTuple> entry : entries.entrySet()) {
            dataSources.put(entry.getKey(), dataSource(entry.getKey(), entry.getValue()));
        }
        return dataSources;
    }

    private DataSourceConfig dataSource(String name, NodeTuple tuple) {
        String path = "dataSources." + name;
        Node keyNode = tuple.getKeyNode();
        if (isNull(tuple.getValueNode())) {
            throw error(keyNode, path + ".url", "missing (expected: a JDBC URL such as jdbc:mysql://127.0.0.1:3306/test)");
        }
        MappingNode mapping = mapping(tuple.getValueNode(), path, "a mapping of " + String.join(", ", DATA_SOURCE_KEYS));
        Map<String, NodeTuple> keys = keys(mapping, path, DATA_SOURCE_KEYS);

        String url = requiredString(keys, "url", keyNode, path,
                "a JDBC URL such as jdbc:mysql://127.0.0.1:3306/test");
        String username = requiredString(keys, "username", keyNode, path, "the backend user name");
        String password = optionalString(keys, "password", path, "");
        long connectionTimeout = optionalInteger(keys, "connectionTimeoutMilliseconds", path,
                DataSourceConfig.DEFAULT_CONNECTION_TIMEOUT_MILLISECONDS, Long.MAX_VALUE);
        long idleTimeout = optionalInteger(keys, "idleTimeoutMilliseconds", path,
                DataSourceConfig.DEFAULT_IDLE_TIMEOUT_MILLISECONDS, Long.MAX_VALUE);
        long maxLifetime = optionalInteger(keys, "maxLifetimeMilliseconds", path,
                DataSourceConfig.DEFAULT_MAX_LIFETIME_MILLISECONDS, Long.MAX_VALUE);
        int maxPoolSize = (int) optionalInteger(keys, "maxPoolSize", path,
                DataSourceConfig.DEFAULT_MAX_POOL_SIZE, Integer.MAX_VALUE);
        int minPoolSize = (int) optionalInteger(keys, "minPoolSize", path,
                DataSourceConfig.DEFAULT_MIN_POOL_SIZE, Integer.MAX_VALUE);
        int weight = (int) optionalInteger(keys, "weight", path, DataSourceConfig.DEFAULT_WEIGHT, Integer.MAX_VALUE);
        boolean drain = optionalBoolean(keys, "drain", path, false);
        SslMode sslMode = optionalEnum(keys, "sslMode", path, SslMode.class, DataSourceConfig.DEFAULT_SSL_MODE);
        Path sslCa = optionalFile(keys, "sslCa", path);
        try {
            return new DataSourceConfig(name, url, username, password, connectionTimeout, idleTimeout, maxLifetime,
                    maxPoolSize, minPoolSize, weight, drain, sslMode, sslCa);
        } catch (IllegalArgumentException e) {
            throw recordRefused(e, keys, keyNode, path);
        }
    }

    private void checkRules(NodeTuple tuple) {
        Node value = tuple.getValueNode();
        boolean passThrough = isNull(value)
                || value instanceof SequenceNode sequence && sequence.getValue().isEmpty();
        if (!passThrough) {
            // Sluice does not rewrite SQL: accepting sharding or read/write-splitting rules and then ignoring them
            // would send queries to places the file's author did not intend.
            throw error(value, "rules", "only [] (pass-through) is supported in this version");
        }
    }

    private ServerConfig server(NodeTuple tuple) {
        String path = "server";
        MappingNode mapping = mapping(tuple.getValueNode(), path, "a mapping of " + String.join(", ", SERVER_KEYS));
        Map<String, NodeTuple> keys = keys(mapping, path, SERVER_KEYS);
        ServerConfig defaults = ServerConfig.defaults();
        String address = optionalString(keys, "address", path, defaults.address());
        int port = (int) optionalInteger(keys, "port", path, defaults.port(), Integer.MAX_VALUE);
        int workerThreads = (int) optionalInteger(keys, "workerThreads", path, defaults.workerThreads(),
                Integer.MAX_VALUE);
        int connBufferSize = (int) optionalInteger(keys, "connBufferSize", path, defaults.connBufferSize(),
                Integer.MAX_VALUE);
        int maxConnections = (int) optionalInteger(keys, "maxConnections", path, defaults.maxConnections(),
                Integer.MAX_VALUE);
        String serverVersion = optionalString(keys, "serverVersion", path, defaults.serverVersion());
        int maxPacketSize = (int) optionalInteger(keys, "maxPacketSize", path, defaults.maxPacketSize(),
                Integer.MAX_VALUE);
        Transport transport = optionalEnum(keys, "transport", path, Transport.class, defaults.transport());
        long handshakeTimeout = optionalInteger(keys, "handshakeTimeoutMilliseconds", path,
                defaults.handshakeTimeoutMilliseconds(), Long.MAX_VALUE);
        long idleTimeout = optionalInteger(keys, "idleTimeoutMilliseconds", path, defaults.idleTimeoutMilliseconds(),
                Long.MAX_VALUE);
        NodeTuple backoffTuple = keys.get("loginBackoff");
        LoginBackoff loginBackoff = backoffTuple == null || isNull(backoffTuple.getValueNode())
                ? defaults.loginBackoff() : loginBackoff(backoffTuple);
        NodeTuple tlsTuple = keys.get("tls");
        TlsConfig tls = tlsTuple == null || isNull(tlsTuple.getValueNode())
                ? TlsConfig.defaults().withGeneratedDirectory(baseDirectory) : tls(tlsTuple);
        try {
            return new ServerConfig(address, port, workerThreads, connBufferSize, maxConnections, serverVersion,
                    maxPacketSize, transport, tls, handshakeTimeout, idleTimeout, loginBackoff);
        } catch (IllegalArgumentException e) {
            throw recordRefused(e, keys, tuple.getKeyNode(), path);
        }
    }

    private LoginBackoff loginBackoff(NodeTuple tuple) {
        String path = "server.loginBackoff";
        MappingNode mapping = mapping(tuple.getValueNode(), path,
                "a mapping of " + String.join(", ", LOGIN_BACKOFF_KEYS));
        Map<String, NodeTuple> keys = keys(mapping, path, LOGIN_BACKOFF_KEYS);
        LoginBackoff defaults = LoginBackoff.defaults();
        int afterFailures = (int) optionalInteger(keys, "afterFailures", path, defaults.afterFailures(),
                Integer.MAX_VALUE);
        long delay = optionalInteger(keys, "delayMilliseconds", path, defaults.delayMilliseconds(), Long.MAX_VALUE);
        long maxDelay = optionalInteger(keys, "maxDelayMilliseconds", path,
                Math.max(delay, defaults.maxDelayMilliseconds()), Long.MAX_VALUE);
        try {
            return new LoginBackoff(afterFailures, delay, maxDelay);
        } catch (IllegalArgumentException e) {
            throw recordRefused(e, keys, tuple.getKeyNode(), path);
        }
    }

    private TlsConfig tls(NodeTuple tuple) {
        String path = "server.tls";
        MappingNode mapping = mapping(tuple.getValueNode(), path, "a mapping of " + String.join(", ", TLS_KEYS));
        Map<String, NodeTuple> keys = keys(mapping, path, TLS_KEYS);
        TlsConfig defaults = TlsConfig.defaults();
        boolean enabled = optionalBoolean(keys, "enabled", path, defaults.enabled());
        Path certFile = optionalFile(keys, "certFile", path);
        Path keyFile = optionalFile(keys, "keyFile", path);
        Path caFile = optionalFile(keys, "caFile", path);
        TlsConfig.VerifyClient verifyClient = optionalEnum(keys, "verifyClient", path, TlsConfig.VerifyClient.class,
                defaults.verifyClient());
        boolean requireSecureTransport = optionalBoolean(keys, "requireSecureTransport", path,
                defaults.requireSecureTransport());
        TlsConfig.Provider provider = optionalEnum(keys, "provider", path, TlsConfig.Provider.class,
                defaults.provider());
        List<String> protocols = optionalStrings(keys, "protocols", path, defaults.protocols());
        try {
            return new TlsConfig(enabled, certFile, keyFile, caFile, verifyClient, requireSecureTransport, provider,
                    protocols, baseDirectory);
        } catch (IllegalArgumentException e) {
            throw recordRefused(e, keys, tuple.getKeyNode(), path);
        }
    }

    /** An enum constant named in any case; a name outside the enum is refused with the list of names. */
    private Policy loadBalancer(NodeTuple tuple) {
        String path = "loadBalancer";
        MappingNode mapping = mapping(tuple.getValueNode(), path, "a mapping such as {type: LEAST_CONNECTIONS}");
        Map<String, NodeTuple> keys = keys(mapping, path, LOAD_BALANCER_KEYS);
        return optionalEnum(keys, "type", path, Policy.class, ProxyConfig.DEFAULT_LOAD_BALANCER);
    }

    /** {@code pooling: {mode: transaction, preparedStatementCacheSize: 256}}. */
    private PoolingConfig pooling(NodeTuple tuple) {
        String path = "pooling";
        MappingNode mapping = mapping(tuple.getValueNode(), path, "a mapping such as {mode: TRANSACTION}");
        Map<String, NodeTuple> keys = keys(mapping, path, POOLING_KEYS);
        PoolingMode mode = optionalEnum(keys, "mode", path, PoolingMode.class, PoolingMode.SESSION);
        int cacheSize = (int) optionalInteger(keys, "preparedStatementCacheSize", path,
                PoolingConfig.DEFAULT_PREPARED_STATEMENT_CACHE_SIZE, Integer.MAX_VALUE);
        try {
            return new PoolingConfig(mode, cacheSize);
        } catch (IllegalArgumentException e) {
            throw recordRefused(e, keys, tuple.getKeyNode(), path);
        }
    }

    private HealthCheckConfig healthCheck(NodeTuple tuple) {
        String path = "healthCheck";
        MappingNode mapping = mapping(tuple.getValueNode(), path,
                "a mapping of " + String.join(", ", HEALTH_CHECK_KEYS));
        Map<String, NodeTuple> keys = keys(mapping, path, HEALTH_CHECK_KEYS);
        long interval = optionalInteger(keys, "intervalMilliseconds", path,
                HealthCheckConfig.DEFAULT_INTERVAL_MILLISECONDS, Long.MAX_VALUE);
        long timeout = optionalInteger(keys, "timeoutMilliseconds", path,
                HealthCheckConfig.DEFAULT_TIMEOUT_MILLISECONDS, Long.MAX_VALUE);
        int rise = (int) optionalInteger(keys, "rise", path, HealthCheckConfig.DEFAULT_RISE, Integer.MAX_VALUE);
        int fall = (int) optionalInteger(keys, "fall", path, HealthCheckConfig.DEFAULT_FALL, Integer.MAX_VALUE);
        try {
            return new HealthCheckConfig(interval, timeout, rise, fall);
        } catch (IllegalArgumentException e) {
            throw recordRefused(e, keys, tuple.getKeyNode(), path);
        }
    }

    // ---- operations (issue #5): admin, metrics, shutdown, slowQueryLog, reload -------------------------------

    private OperationsConfig operations(Map<String, NodeTuple> top) {
        OperationsConfig defaults = OperationsConfig.defaults();
        AdminConfig admin = defaults.admin();
        Map<String, NodeTuple> keys = section(top, "admin", ADMIN_KEYS);
        if (keys != null) {
            try {
                admin = new AdminConfig(optionalBoolean(keys, "enabled", "admin", true),
                        optionalString(keys, "address", "admin", AdminConfig.DEFAULT_ADDRESS),
                        (int) optionalInteger(keys, "port", "admin", AdminConfig.DEFAULT_PORT, Integer.MAX_VALUE),
                        optionalString(keys, "token", "admin", null));
            } catch (IllegalArgumentException e) {
                throw recordRefused(e, keys, top.get("admin").getKeyNode(), "admin");
            }
        }
        MetricsConfig metrics = defaults.metrics();
        keys = section(top, "metrics", METRICS_KEYS);
        if (keys != null) {
            metrics = new MetricsConfig(optionalBoolean(keys, "enabled", "metrics", true));
        }
        ShutdownConfig shutdown = defaults.shutdown();
        keys = section(top, "shutdown", SHUTDOWN_KEYS);
        if (keys != null) {
            try {
                shutdown = new ShutdownConfig(
                        optionalInteger(keys, "gracefulWaitBeforeShutdownMilliseconds", "shutdown",
                                ShutdownConfig.DEFAULT_GRACEFUL_WAIT_BEFORE_SHUTDOWN_MILLISECONDS, Long.MAX_VALUE),
                        optionalInteger(keys, "gracefulCloseTimeoutMilliseconds", "shutdown",
                                ShutdownConfig.DEFAULT_GRACEFUL_CLOSE_TIMEOUT_MILLISECONDS, Long.MAX_VALUE));
            } catch (IllegalArgumentException e) {
                throw recordRefused(e, keys, top.get("shutdown").getKeyNode(), "shutdown");
            }
        }
        SlowQueryLogConfig slowQueryLog = defaults.slowQueryLog();
        keys = section(top, "slowQueryLog", SLOW_QUERY_LOG_KEYS);
        if (keys != null) {
            try {
                slowQueryLog = new SlowQueryLogConfig(optionalBoolean(keys, "enabled", "slowQueryLog", true),
                        optionalInteger(keys, "thresholdMilliseconds", "slowQueryLog",
                                SlowQueryLogConfig.DEFAULT_THRESHOLD_MILLISECONDS, Long.MAX_VALUE),
                        (int) optionalInteger(keys, "maxSqlLength", "slowQueryLog",
                                SlowQueryLogConfig.DEFAULT_MAX_SQL_LENGTH, Integer.MAX_VALUE));
            } catch (IllegalArgumentException e) {
                throw recordRefused(e, keys, top.get("slowQueryLog").getKeyNode(), "slowQueryLog");
            }
        }
        boolean watchFile = defaults.watchConfigFile();
        keys = section(top, "reload", RELOAD_KEYS);
        if (keys != null) {
            watchFile = optionalBoolean(keys, "watchFile", "reload", true);
        }
        return new OperationsConfig(admin, metrics, shutdown, slowQueryLog, watchFile);
    }

    /** The keys of an optional top-level mapping, or {@code null} when it is absent or empty. */
    private Map<String, NodeTuple> section(Map<String, NodeTuple> top, String name, List<String> allowed) {
        NodeTuple tuple = top.get(name);
        if (tuple == null || isNull(tuple.getValueNode())) {
            return null;
        }
        MappingNode mapping = mapping(tuple.getValueNode(), name, "a mapping of " + String.join(", ", allowed));
        return keys(mapping, name, allowed);
    }

    private <E extends Enum<E>> E optionalEnum(Map<String, NodeTuple> keys, String key, String path, Class<E> type,
            E defaultValue) {
        NodeTuple tuple = keys.get(key);
        if (tuple == null || isNull(tuple.getValueNode())) {
            return defaultValue;
        }
        String keyPath = join(path, key);
        String name = string(tuple.getValueNode(), keyPath);
        try {
            return Enum.valueOf(type, name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            List<String> names = new ArrayList<>();
            for (E constant : type.getEnumConstants()) {
                names.add(constant.name());
            }
            throw error(tuple.getValueNode(), keyPath,
                    describe(tuple.getValueNode()) + " (expected: one of " + String.join(", ", names) + ")");
        }
    }

    /** {@code true} or {@code false}; quoted strings and numbers are refused. */
    private boolean optionalBoolean(Map<String, NodeTuple> keys, String key, String path, boolean defaultValue) {
        NodeTuple tuple = keys.get(key);
        if (tuple == null || isNull(tuple.getValueNode())) {
            return defaultValue;
        }
        Node node = tuple.getValueNode();
        if (node instanceof ScalarNode scalar && Tag.BOOL.equals(node.getTag())) {
            return Boolean.parseBoolean(scalar.getValue().toLowerCase(Locale.ROOT))
                    || "yes".equalsIgnoreCase(scalar.getValue()) || "on".equalsIgnoreCase(scalar.getValue());
        }
        throw error(node, join(path, key), describe(node) + " (expected: true or false)");
    }

    /** A list of strings, or one string as a list of one. */
    private List<String> optionalStrings(Map<String, NodeTuple> keys, String key, String path,
            List<String> defaultValue) {
        NodeTuple tuple = keys.get(key);
        if (tuple == null || isNull(tuple.getValueNode())) {
            return defaultValue;
        }
        String keyPath = join(path, key);
        Node node = tuple.getValueNode();
        if (node instanceof ScalarNode) {
            return List.of(string(node, keyPath));
        }
        if (!(node instanceof SequenceNode sequence)) {
            throw error(node, keyPath, describe(node) + " (expected: a list of strings)");
        }
        List<String> values = new ArrayList<>();
        for (Node item : sequence.getValue()) {
            values.add(string(item, keyPath));
        }
        return values;
    }

    /**
     * A file name, relative to the conf dir when there is one. The file must exist and be readable now: a missing
     * certificate is a configuration error with a line number, not a failed TLS handshake later.
     */
    private Path optionalFile(Map<String, NodeTuple> keys, String key, String path) {
        NodeTuple tuple = keys.get(key);
        if (tuple == null || isNull(tuple.getValueNode())) {
            return null;
        }
        Node node = tuple.getValueNode();
        String keyPath = join(path, key);
        String name = string(node, keyPath);
        Path file;
        try {
            file = baseDirectory == null ? Path.of(name) : baseDirectory.resolve(name);
        } catch (java.nio.file.InvalidPathException e) {
            throw error(node, keyPath, describe(node) + " (expected: a file name)");
        }
        if (!Files.isRegularFile(file) || !Files.isReadable(file)) {
            throw error(node, keyPath, describe(node) + " (expected: a readable file; " + file.toAbsolutePath()
                    + " is not one)");
        }
        return file;
    }

    private List<UserConfig> users(NodeTuple tuple) {
        String path = "authority";
        MappingNode mapping = mapping(tuple.getValueNode(), path, "a mapping of " + String.join(", ", AUTHORITY_KEYS));
        Map<String, NodeTuple> keys = keys(mapping, path, AUTHORITY_KEYS);
        NodeTuple usersTuple = keys.get("users");
        if (usersTuple == null || isNull(usersTuple.getValueNode())) {
            return List.of();
        }
        Node usersNode = usersTuple.getValueNode();
        if (!(usersNode instanceof SequenceNode sequence)) {
            throw error(usersNode, "authority.users",
                    describe(usersNode) + " (expected: a list of {user: name@host, password: ...})");
        }
        List<UserConfig> users = new ArrayList<>();
        Map<String, Node> seen = new LinkedHashMap<>();
        List<Node> items = sequence.getValue();
        for (int i = 0; i < items.size(); i++) {
            String itemPath = "authority.users[" + i + "]";
            Node item = items.get(i);
            MappingNode userMapping = mapping(item, itemPath, "a mapping of " + String.join(", ", USER_KEYS));
            Map<String, NodeTuple> userKeys = keys(userMapping, itemPath, USER_KEYS);
            String name = requiredString(userKeys, "user", item, itemPath, "a user name, or name@host");
            String password = optionalString(userKeys, "password", itemPath, "");
            String passwordHash = optionalString(userKeys, "passwordHash", itemPath, null);
            int maxConnections = (int) optionalInteger(userKeys, "maxConnections", itemPath, 0, Integer.MAX_VALUE);
            UserConfig user;
            try {
                user = UserConfig.parse(name, password, passwordHash, maxConnections);
            } catch (IllegalArgumentException e) {
                // Never shown: a hash is as good as a password to whoever runs a dictionary against it.
                throw recordRefused(e, userKeys, item, itemPath);
            }
            Node userNode = userKeys.get("user").getValueNode();
            if (user.user().isEmpty()) {
                throw error(userNode, itemPath + ".user", describe(userNode) + " (expected: a user name, or name@host)");
            }
            String identity = user.user() + "@" + user.host();
            Node first = seen.putIfAbsent(identity, userNode);
            if (first != null) {
                throw error(userNode, itemPath + ".user", describe(userNode)
                        + " (expected: each user once; " + identity + " is also at line " + line(first) + ")");
            }
            users.add(user);
        }
        return users;
    }

    /**
     * Checks a mapping's keys and returns them in file order. Refuses keys that are not plain names, duplicate keys
     * (SnakeYAML only catches those when constructing objects, which this class does not do) and, when
     * {@code allowed} is not null, keys outside it.
     */
    private Map<String, NodeTuple> keys(MappingNode mapping, String path, List<String> allowed) {
        Map<String, NodeTuple> keys = new LinkedHashMap<>();
        for (NodeTuple tuple : mapping.getValue()) {
            Node keyNode = tuple.getKeyNode();
            if (!(keyNode instanceof ScalarNode scalar) || isNull(keyNode)) {
                throw error(keyNode, path.isEmpty() ? "(top level)" : path,
                        describe(keyNode) + " (expected: a key name)");
            }
            String key = scalar.getValue();
            String keyPath = join(path, key);
            if (allowed != null && !allowed.contains(key)) {
                throw error(keyNode, keyPath, "unknown key (expected: one of " + String.join(", ", allowed) + ")");
            }
            NodeTuple first = keys.putIfAbsent(key, tuple);
            if (first != null) {
                throw error(keyNode, keyPath, "duplicate key (first at line " + line(first.getKeyNode()) + ")");
            }
        }
        return keys;
    }

    private MappingNode mapping(Node node, String path, String expected) {
        if (node instanceof MappingNode mapping) {
            return mapping;
        }
        throw error(node, path, describe(node) + " (expected: " + expected + ")");
    }

    /** A scalar's text whatever YAML type it resolved to: {@code password: 123456} is the string "123456". */
    private String string(Node node, String path) {
        if (node instanceof ScalarNode scalar) {
            return isNull(node) ? null : scalar.getValue();
        }
        throw error(node, path, describe(node) + " (expected: a string)");
    }

    private String requiredString(Map<String, NodeTuple> keys, String key, Node parent, String path,
            String expected) {
        NodeTuple tuple = keys.get(key);
        String keyPath = join(path, key);
        if (tuple == null) {
            throw error(parent, keyPath, "missing (expected: " + expected + ")");
        }
        String value = string(tuple.getValueNode(), keyPath);
        if (value == null || value.isBlank()) {
            throw error(tuple.getValueNode(), keyPath, "missing (expected: " + expected + ")");
        }
        return value;
    }

    /** An absent key or an empty value ({@code password:}) gives {@code defaultValue}. */
    private String optionalString(Map<String, NodeTuple> keys, String key, String path, String defaultValue) {
        NodeTuple tuple = keys.get(key);
        if (tuple == null) {
            return defaultValue;
        }
        String value = string(tuple.getValueNode(), join(path, key));
        return value == null ? defaultValue : value;
    }

    private long optionalInteger(Map<String, NodeTuple> keys, String key, String path, long defaultValue,
            long max) {
        NodeTuple tuple = keys.get(key);
        if (tuple == null || isNull(tuple.getValueNode())) {
            return defaultValue;
        }
        Node node = tuple.getValueNode();
        String keyPath = join(path, key);
        if (!(node instanceof ScalarNode scalar) || !DECIMAL.matcher(scalar.getValue()).matches()) {
            throw error(node, keyPath, describe(node) + " (expected: an integer)");
        }
        try {
            long value = Long.parseLong(scalar.getValue().replace("_", ""));
            if (value <= max && value >= -max - 1) {
                return value;
            }
        } catch (NumberFormatException e) {
            // too large for a long: reported below like any value out of range
        }
        throw error(node, keyPath, describe(node) + " (expected: an integer no larger than " + max + ")");
    }

    /**
     * Turns a record's refusal ({@code maxPoolSize: 0 (expected: >= 1)}) into a located one. The line is that of the
     * key the message starts with when the file has it, else that of the enclosing section.
     */
    private ConfigException recordRefused(IllegalArgumentException e, Map<String, NodeTuple> keys, Node section,
            String path) {
        String message = e.getMessage() == null ? e.toString() : e.getMessage();
        int colon = message.indexOf(':');
        Node at = section;
        if (colon > 0) {
            NodeTuple tuple = keys.get(message.substring(0, colon));
            if (tuple != null) {
                at = tuple.getValueNode();
            }
        }
        return new ConfigException(source + " line " + line(at) + ": " + join(path, message), e);
    }

    private ConfigException malformed(MarkedYAMLException e) {
        Mark mark = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
        String problem = e.getProblem() != null ? e.getProblem() : e.getContext();
        if (mark == null) {
            return new ConfigException(source + ": malformed YAML: " + problem, e);
        }
        String context = e.getContext() != null && e.getProblem() != null ? " " + e.getContext() : "";
        return new ConfigException(source + " line " + (mark.getLine() + 1) + ": malformed YAML: " + problem
                + context + " (column " + (mark.getColumn() + 1) + ")", e);
    }

    private ConfigException error(Node at, String path, String what) {
        return new ConfigException(source + " line " + line(at) + ": " + path + ": " + what);
    }

    private static int line(Node node) {
        return node.getStartMark().getLine() + 1;
    }

    private static boolean isNull(Node node) {
        return node instanceof ScalarNode && Tag.NULL.equals(node.getTag());
    }

    /** How a value appears in an error: strings quoted as in the file, other scalars bare, collections by kind. */
    private static String describe(Node node) {
        if (node instanceof ScalarNode scalar) {
            if (Tag.STR.equals(node.getTag())) {
                return '"' + scalar.getValue().replace("\\", "\\\\").replace("\"", "\\\"") + '"';
            }
            return isNull(node) ? "empty" : scalar.getValue();
        }
        return node instanceof SequenceNode ? "a list" : "a mapping";
    }

    private static String describe(IOException e) {
        return e.getMessage() == null ? e.getClass().getSimpleName()
                : e.getClass().getSimpleName() + ": " + e.getMessage();
    }

    private static String join(String path, String key) {
        return path.isEmpty() ? key : path + "." + key;
    }
}
