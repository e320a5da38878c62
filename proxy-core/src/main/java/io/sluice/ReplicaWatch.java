package io.sluice;

import io.netty.util.concurrent.EventExecutor;
import io.sluice.backend.pool.BackendPool;
import io.sluice.balancer.replication.GtidPosition;
import io.sluice.balancer.replication.ReplicaEligibility;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.routing.ReadWriteGroup;
import java.util.ArrayList;
import java.util.List;
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

    ReplicaWatch(List<ReadWriteGroup> groups, Function<String, BackendPool> pools, long timeoutMillis) {
        this.groups = groups;
        this.pools = pools;
        this.timeoutMillis = timeoutMillis;
    }

    /** Starts the readings on {@code executor}, every {@code intervalMillis}. */
    void start(EventExecutor executor, long intervalMillis) {
        if (!groups.isEmpty()) {
            executor.scheduleWithFixedDelay(this::readAll, intervalMillis, intervalMillis, TimeUnit.MILLISECONDS);
        }
    }

    private void readAll() {
        for (ReadWriteGroup group : groups) {
            read(group);
        }
    }

    /** One round for {@code group}: every server read at once, then the replicas judged. */
    void read(ReadWriteGroup group) {
        List<String> names = group.config().dataSourceNames(); // the primary first
        List<CompletableFuture<ReplicationReading>> readings = new ArrayList<>(names.size());
        for (String name : names) {
            BackendPool pool = pools.apply(name);
            readings.add(pool == null ? CompletableFuture.completedFuture(ReplicationReading.unreachable(name,
                    "no such data source")) : pool.readReplication(timeoutMillis));
        }
        CompletableFuture.allOf(readings.toArray(CompletableFuture[]::new)).thenRun(() -> {
            ReplicationReading primary = readings.get(0).join();
            GtidPosition primaryPosition = primary.reachable() ? primary.applied() : null;
            ReplicaEligibility rules = group.config().replicaEligibility();
            for (int i = 1; i < readings.size(); i++) {
                ReplicationReading replica = readings.get(i).join();
                group.judged(primaryPosition != null ? rules.judge(replica, primaryPosition)
                        : withoutPrimary(replica));
            }
        });
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
