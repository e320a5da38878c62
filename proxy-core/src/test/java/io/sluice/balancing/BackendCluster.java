package io.sluice.balancing;

import io.sluice.Sluice;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.Transport;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Three MariaDB servers of the test's own (a, b, c) and proxies in front of them, for the balancing and failover
 * tests. Each server is told apart by its port, which a session reads with {@code SELECT @@port}.
 */
public final class BackendCluster implements AutoCloseable {
    public static final List<String> NAMES = List.of("a", "b", "c");
    /** Fast checks so that the tests take seconds, not the default's minutes. */
    public static final HealthCheckConfig FAST_CHECKS = new HealthCheckConfig(200, 1000, 2, 3);

    private static BackendCluster shared;

    final Map<String, ExtraMariaDb> servers = new LinkedHashMap<>();

    /**
     * The cluster every test class of this JVM shares, started on first use and stopped when the JVM exits: an
     * embedded server takes tens of seconds to start, so three per test class would be too slow.
     */
    public static synchronized BackendCluster shared() {
        if (shared == null) {
            BackendCluster cluster = new BackendCluster();
            Runtime.getRuntime().addShutdownHook(new Thread(cluster::close, "sluice-test-cluster-stop"));
            shared = cluster;
        }
        shared.restoreAll();
        return shared;
    }

    private BackendCluster() {
        try {
            for (String name : NAMES) {
                servers.put(name, ExtraMariaDb.start("backend-" + name));
            }
        } catch (RuntimeException e) {
            close();
            throw e;
        }
    }

    public ExtraMariaDb server(String name) {
        return servers.get(name);
    }

    /** The backend name for a port a session read. */
    public String nameOfPort(int port) {
        return servers.entrySet().stream().filter(e -> e.getValue().port() == port).map(Map.Entry::getKey)
                .findFirst().orElseThrow(() -> new AssertionError("no backend on port " + port));
    }

    /** A proxy over every server, each with the weight {@code weights} gives (1 when absent). */
    Sluice startProxy(Policy policy, HealthCheckConfig checks, Function<String, Integer> weights) {
        return startProxy(policy, checks, weights, PoolingConfig.defaults());
    }

    /** As above, in the pooling mode given. */
    public Sluice startProxy(Policy policy, HealthCheckConfig checks, Function<String, Integer> weights,
            PoolingConfig pooling) {
        return Sluice.start(config(policy, checks, weights, pooling, NAMES));
    }

    /** A proxy's config over the servers {@code names}, each of weight 1. */
    ProxyConfig config(Policy policy, HealthCheckConfig checks, PoolingConfig pooling, List<String> names) {
        return config(policy, checks, name -> 1, pooling, names);
    }

    private ProxyConfig config(Policy policy, HealthCheckConfig checks, Function<String, Integer> weights,
            PoolingConfig pooling, List<String> names) {
        return config(policy, checks, weights, pooling, names, null).build();
    }

    /**
     * A proxy over every server whose clients name the database {@code alias}: each data source's URL names the
     * database {@code alias + "_" + its name} (pass-through's {@code databaseName} alias).
     */
    Sluice startProxyWithAlias(Policy policy, PoolingConfig pooling, String alias) {
        return Sluice.start(config(policy, FAST_CHECKS, name -> 1, pooling, NAMES, alias).databaseName(alias)
                .build());
    }

    private ProxyConfig.Builder config(Policy policy, HealthCheckConfig checks, Function<String, Integer> weights,
            PoolingConfig pooling, List<String> names, String alias) {
        ProxyConfig.Builder builder = ProxyConfig.builder()
                .pooling(pooling)
                .server(new ServerConfig("127.0.0.1", 0, 2, ServerConfig.DEFAULT_CONN_BUFFER_SIZE, 0, null,
                        ServerConfig.DEFAULT_MAX_PACKET_SIZE, Transport.AUTO))
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .loadBalancer(policy)
                .healthCheck(checks);
        for (String name : names) {
            builder.dataSource(new DataSourceConfig(name, server(name).jdbcUrl(alias == null ? null : alias + "_" + name),
                    TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD, 3000, 60_000, 600_000, 50, 0,
                    weights.apply(name), false));
        }
        return builder;
    }

    Sluice startProxy(Policy policy) {
        return startProxy(policy, FAST_CHECKS, name -> 1);
    }

    static Connection connect(Sluice sluice) throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), null, ""),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    /** The backend a session is on, by asking the server it reaches. */
    String backendOf(Connection connection) throws SQLException {
        try (Statement s = connection.createStatement(); ResultSet rs = s.executeQuery("SELECT @@port")) {
            rs.next();
            return nameOfPort(rs.getInt(1));
        }
    }

    static BackendStatus status(Sluice sluice, String name) {
        return sluice.backends().stream().filter(b -> b.state().name().equals(name)).findFirst().orElseThrow()
                .state().status();
    }

    /** Waits until the proxy reports {@code name} in {@code wanted}; fails after {@code seconds}. */
    static long awaitStatus(Sluice sluice, String name, BackendStatus wanted, int seconds)
            throws InterruptedException {
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(seconds);
        while (status(sluice, name) != wanted) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " is " + status(sluice, name) + ", not " + wanted + " after "
                        + seconds + " s: " + sluice.backends());
            }
            Thread.sleep(10);
        }
        return System.nanoTime();
    }

    /** Starts every server that a test stopped. */
    void restoreAll() {
        for (ExtraMariaDb server : servers.values()) {
            if (!server.isListening()) {
                server.startAgain();
            }
        }
    }

    @Override
    public void close() {
        servers.values().forEach(ExtraMariaDb::close);
    }
}
