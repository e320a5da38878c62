package io.sluice;

import io.sluice.api.ReloadResult;
import io.sluice.backend.pool.BackendPool;
import io.sluice.balancer.Backend;
import io.sluice.balancer.BackendGroup;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.OperationsConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One config reload: compares the running configuration with the new one, applies what can change while sessions
 * run, and lists what needs a restart. The new file has already been parsed and validated as a whole (a bad file
 * never gets here), so applying cannot fail half-way for a reason in the file.
 *
 * <p>What changes without a restart, and how:
 * <ul>
 *   <li>a data source added: probed like at start; a pool and a backend in the group (down, and brought up by
 *       health checks, when the probe fails);
 *   <li>a data source removed: out of the group at once; its sessions carry on and its pool closes after the last;
 *   <li>weight, drain (when the file's value changed), pool sizes, timeouts and credentials of a data source;
 *   <li>users, databaseName, the load-balancing policy and the read/write splitting rules: from the next login;
 *   <li>the query rules ({@code !QUERY_RULES}): from the next statement of every session, running ones included;
 *   <li>the slow-query log and the shutdown timings.
 * </ul>
 * Everything else keeps its running value and is reported: the {@code server} section (listener, event loops),
 * {@code healthCheck}, {@code admin}, {@code metrics}, {@code reload}, and a data source's URL (that is another
 * server: add it under a new name).
 */
final class ConfigReload {
    private static final Logger log = LoggerFactory.getLogger(ConfigReload.class);

    private final Backends backends;
    private final ProxyConfig running;
    private final ProxyConfig next;
    private final List<String> changes = new ArrayList<>();
    private final List<String> restartRequired = new ArrayList<>();
    private ProxyConfig effective;

    ConfigReload(Backends backends, ProxyConfig running, ProxyConfig next) {
        this.backends = backends;
        this.running = running;
        this.next = next;
    }

    ReloadResult apply() {
        checkRestartOnly();
        Map<String, DataSourceConfig> dataSources = applyDataSources();
        boolean sameSource = Objects.equals(running.serverAccounts(), next.serverAccounts());
        if (sameSource && !running.users().equals(next.users())) {
            changes.add("authority.users: " + next.users().size() + " user(s), from the next login");
        }
        if (!Objects.equals(running.databaseName(), next.databaseName())) {
            changes.add("databaseName: " + next.databaseName());
        }
        if (running.loadBalancer() != next.loadBalancer()) {
            backends.group().setPolicy(next.loadBalancer());
            changes.add("loadBalancer.type: " + next.loadBalancer());
        }
        OperationsConfig runningOps = running.operations();
        OperationsConfig nextOps = next.operations();
        if (!runningOps.slowQueryLog().equals(nextOps.slowQueryLog())) {
            changes.add("slowQueryLog: " + (nextOps.slowQueryLog().enabled() ? "on at "
                    + nextOps.slowQueryLog().thresholdMilliseconds() + " ms" : "off"));
        }
        if (!runningOps.shutdown().equals(nextOps.shutdown())) {
            changes.add("shutdown: wait " + nextOps.shutdown().gracefulWaitBeforeShutdownMilliseconds()
                    + " ms, close timeout " + nextOps.shutdown().gracefulCloseTimeoutMilliseconds() + " ms");
        }
        effective = new ProxyConfig(next.databaseName(), dataSources, running.server(),
                sameSource ? next.users() : running.users(),
                next.loadBalancer(), running.healthCheck(), new OperationsConfig(runningOps.admin(),
                        runningOps.metrics(), nextOps.shutdown(), nextOps.slowQueryLog(),
                        runningOps.watchConfigFile(), runningOps.capture()), running.pooling(),
                next.readWriteSplitting(), running.serverAccounts(), next.queryRules(), next.allowList());
        if (!running.readWriteSplitting().equals(next.readWriteSplitting())) {
            changes.add("rules: " + next.readWriteSplitting().size() + " read/write splitting group(s), from the"
                    + " next login");
        }
        if (!running.queryRules().equals(next.queryRules())) {
            changes.add("rules: " + next.queryRules().size() + " query rule(s), from the next statement");
        }
        if (!java.util.Objects.equals(running.allowList(), next.allowList())) {
            changes.add("rules: " + (next.allowList() == null ? "no allow-list" : "allow-list "
                    + next.allowList().mode() + " for " + next.allowList().users().size() + " user(s)")
                    + ", from the next statement");
        }
        if (changes.isEmpty() && restartRequired.isEmpty()) {
            log.info("Config reload: no change");
        } else {
            log.info("Config reload applied: {}{}", changes.isEmpty() ? "nothing" : String.join("; ", changes),
                    restartRequired.isEmpty() ? "" : "; needs a restart, keeps its running value: "
                            + String.join("; ", restartRequired));
        }
        return new ReloadResult(changes, restartRequired);
    }

    /** The configuration now running: the new one, with the running values of what needs a restart. */
    ProxyConfig effective() {
        return effective;
    }

    private void checkRestartOnly() {
        ServerConfig a = running.server();
        ServerConfig b = next.server();
        differs("server.address", a.address(), b.address());
        differs("server.port", a.port(), b.port());
        differs("server.workerThreads", a.workerThreads(), b.workerThreads());
        differs("server.connBufferSize", a.connBufferSize(), b.connBufferSize());
        differs("server.maxConnections", a.maxConnections(), b.maxConnections());
        differs("server.serverVersion", a.serverVersion(), b.serverVersion());
        differs("server.maxPacketSize", a.maxPacketSize(), b.maxPacketSize());
        differs("server.transport", a.transport(), b.transport());
        if (!a.equals(b) && restartRequired.isEmpty()) {
            restartRequired.add("server"); // a key added to ServerConfig after this list was written
        }
        differs("healthCheck", running.healthCheck(), next.healthCheck());
        differs("pooling", running.pooling(), next.pooling());
        differs("admin", running.operations().admin(), next.operations().admin());
        differs("metrics.enabled", running.operations().metrics().enabled(), next.operations().metrics().enabled());
        differs("statistics", running.operations().metrics().statistics(), next.operations().metrics().statistics());
        differs("reload.watchFile", running.operations().watchConfigFile(), next.operations().watchConfigFile());
        // Where the users come from is wired at start: Sluice's own list and the server's accounts do not swap live.
        differs("authority.users: FROM_BACKEND", running.serverAccounts(), next.serverAccounts());
    }

    private void differs(String key, Object was, Object now) {
        if (!Objects.equals(was, now)) {
            // The admin record's toString hides the token.
            restartRequired.add(key + ": " + now + " (running: " + was + ")");
        }
    }

    private Map<String, DataSourceConfig> applyDataSources() {
        Map<String, DataSourceConfig> result = new LinkedHashMap<>();
        // Removed first, so that a session picking meanwhile never lands on a backend about to leave.
        for (DataSourceConfig old : running.dataSources().values()) {
            if (!next.dataSources().containsKey(old.name())) {
                Backend removed = backends.remove(old.name());
                changes.add("dataSources." + old.name() + ": removed (" + (removed == null ? 0
                        : removed.activeSessions()) + " session(s) carry on until they end)");
            }
        }
        List<DataSourceConfig> added = new ArrayList<>();
        for (DataSourceConfig now : next.dataSources().values()) {
            DataSourceConfig old = running.dataSources().get(now.name());
            if (old == null) {
                added.add(now);
                result.put(now.name(), now);
            } else if (!old.url().equals(now.url())) {
                restartRequired.add("dataSources." + now.name() + ".url: " + now.url() + " (running: " + old.url()
                        + "; add the new server under a new name instead)");
                result.put(now.name(), old);
            } else {
                update(old, now);
                result.put(now.name(), now);
            }
        }
        if (!added.isEmpty()) {
            ProbeResult probe = ProbeResult.probe(added);
            for (DataSourceConfig dataSource : added) {
                boolean reachable = probe.reachable().contains(dataSource.name());
                Backend backend = backends.add(dataSource, reachable);
                changes.add("dataSources." + dataSource.name() + ": added (" + backend.status()
                        + (reachable ? "" : ", unreachable: up after healthCheck.rise checks") + ")");
            }
        }
        return result;
    }

    private void update(DataSourceConfig old, DataSourceConfig now) {
        String name = now.name();
        BackendGroup group = backends.group();
        if (old.weight() != now.weight()) {
            group.setWeight(name, now.weight());
            changes.add("dataSources." + name + ".weight: " + now.weight());
        }
        // Only a change in the file drains or undrains: a drain through the API survives an unrelated reload.
        if (old.drain() != now.drain()) {
            if (now.drain()) {
                group.drain(name);
            } else {
                group.undrain(name);
            }
            changes.add("dataSources." + name + ".drain: " + now.drain());
        }
        if (!samePoolSettings(old, now)) {
            BackendPool pool = backends.pool(name);
            if (pool != null) {
                pool.update(now);
            }
            boolean credentials = !old.username().equals(now.username()) || !old.password().equals(now.password());
            changes.add("dataSources." + name + ": pool " + describePool(now)
                    + (credentials ? ", credentials changed (for new connections)" : ""));
        }
    }

    private static boolean samePoolSettings(DataSourceConfig a, DataSourceConfig b) {
        return a.username().equals(b.username()) && a.password().equals(b.password())
                && a.connectionTimeoutMilliseconds() == b.connectionTimeoutMilliseconds()
                && a.idleTimeoutMilliseconds() == b.idleTimeoutMilliseconds()
                && a.maxLifetimeMilliseconds() == b.maxLifetimeMilliseconds()
                && a.maxPoolSize() == b.maxPoolSize() && a.minPoolSize() == b.minPoolSize();
    }

    /** Sizes and timeouts; credentials only as "changed", never their values. */
    private static String describePool(DataSourceConfig d) {
        return "maxPoolSize " + d.maxPoolSize() + ", minPoolSize " + d.minPoolSize() + ", connectionTimeout "
                + d.connectionTimeoutMilliseconds() + " ms, idleTimeout " + d.idleTimeoutMilliseconds()
                + " ms, maxLifetime " + d.maxLifetimeMilliseconds() + " ms";
    }
}
