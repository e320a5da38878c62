package io.sluice.api;

import io.netty.channel.EventLoopGroup;
import io.sluice.metrics.TrafficCounters;
import io.sluice.rules.QueryRules;
import io.sluice.statistics.DigestStatistics;
import java.util.List;
import java.util.Objects;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What a metrics exporter reads of a running proxy, each at scrape time: the counters the command path writes and
 * suppliers of the rest. The proxy hands these out ({@code Sluice.metricSources()}) rather than the exporter reaching
 * into it, so that the exporter can sit on top of the proxy and be left out by an embedder who has no use for it.
 *
 * @param traffic the per-loop command and byte counters
 * @param workers the relay event loops, for their pending-task gauges
 * @param clients client connections, refusals, failed logins and pins
 * @param backends every backend's state and pool
 * @param draining whether graceful shutdown has begun
 * @param readWrite the read/write split groups, as configured at start
 * @param digests statement statistics by digest, or {@code null} when off
 * @param digestsTopN how many digests, the largest by total time, get series of their own
 * @param queryRules the running query rules, whose counters are series by rule name, or {@code null}: none
 */
public record MetricSources(TrafficCounters traffic, EventLoopGroup workers, ClientCounts clients,
        Supplier<List<BackendSnapshot>> backends, BooleanSupplier draining, List<ReadWriteCounts> readWrite,
        DigestStatistics digests, int digestsTopN, QueryRules queryRules) {

    /** Without query rules. */
    public MetricSources(TrafficCounters traffic, EventLoopGroup workers, ClientCounts clients,
            Supplier<List<BackendSnapshot>> backends, BooleanSupplier draining, List<ReadWriteCounts> readWrite,
            DigestStatistics digests, int digestsTopN) {
        this(traffic, workers, clients, backends, draining, readWrite, digests, digestsTopN, null);
    }

    /** Without statement statistics by digest. */
    public MetricSources(TrafficCounters traffic, EventLoopGroup workers, ClientCounts clients,
            Supplier<List<BackendSnapshot>> backends, BooleanSupplier draining, List<ReadWriteCounts> readWrite) {
        this(traffic, workers, clients, backends, draining, readWrite, null, 0);
    }

    /** Without read/write split groups. */
    public MetricSources(TrafficCounters traffic, EventLoopGroup workers, ClientCounts clients,
            Supplier<List<BackendSnapshot>> backends, BooleanSupplier draining) {
        this(traffic, workers, clients, backends, draining, List.of());
    }

    public MetricSources {
        Objects.requireNonNull(traffic, "traffic");
        Objects.requireNonNull(workers, "workers");
        Objects.requireNonNull(clients, "clients");
        Objects.requireNonNull(backends, "backends");
        Objects.requireNonNull(draining, "draining");
        readWrite = List.copyOf(readWrite);
    }
}
