package io.sluice;

import io.sluice.backend.pool.BackendPool;
import io.sluice.balancer.BackendGroup;
import io.sluice.balancer.replication.ReplicaEligibility;
import io.sluice.balancer.replication.Roles;
import io.sluice.config.DataSourceConfig;
import io.sluice.routing.ReadWriteGroup;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a read/write split group's new roles to the proxy (issue #40): the new primary's pool opens read-write
 * connections and its backend takes the group's sessions (its configured weight), every other server's pool opens
 * read-only ones and its backend takes no session of its own (weight 0). Says in the log what changed and why: a WARN
 * for a group without a primary or in a split brain, an INFO when a primary takes writes again. Connections already
 * open change their access mode when a split session next takes them ({@code ReadWriteSplitting}).
 */
final class PrimaryChanges {
    private static final Logger log = LoggerFactory.getLogger(PrimaryChanges.class);

    private final ReadWriteGroup group;
    private final Function<String, BackendPool> pools;
    private final BackendGroup backends;
    private final Map<String, DataSourceConfig> dataSources;
    /** The primary that took writes last; changed on the thread that changes the roles (they are synchronized). */
    private String lastPrimary;

    private PrimaryChanges(ReadWriteGroup group, Function<String, BackendPool> pools, BackendGroup backends,
            Map<String, DataSourceConfig> dataSources) {
        this.group = group;
        this.pools = pools;
        this.backends = backends;
        this.dataSources = dataSources;
    }

    /** Follows {@code group}'s role changes from now on; nothing for a group whose primary never changes. */
    static void follow(ReadWriteGroup group, Function<String, BackendPool> pools, BackendGroup backends,
            Map<String, DataSourceConfig> dataSources) {
        if (group.dynamic()) {
            // first: a write woken by the change must find the new primary's pool and the replicas' judgements set
            group.topology().onChangeFirst(new PrimaryChanges(group, pools, backends, dataSources)::changed);
        }
    }

    private void changed(Roles roles) {
        switch (roles.state()) {
            case PRIMARY -> {
                String before = lastPrimary;
                lastPrimary = roles.primary();
                if (before != null && !before.equals(roles.primary())) {
                    // Every other server's judgement is from before the change: the old primary's from before it was
                    // the primary, or none; the replicas' from when they replicated from it. Each takes no reads until
                    // the replica watch finds it replicating from the new one: a causal read would wait on a replica
                    // not yet pointed at it for writes that cannot reach it (decision 193).
                    for (String server : group.topology().servers()) {
                        if (!server.equals(roles.primary())) {
                            group.judged(new ReplicaEligibility.Judgement(server,
                                    ReplicaEligibility.Verdict.OTHER_SOURCE, -1, -1, (server.equals(before)
                                    ? "the primary until now" : "a replica of " + before) + ": takes reads once it"
                                    + " replicates from " + roles.primary()));
                        }
                    }
                }
                for (String server : group.topology().servers()) {
                    boolean primary = server.equals(roles.primary());
                    BackendPool pool = pools.apply(server);
                    if (pool != null) {
                        pool.servesReplica(!primary);
                    }
                    DataSourceConfig config = dataSources.get(server);
                    backends.setWeight(server, primary && config != null ? Math.max(1, config.weight()) : 0);
                }
                log.info("read/write group {}: primary {} takes writes ({})", group.name(), roles.primary(),
                        roles.detail());
            }
            case NO_PRIMARY -> log.warn("read/write group {}: no primary; statements that need it wait up to {} ms"
                    + " ({})", group.name(), group.config().primaryWait().toMillis(), roles.detail());
            case SPLIT_BRAIN -> log.warn("read/write group {}: SPLIT BRAIN, {} are all writable; writes go to none"
                    + " until exactly one is", group.name(), String.join(" and ", roles.writable()));
            case SWITCHING -> log.info("read/write group {}: switchover: writes held ({})", group.name(),
                    roles.detail());
        }
    }
}
