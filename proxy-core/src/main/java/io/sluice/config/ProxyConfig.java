package io.sluice.config;

import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything Sluice needs to run, as read from config.yaml or built in code.
 *
 * <p>In pass-through mode ({@code rules: []}) {@code databaseName} is an alias: a client that asks for the schema
 * {@code databaseName} gets the database named in its data source's URL. Every other schema name passes through
 * unchanged, and a client that names no schema gets none, exactly as it would connecting directly.
 *
 * @param databaseName the logical database name clients may use, or {@code null}
 * @param dataSources the backend servers, by name, in file order
 * @param server the client-facing listener
 * @param users the accounts clients authenticate with
 * @param loadBalancer how new sessions are spread over the data sources
 * @param healthCheck how the data sources are checked
 * @param operations the admin port, metrics, graceful shutdown, slow-query log and reload
 * @param pooling whether sessions hold a backend connection for their lifetime or per transaction
 * @param readWriteSplitting the read/write split groups of the {@code !READWRITE_SPLITTING} rule, in file order;
 *     empty in pass-through mode ({@code rules: []})
 * @param serverAccounts {@code authority.users: FROM_BACKEND}: clients log in with the server's accounts (then
 *     {@code users} is empty); {@code null}: with {@code users}
 * @param queryRules the rules of the {@code !QUERY_RULES} items, in file order (decision 165); empty: none
 * @param allowList the allow-list of a {@code !QUERY_RULES} item (decision 188), or {@code null}: none
 */
public record ProxyConfig(
        String databaseName,
        Map<String, DataSourceConfig> dataSources,
        ServerConfig server,
        List<UserConfig> users,
        Policy loadBalancer,
        HealthCheckConfig healthCheck,
        OperationsConfig operations,
        PoolingConfig pooling,
        List<ReadWriteSplittingConfig> readWriteSplitting,
        ServerAccountsConfig serverAccounts,
        List<QueryRuleConfig> queryRules,
        AllowListConfig allowList) {

    public static final Policy DEFAULT_LOAD_BALANCER = Policy.LEAST_CONNECTIONS;

    public ProxyConfig {
        Objects.requireNonNull(dataSources, "dataSources");
        Objects.requireNonNull(server, "server");
        Objects.requireNonNull(users, "users");
        Objects.requireNonNull(loadBalancer, "loadBalancer");
        Objects.requireNonNull(healthCheck, "healthCheck");
        Objects.requireNonNull(operations, "operations");
        Objects.requireNonNull(pooling, "pooling");
        if (dataSources.isEmpty()) {
            throw new IllegalArgumentException("dataSources: empty (expected: at least one data source)");
        }
        dataSources = Collections.unmodifiableMap(new LinkedHashMap<>(dataSources));
        users = List.copyOf(users);
        readWriteSplitting = List.copyOf(readWriteSplitting);
        checkGroups(dataSources, readWriteSplitting);
        queryRules = List.copyOf(queryRules);
        java.util.Set<String> ruleNames = new java.util.HashSet<>();
        for (QueryRuleConfig rule : queryRules) {
            if (!ruleNames.add(rule.name())) {
                throw new IllegalArgumentException("rules: the query rule " + rule.name()
                        + " is defined twice (expected: each rule name once)");
            }
            if (rule.mirror() != null && !dataSources.containsKey(rule.mirror())
                    && readWriteSplitting.stream().noneMatch(group -> group.name().equals(rule.mirror()))) {
                throw new IllegalArgumentException("rules: the query rule " + rule.name() + " mirrors to "
                        + rule.mirror() + " (expected: a data source or a read/write splitting group)");
            }
            if (rule.routeGroup() != null && !dataSources.containsKey(rule.routeGroup())
                    && readWriteSplitting.stream().noneMatch(group -> group.name().equals(rule.routeGroup()))) {
                throw new IllegalArgumentException("rules: the query rule " + rule.name() + " routes to "
                        + rule.routeGroup() + ", which is no data source and no read/write splitting group (expected:"
                        + " one of " + dataSources.keySet() + " or " + readWriteSplitting.stream()
                        .map(ReadWriteSplittingConfig::name).toList() + ")");
            }
        }
        if (serverAccounts != null && !users.isEmpty()) {
            throw new IllegalArgumentException("authority.users: FROM_BACKEND with users of Sluice's own (expected:"
                    + " one of the two)");
        }
    }

    /** Without query rules. */
    public ProxyConfig(String databaseName, Map<String, DataSourceConfig> dataSources, ServerConfig server,
            List<UserConfig> users, Policy loadBalancer, HealthCheckConfig healthCheck, OperationsConfig operations,
            PoolingConfig pooling, List<ReadWriteSplittingConfig> readWriteSplitting,
            ServerAccountsConfig serverAccounts) {
        this(databaseName, dataSources, server, users, loadBalancer, healthCheck, operations, pooling,
                readWriteSplitting, serverAccounts, List.of(), null);
    }

    /** Without an allow-list. */
    public ProxyConfig(String databaseName, Map<String, DataSourceConfig> dataSources, ServerConfig server,
            List<UserConfig> users, Policy loadBalancer, HealthCheckConfig healthCheck, OperationsConfig operations,
            PoolingConfig pooling, List<ReadWriteSplittingConfig> readWriteSplitting,
            ServerAccountsConfig serverAccounts, List<QueryRuleConfig> queryRules) {
        this(databaseName, dataSources, server, users, loadBalancer, healthCheck, operations, pooling,
                readWriteSplitting, serverAccounts, queryRules, null);
    }

    /** The same configuration with {@code list} as its allow-list ({@code null}: none). */
    public ProxyConfig withAllowList(AllowListConfig list) {
        return new ProxyConfig(databaseName, dataSources, server, users, loadBalancer, healthCheck, operations,
                pooling, readWriteSplitting, serverAccounts, queryRules, list);
    }

    /** The same configuration with {@code rules} as its query rules. */
    public ProxyConfig withQueryRules(List<QueryRuleConfig> rules) {
        return new ProxyConfig(databaseName, dataSources, server, users, loadBalancer, healthCheck, operations,
                pooling, readWriteSplitting, serverAccounts, rules, allowList);
    }

    /** With the users of {@code users}. */
    public ProxyConfig(String databaseName, Map<String, DataSourceConfig> dataSources, ServerConfig server,
            List<UserConfig> users, Policy loadBalancer, HealthCheckConfig healthCheck, OperationsConfig operations,
            PoolingConfig pooling, List<ReadWriteSplittingConfig> readWriteSplitting) {
        this(databaseName, dataSources, server, users, loadBalancer, healthCheck, operations, pooling,
                readWriteSplitting, null);
    }

    /** Whether clients log in with the server's own accounts ({@code authority.users: FROM_BACKEND}). */
    public boolean usersFromBackend() {
        return serverAccounts != null;
    }

    /** Without read/write splitting: pass-through ({@code rules: []}). */
    public ProxyConfig(String databaseName, Map<String, DataSourceConfig> dataSources, ServerConfig server,
            List<UserConfig> users, Policy loadBalancer, HealthCheckConfig healthCheck, OperationsConfig operations,
            PoolingConfig pooling) {
        this(databaseName, dataSources, server, users, loadBalancer, healthCheck, operations, pooling, List.of());
    }

    /**
     * Each group once, naming data sources that exist (config.yaml's reader says so at the line); no data source both
     * a replica of one group and the primary of another: a replica is never written through Sluice (decision 110).
     */
    private static void checkGroups(Map<String, DataSourceConfig> dataSources, List<ReadWriteSplittingConfig> groups) {
        java.util.Set<String> names = new java.util.HashSet<>();
        for (ReadWriteSplittingConfig group : groups) {
            for (ReadWriteSplittingConfig other : groups) {
                if (group.readDataSourceNames().contains(other.writeDataSourceName())) {
                    throw new IllegalArgumentException("rules: the data source " + other.writeDataSourceName()
                            + " is a replica of the read/write splitting group " + group.name()
                            + " and the primary of " + other.name()
                            + " (expected: a replica is never written through Sluice; give each its own role)");
                }
            }
            if (!names.add(group.name())) {
                throw new IllegalArgumentException("rules: the read/write splitting group " + group.name()
                        + " is defined twice (expected: each group once)");
            }
            for (String dataSource : group.dataSourceNames()) {
                if (!dataSources.containsKey(dataSource)) {
                    throw new IllegalArgumentException("rules: the read/write splitting group " + group.name()
                            + " names the data source " + dataSource + " (expected: one of " + dataSources.keySet()
                            + ")");
                }
            }
        }
    }

    /**
     * The read/write split group a session that asks for the schema {@code schema} uses, or {@code null} (no split:
     * pass-through). A group is asked for by its name; and, as in ShardingSphere-Proxy, where every table of the
     * logical database {@code databaseName} goes to the rule's only group, by {@code databaseName} when there is
     * exactly one group.
     */
    public ReadWriteSplittingConfig readWriteGroupFor(String schema) {
        if (schema == null || readWriteSplitting.isEmpty()) {
            return null;
        }
        for (ReadWriteSplittingConfig group : readWriteSplitting) {
            if (group.name().equals(schema)) {
                return group;
            }
        }
        return readWriteSplitting.size() == 1 && schema.equals(databaseName) ? readWriteSplitting.get(0) : null;
    }

    /** A configuration with the default load balancer (least connections) and health checks (2000 / 2 / 3). */
    public ProxyConfig(String databaseName, Map<String, DataSourceConfig> dataSources, ServerConfig server,
            List<UserConfig> users) {
        this(databaseName, dataSources, server, users, DEFAULT_LOAD_BALANCER, HealthCheckConfig.defaults());
    }

    /** A configuration with session pooling (one backend connection per client session). */
    public ProxyConfig(String databaseName, Map<String, DataSourceConfig> dataSources, ServerConfig server,
            List<UserConfig> users, Policy loadBalancer, HealthCheckConfig healthCheck, OperationsConfig operations) {
        this(databaseName, dataSources, server, users, loadBalancer, healthCheck, operations,
                PoolingConfig.defaults());
    }

    /** A configuration without the operations settings of config.yaml: no admin port ({@link OperationsConfig#embedded()}). */
    public ProxyConfig(String databaseName, Map<String, DataSourceConfig> dataSources, ServerConfig server,
            List<UserConfig> users, Policy loadBalancer, HealthCheckConfig healthCheck) {
        this(databaseName, dataSources, server, users, loadBalancer, healthCheck, OperationsConfig.embedded());
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The first data source in file order. */
    public DataSourceConfig primaryDataSource() {
        return dataSources.values().iterator().next();
    }

    public ProxyConfig withServer(ServerConfig newServer) {
        return new ProxyConfig(databaseName, dataSources, newServer, users, loadBalancer, healthCheck,
                operations, pooling, readWriteSplitting, serverAccounts, queryRules, allowList);
    }

    /** With the users of {@code newUsers} (and not the server's accounts). */
    public ProxyConfig withUsers(List<UserConfig> newUsers) {
        return new ProxyConfig(databaseName, dataSources, server, newUsers, loadBalancer, healthCheck,
                operations, pooling, readWriteSplitting, null, queryRules, allowList);
    }

    /** Clients log in with the server's own accounts ({@code authority.users: FROM_BACKEND}). */
    public ProxyConfig withUsersFromBackend(ServerAccountsConfig settings) {
        return new ProxyConfig(databaseName, dataSources, server, List.of(), loadBalancer, healthCheck,
                operations, pooling, readWriteSplitting, settings, queryRules, allowList);
    }

    public ProxyConfig withOperations(OperationsConfig newOperations) {
        return new ProxyConfig(databaseName, dataSources, server, users, loadBalancer, healthCheck,
                newOperations, pooling, readWriteSplitting, serverAccounts, queryRules, allowList);
    }

    public ProxyConfig withDataSources(Map<String, DataSourceConfig> newDataSources) {
        return new ProxyConfig(databaseName, newDataSources, server, users, loadBalancer, healthCheck,
                operations, pooling, readWriteSplitting, serverAccounts, queryRules, allowList);
    }

    public ProxyConfig withReadWriteSplitting(List<ReadWriteSplittingConfig> groups) {
        return new ProxyConfig(databaseName, dataSources, server, users, loadBalancer, healthCheck, operations,
                pooling, groups, serverAccounts, queryRules, allowList);
    }

    public ProxyConfig withPooling(PoolingConfig newPooling) {
        return new ProxyConfig(databaseName, dataSources, server, users, loadBalancer, healthCheck, operations,
                newPooling, readWriteSplitting, serverAccounts, queryRules, allowList);
    }

    /** Builds a {@link ProxyConfig} in code, for embedding. */
    public static final class Builder {
        private String databaseName;
        private final Map<String, DataSourceConfig> dataSources = new LinkedHashMap<>();
        private ServerConfig server = ServerConfig.defaults();
        private final List<UserConfig> users = new ArrayList<>();
        private Policy loadBalancer = DEFAULT_LOAD_BALANCER;
        private HealthCheckConfig healthCheck = HealthCheckConfig.defaults();
        private OperationsConfig operations = OperationsConfig.embedded();
        private PoolingConfig pooling = PoolingConfig.defaults();
        private final List<ReadWriteSplittingConfig> readWriteSplitting = new ArrayList<>();
        private ServerAccountsConfig serverAccounts;

        private Builder() {
        }

        public Builder databaseName(String name) {
            this.databaseName = name;
            return this;
        }

        public Builder dataSource(DataSourceConfig dataSource) {
            dataSources.put(dataSource.name(), dataSource);
            return this;
        }

        /** Adds a data source with default pool settings. */
        public Builder dataSource(String name, String url, String username, String password) {
            return dataSource(DataSourceConfig.of(name, url, username, password));
        }

        public Builder server(ServerConfig serverConfig) {
            this.server = Objects.requireNonNull(serverConfig);
            return this;
        }

        /** Listens on this port; 0 picks a free one. */
        public Builder port(int port) {
            this.server = server.withPort(port);
            return this;
        }

        public Builder address(String address) {
            this.server = server.withAddress(address);
            return this;
        }

        /** Adds a proxy user with every setting of its own (hashed password, connection limit). */
        public Builder user(UserConfig user) {
            users.add(Objects.requireNonNull(user));
            return this;
        }

        /** Adds a proxy user; {@code user} may be {@code name@host}. */
        public Builder user(String user, String password) {
            users.add(UserConfig.parse(user, password));
            return this;
        }

        /** How new sessions are spread over the data sources; least connections by default. */
        public Builder loadBalancer(Policy policy) {
            this.loadBalancer = Objects.requireNonNull(policy);
            return this;
        }

        /** How data sources are health-checked; every 2000 ms, rise 2, fall 3 by default. */
        public Builder healthCheck(HealthCheckConfig config) {
            this.healthCheck = Objects.requireNonNull(config);
            return this;
        }

        /** The admin port, metrics, graceful shutdown and slow-query log; no admin port by default. */
        public Builder operations(OperationsConfig value) {
            this.operations = Objects.requireNonNull(value);
            return this;
        }

        /** Opens the admin HTTP port on {@code address:port}; {@code token} guards the mutating calls. */
        public Builder admin(String address, int port, String token) {
            this.operations = operations.withAdmin(AdminConfig.on(address, port, token));
            return this;
        }

        /** Session pooling (the default) or transaction pooling. */
        public Builder pooling(PoolingConfig value) {
            this.pooling = Objects.requireNonNull(value);
            return this;
        }

        /** Adds a read/write split group over data sources added with {@link #dataSource}. */
        public Builder readWriteSplitting(ReadWriteSplittingConfig group) {
            readWriteSplitting.add(Objects.requireNonNull(group));
            return this;
        }

        /** Clients log in with the server's own accounts ({@code authority.users: FROM_BACKEND}). */
        public Builder usersFromBackend(ServerAccountsConfig settings) {
            this.serverAccounts = Objects.requireNonNull(settings);
            return this;
        }

        public ProxyConfig build() {
            return new ProxyConfig(databaseName, dataSources, server, users, loadBalancer, healthCheck, operations,
                    pooling, readWriteSplitting, serverAccounts);
        }
    }
}
