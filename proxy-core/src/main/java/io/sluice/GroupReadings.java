package io.sluice;

import io.sluice.backend.pool.BackendPool;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.balancer.replication.Topology;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * Every server of a read/write group read at once, on Sluice's own connections: what a switchover and a failover
 * decide from.
 */
final class GroupReadings {

    private GroupReadings() {
    }

    /** Each server's replication reading, in the topology's order; a name without a pool reads as unreachable. */
    static List<ReplicationReading> readAll(Topology topology, Function<String, BackendPool> pools,
            long readTimeoutMillis) {
        List<CompletableFuture<ReplicationReading>> reading = new ArrayList<>();
        for (String server : topology.servers()) {
            BackendPool pool = pools.apply(server);
            reading.add(pool == null ? CompletableFuture.completedFuture(ReplicationReading.unreachable(server,
                    "no such data source")) : pool.ownConnections().readReplication(readTimeoutMillis));
        }
        return reading.stream().map(CompletableFuture::join).toList();
    }
}
