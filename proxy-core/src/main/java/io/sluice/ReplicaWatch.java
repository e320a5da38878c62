package io.sluice;

import io.netty.util.concurrent.EventExecutor;
import io.sluice.backend.pool.BackendPool;
import io.sluice.balancer.replication.GtidPosition;
import io.sluice.balancer.replication.ReplicaEligibility;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.balancer.replication.Roles;
import io.sluice.config.JdbcUrl;
import io.sluice.routing.ReadWriteGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * Reads each read/write split group's servers every health-check interval (read-only, GTID positions, the replica
 * status) and judges its replicas against the primary ({@link ReplicaEligibility}): a replica whose replication is
 * stopped, that lags past {@code maxReplicationLagMilliseconds} or that is writable takes no reads until it is
 * usable again. Health checks still decide up and down; this decides which up replicas may read.
 */
final class ReplicaWatch {
    private final List<ReadWriteGroup> groups;
    private final Function<String, BackendPool> pools;
    private final long timeoutMillis;
    /** The groups with {@code autoFailover: true}, by name. */
    private final Map<String, FailoverWatch> failovers;

    ReplicaWatch(List<ReadWriteGroup> groups, Function<String, BackendPool> pools, long timeoutMillis) {
        this(groups, pools, timeoutMillis, Map.of());
    }

    ReplicaWatch(List<ReadWriteGroup> groups, Function<String, BackendPool> pools, long timeoutMillis,
            Map<String, FailoverWatch> failovers) {
        this.groups = groups;
        this.pools = pools;
        this.timeoutMillis = timeoutMillis;
        this.failovers = failovers;
    }

    /** Starts the readings on {@code executor}, every {@code intervalMillis}. */
    void start(EventExecutor executor, long intervalMillis) {
        if (!groups.isEmpty()) {
            // A group that follows read_only takes no write before its first round: that one runs at once.
            long first = groups.stream().anyMatch(g -> g.config().followsPrimary()) ? 0 : intervalMillis;
            executor.scheduleWithFixedDelay(this::readAll, first, intervalMillis, TimeUnit.MILLISECONDS);
        }
    }

    private void readAll() {
        for (ReadWriteGroup group : groups) {
            read(group);
        }
    }

    /**
     * One round for {@code group}: every server read at once; a group that follows its servers' {@code read_only}
     * learns its primary from them (issue #40, {@link io.sluice.balancer.replication.Topology}); then the others are
     * judged as replicas against the primary.
     */
    void read(ReadWriteGroup group) {
        List<String> names = group.config().dataSourceNames(); // the configured primary first
        long since = group.topology().version();
        List<CompletableFuture<ReplicationReading>> readings = new ArrayList<>(names.size());
        for (String name : names) {
            BackendPool pool = pools.apply(name);
            readings.add(pool == null ? CompletableFuture.completedFuture(ReplicationReading.unreachable(name,
                    "no such data source")) : pool.ownConnections().readReplication(timeoutMillis));
        }
        CompletableFuture.allOf(readings.toArray(CompletableFuture[]::new)).thenRun(() -> {
            List<ReplicationReading> all = readings.stream().map(CompletableFuture::join).toList();
            Roles roles = group.topology().observe(all, since);
            if (roles == null) {
                return; // a switchover changed the roles while the servers were read: these readings are stale
            }
            FailoverWatch failover = failovers.get(group.name());
            if (failover != null) {
                failover.afterRound(all, roles);
            }
            String primaryName = roles.primary();
            ReplicationReading primary = all.stream().filter(r -> r.server().equals(primaryName)).findFirst()
                    .orElse(ReplicationReading.unreachable(primaryName, "not read"));
            // A group that follows its servers judges against a primary only while it has one that takes writes.
            GtidPosition primaryPosition = primary.reachable() && (!group.dynamic() || roles.takesWrites())
                    ? primary.applied() : null;
            ReplicaEligibility rules = group.config().replicaEligibility();
            for (ReplicationReading replica : all) {
                if (group.topology().isFenced(replica.server())) {
                    group.judged(new ReplicaEligibility.Judgement(replica.server(),
                            ReplicaEligibility.Verdict.NOT_A_REPLICA, -1, -1, "fenced after a failover: out of the"
                            + " group until an operator rejoins it"));
                } else if (!replica.server().equals(primaryName)) {
                    ReplicaEligibility.Judgement judged = primaryPosition != null
                            ? rules.judge(replica, primaryPosition) : withoutPrimary(replica);
                    String source = judged.usable() && primaryPosition != null ? staleSource(replica, all, primary)
                            : null;
                    group.judged(source == null ? judged : new ReplicaEligibility.Judgement(replica.server(),
                            ReplicaEligibility.Verdict.OTHER_SOURCE, judged.secondsBehind(),
                            judged.transactionsBehind(), "replicates from " + source + ", which does not replicate"
                            + " from the primary " + primaryName + ": the primary's writes do not reach it"));
                }
            }
        });
    }

    /**
     * The group server {@code replica} replicates from when that is neither the primary nor a replica of it (the old
     * primary during a switchover, before the replica is pointed at the new one: causal reads would wait there for
     * writes that never come), or {@code null}. Only servers of the group named as their URLs name them are known
     * (decision 185): a source named otherwise is taken as before, by the replica's own status.
     */
    private String staleSource(ReplicationReading replica, List<ReplicationReading> all,
            ReplicationReading primary) {
        JdbcUrl at = url(primary.server());
        if (at == null || replica.replicatesFrom(at.host(), at.port())) {
            return null;
        }
        for (ReplicationReading other : all) {
            JdbcUrl url = url(other.server());
            if (url != null && !other.server().equals(primary.server()) && !other.server().equals(replica.server())
                    && replica.replicatesFrom(url.host(), url.port())) {
                return other.replicatesFrom(at.host(), at.port()) ? null : other.server(); // a chain is fine
            }
        }
        return null;
    }

    private JdbcUrl url(String server) {
        BackendPool pool = pools.apply(server);
        return pool == null ? null : pool.url();
    }

    /**
     * A replica judged while the primary cannot be read (it is down): its IO thread cannot connect and its lag is
     * unknown, which is expected, so it keeps taking reads while it is read-only and applying what it has. Reads
     * then stay available, stale by what the primary wrote last, which causal reads cannot wait for.
     */
    static ReplicaEligibility.Judgement withoutPrimary(ReplicationReading replica) {
        ReplicaEligibility.Verdict verdict = !replica.reachable() ? ReplicaEligibility.Verdict.UNREACHABLE
                : !replica.readOnly() ? ReplicaEligibility.Verdict.WRITABLE
                : replica.replica() && !replica.sqlRunning() ? ReplicaEligibility.Verdict.SQL_STOPPED
                : ReplicaEligibility.Verdict.USABLE;
        return new ReplicaEligibility.Judgement(replica.server(), verdict, replica.secondsBehind(), -1,
                "the primary cannot be read; " + (replica.error().isEmpty() ? verdict.label() : replica.error()));
    }
}
