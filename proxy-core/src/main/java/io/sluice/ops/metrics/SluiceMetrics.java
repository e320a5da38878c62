package io.sluice.ops.metrics;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmInfoMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyAllocatorMetrics;
import io.micrometer.core.instrument.binder.netty4.NettyEventExecutorMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.ClassicHistogramBuckets;
import io.prometheus.metrics.model.snapshots.CounterSnapshot.CounterDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot.GaugeDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot.HistogramDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.HistogramSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot.InfoDataPointSnapshot;
import io.prometheus.metrics.model.snapshots.InfoSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.sluice.api.BackendSnapshot;
import io.sluice.api.BuildInfo;
import io.sluice.api.ClientCounts;
import io.sluice.api.MetricSources;
import io.sluice.api.ReadWriteCounts;
import io.sluice.balancer.BackendState;
import io.sluice.balancer.BackendStatus;
import io.sluice.metrics.CommandTypes;
import io.sluice.metrics.DirectMemory;
import io.sluice.metrics.LatencyBuckets;
import io.sluice.metrics.LoopCounters;
import io.sluice.metrics.TrafficCounters;
import io.sluice.rules.QueryRule;
import io.sluice.rules.QueryRules;
import io.sluice.statistics.DigestOrder;
import io.sluice.statistics.DigestStatistics;
import io.sluice.statistics.DigestSummary;
import java.util.List;

/**
 * Sluice's metrics, served as Prometheus text on {@code GET /metrics}.
 *
 * <ul>
 *   <li>Micrometer meters for what has a fixed set of labels: JVM, GC, threads, classes, process, file descriptors,
 *       Netty's allocator and event loops, client connections.
 *   <li>A Prometheus collector, registered on the same registry and read at scrape time, for what the command path
 *       counts in per-loop arrays ({@link LoopCounters}: commands, errors, latency histograms, bytes) and for what
 *       comes and goes with config reload (one set of series per backend). Micrometer's own {@code Timer} would cost
 *       several atomic operations on shared cache lines per command; see docs/decisions/020.
 * </ul>
 */
public final class SluiceMetrics implements AutoCloseable {

    private static final double[] BOUNDS = LatencyBuckets.upperBoundsSeconds();

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmGcMetrics gc = new JvmGcMetrics();
    private final TrafficCounters traffic;
    /** Held here: Micrometer keeps only a weak reference to the objects its function meters read. */
    private final MetricSources sources;

    /**
     * Binds the JVM, process and Netty meters and Sluice's own to a new registry.
     *
     * @param sources what is read at each scrape: the counters the command path writes, the event loops, client
     *     counts, the backends and the draining flag ({@code Sluice.metricSources()})
     */
    public SluiceMetrics(MetricSources sources) {
        this.sources = sources;
        this.traffic = sources.traffic();
        new ClassLoaderMetrics().bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        gc.bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new JvmInfoMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
        new FileDescriptorMetrics().bindTo(registry);
        if (ByteBufAllocator.DEFAULT instanceof ByteBufAllocatorMetricProvider provider) {
            new NettyAllocatorMetrics(provider).bindTo(registry);
        }
        new NettyEventExecutorMetrics(sources.workers()).bindTo(registry);
        // Direct memory as Sluice admits clients by it (DirectMemoryHeadroom): Netty's count, or the JDK's direct
        // pool when Netty's buffers are the JDK's; jvm_buffer_* has no limit, and netty_allocator_* none either.
        Gauge.builder("sluice.direct.memory.used", DirectMemory::used).baseUnit("bytes")
                .description("Direct memory in use (Netty's count, or the JDK's direct buffer pool)")
                .register(registry);
        Gauge.builder("sluice.direct.memory.max", DirectMemory::max).baseUnit("bytes")
                .description("The most direct memory the JVM may use (-XX:MaxDirectMemorySize)").register(registry);
        if (ResidentMemory.available()) {
            Gauge.builder("process.resident.memory", ResidentMemory::bytes).baseUnit("bytes")
                    .description("Resident set size of the process (Linux /proc/self/status)").register(registry);
        }

        ClientCounts clients = sources.clients();
        Gauge.builder("sluice.client.connections", clients, ClientCounts::open)
                .description("Client connections open now").register(registry);
        FunctionCounter.builder("sluice.client.connections.accepted", clients, ClientCounts::accepted)
                .description("Client connections admitted").register(registry);
        FunctionCounter.builder("sluice.client.connections.rejected", clients, ClientCounts::refusedTooMany)
                .tag("reason", "max_connections").description("Client connections refused").register(registry);
        FunctionCounter.builder("sluice.client.connections.rejected", clients, ClientCounts::refusedWhileClosing)
                .tag("reason", "shutdown").description("Client connections refused").register(registry);
        FunctionCounter.builder("sluice.client.auth.failures", clients, ClientCounts::authenticationFailures)
                .description("Logins refused for a wrong password or an unknown user").register(registry);
        List<String> pinReasons = clients.pinReasons(); // empty unless pooling: TRANSACTION
        for (int i = 0; i < pinReasons.size(); i++) {
            int index = i;
            FunctionCounter.builder("sluice.session.pins", clients, c -> c.pins(index))
                    .tag("reason", pinReasons.get(i))
                    .description("Sessions pinned to their backend connection between transactions "
                            + "(pooling: TRANSACTION), by what pinned them")
                    .register(registry);
            Gauge.builder("sluice.sessions.pinned", clients, c -> c.pinnedNow(index))
                    .tag("reason", pinReasons.get(i))
                    .description("Sessions holding their backend connection between transactions now "
                            + "(pooling: TRANSACTION), by the first reason each is pinned for")
                    .register(registry);
        }
        List<String> moveReasons = clients.moveReasons();
        for (int i = 0; i < moveReasons.size(); i++) {
            int index = i;
            FunctionCounter.builder("sluice.session.moves", clients, c -> c.moves(index))
                    .tag("reason", moveReasons.get(i))
                    .description("Live sessions moved to another backend between transactions (pooling: "
                            + "TRANSACTION), by what asked for the move")
                    .register(registry);
        }
        List<String> moveRefusals = clients.moveRefusals();
        for (int i = 0; i < moveRefusals.size(); i++) {
            int index = i;
            FunctionCounter.builder("sluice.session.moves.refused", clients, c -> c.movesRefused(index))
                    .tag("reason", moveRefusals.get(i))
                    .description("Sessions asked to move to another backend that stayed, by why")
                    .register(registry);
        }
        for (ReadWriteCounts split : sources.readWrite()) {
            List<String> reasons = split.routeReasons();
            for (int i = 0; i < reasons.size(); i++) {
                int index = i;
                FunctionCounter.builder("sluice.readwrite.statements", split, g -> g.routes(index))
                        .tag("group", split.group()).tag("route", reasons.get(i))
                        .description("Statements of read/write split sessions, by where they went and why")
                        .register(registry);
            }
            List<String> replicas = split.replicas();
            for (int i = 0; i < replicas.size(); i++) {
                int index = i;
                Gauge.builder("sluice.readwrite.replica.lag", split, g -> g.secondsBehind(index))
                        .tag("group", split.group()).tag("replica", replicas.get(i)).baseUnit("seconds")
                        .description("Replication delay the replica last reported (Seconds_Behind_Master)")
                        .register(registry);
                Gauge.builder("sluice.readwrite.replica.usable", split, g -> g.usable(index) ? 1 : 0)
                        .tag("group", split.group()).tag("replica", replicas.get(i))
                        .description("1 while the replica takes reads: up, replicating, within the lag threshold")
                        .register(registry);
            }
            topology(split);
            List<String> outcomes = split.causalOutcomes();
            for (int i = 0; i < outcomes.size(); i++) {
                int index = i;
                FunctionCounter.builder("sluice.readwrite.causal.waits", split, g -> g.causalWaits(index))
                        .tag("group", split.group()).tag("outcome", outcomes.get(i))
                        .description("Causal reads' waits on a replica for the session's last write, by outcome")
                        .register(registry);
            }
        }
        Gauge.builder("sluice.draining", () -> sources.draining().getAsBoolean() ? 1 : 0)
                .description("1 once graceful shutdown has begun (/health answers 503)").register(registry);

        registry.getPrometheusRegistry().register((MultiCollector) this::collect);
    }

    /** A read/write split group's primary and its changes (issue #40). */
    private void topology(ReadWriteCounts split) {
        List<String> servers = split.dataSources();
        for (int i = 0; i < servers.size(); i++) {
            int index = i;
            Gauge.builder("sluice.topology.primary", split, g -> g.isPrimary(index) ? 1 : 0)
                    .tag("group", split.group()).tag("datasource", servers.get(i))
                    .description("1 for the server that is the group's primary and takes writes now")
                    .register(registry);
        }
        Gauge.builder("sluice.topology.split.brain", split, g -> g.topologyState().equals("split_brain") ? 1 : 0)
                .tag("group", split.group())
                .description("1 while two or more of the group's servers are writable: writes go to none")
                .register(registry);
        Gauge.builder("sluice.topology.without.primary", split, g -> g.topologyState().equals("primary") ? 0 : 1)
                .tag("group", split.group())
                .description("1 while no server of the group takes writes (none writable, a split brain, a switchover)")
                .register(registry);
        FunctionCounter.builder("sluice.topology.primary.changes", split, ReadWriteCounts::primaryChanges)
                .tag("group", split.group())
                .description("Times the group's primary changed to another server since start")
                .register(registry);
        for (boolean switched : new boolean[] {true, false}) {
            FunctionCounter.builder("sluice.topology.switchovers", split, g -> g.switchovers(switched))
                    .tag("group", split.group()).tag("outcome", switched ? "switched" : "not_switched")
                    .description("Planned switchovers that held writes, by whether they switched")
                    .register(registry);
        }
        Gauge.builder("sluice.topology.switchover.writes.held", split,
                        ReadWriteCounts::lastSwitchoverWritesHeldSeconds)
                .tag("group", split.group()).baseUnit("seconds")
                .description("How long the last planned switchover held statements that need the primary")
                .register(registry);
        for (boolean promoted : new boolean[] {true, false}) {
            FunctionCounter.builder("sluice.topology.failovers", split, g -> g.failovers(promoted))
                    .tag("group", split.group()).tag("outcome", promoted ? "promoted" : "not_promoted")
                    .description("Unplanned failovers begun by this instance, by whether it promoted a replica")
                    .register(registry);
        }
        Gauge.builder("sluice.topology.failover.duration", split, ReadWriteCounts::lastFailoverSeconds)
                .tag("group", split.group()).baseUnit("seconds")
                .description("How long the last failover took, from the primary declared gone to writes released")
                .register(registry);
        Gauge.builder("sluice.topology.fenced", split, ReadWriteCounts::fencedServers)
                .tag("group", split.group())
                .description("Servers fenced after a failover, kept out of the group until an operator rejoins them")
                .register(registry);
        Gauge.builder("sluice.topology.statements.waiting", split, ReadWriteCounts::waitingForPrimary)
                .tag("group", split.group())
                .description("Statements waiting now for the group's primary to take writes")
                .register(registry);
    }

    /** The registry, for embedders who want to add their own meters or bind it elsewhere. */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** Everything, in the Prometheus text format 0.0.4. */
    public String scrape() {
        return registry.scrape();
    }

    /** The content type of {@link #scrape()}. */
    public static String contentType() {
        return "text/plain; version=0.0.4; charset=utf-8";
    }

    /**
     * {@code sluice_build_info{version="0.1.0",java_version="17.0.13+11"} 1}: Prometheus's info-metric convention, so
     * a dashboard or alert can join the version onto any other series ({@code * on (instance) group_left(version)}).
     */
    private static final InfoSnapshot BUILD_INFO = InfoSnapshot.builder().name("sluice_build")
            .help("Which Sluice runs: its version and the Java runtime's, as labels; always 1")
            .dataPoint(InfoDataPointSnapshot.builder()
                    .labels(Labels.of("version", BuildInfo.version(), "java_version", BuildInfo.javaVersion()))
                    .build())
            .build();

    private MetricSnapshots collect() {
        MetricSnapshots.Builder all = MetricSnapshots.builder();
        all.metricSnapshot(BUILD_INFO);
        collectCommands(all);
        collectBackends(all);
        if (sources.digests() != null) {
            collectDigests(all, sources.digests(), sources.digestsTopN());
        }
        if (sources.queryRules() != null) {
            collectRules(all, sources.queryRules());
        }
        return all.build();
    }

    private void collectCommands(MetricSnapshots.Builder all) {
        CounterSnapshot.Builder commands = CounterSnapshot.builder().name("sluice_commands")
                .help("Commands received from clients, by type");
        CounterSnapshot.Builder errors = CounterSnapshot.builder().name("sluice_command_errors")
                .help("Responses that were or ended with an ERR packet, by command type");
        HistogramSnapshot.Builder durations = HistogramSnapshot.builder().name("sluice_command_duration_seconds")
                .help("Time from forwarding a command to the end of its response, by command type");
        List<LoopCounters> loops = traffic.loops();
        for (int type = 0; type < CommandTypes.COUNT; type++) {
            long received = 0;
            long failed = 0;
            long timed = 0;
            long sumNanos = 0;
            long[] buckets = new long[LatencyBuckets.COUNT];
            for (LoopCounters loop : loops) {
                received += loop.commands(type);
                failed += loop.failures(type);
                timed += loop.timed(type);
                sumNanos += loop.sumNanos(type);
                for (int b = 0; b < buckets.length; b++) {
                    buckets[b] += loop.bucket(type, b);
                }
            }
            if (received == 0 && timed == 0) {
                continue; // a type never seen: no series rather than a page of zeros
            }
            Labels labels = Labels.of("command", CommandTypes.name(type));
            commands.dataPoint(CounterDataPointSnapshot.builder().labels(labels).value(received).build());
            errors.dataPoint(CounterDataPointSnapshot.builder().labels(labels).value(failed).build());
            durations.dataPoint(HistogramDataPointSnapshot.builder().labels(labels)
                    .classicHistogramBuckets(ClassicHistogramBuckets.of(BOUNDS, buckets))
                    .sum(sumNanos / 1e9).build());
        }
        all.metricSnapshot(commands.build()).metricSnapshot(errors.build()).metricSnapshot(durations.build());
        all.metricSnapshot(CounterSnapshot.builder().name("sluice_client_received_bytes")
                .help("Bytes read from clients")
                .dataPoint(CounterDataPointSnapshot.builder().value(traffic.bytesIn()).build()).build());
        all.metricSnapshot(CounterSnapshot.builder().name("sluice_client_sent_bytes")
                .help("Bytes relayed to clients")
                .dataPoint(CounterDataPointSnapshot.builder().value(traffic.bytesOut()).build()).build());
    }

    private void collectBackends(MetricSnapshots.Builder all) {
        GaugeSnapshot.Builder up = gauge("sluice_backend_up", "1 while health checks pass, else 0");
        GaugeSnapshot.Builder status = gauge("sluice_backend_status",
                "1 for the backend's status (UP, DOWN, DRAINING), 0 for the others");
        GaugeSnapshot.Builder weight = gauge("sluice_backend_weight", "Share of new sessions");
        GaugeSnapshot.Builder sessions = gauge("sluice_backend_sessions", "Client sessions assigned now");
        CounterSnapshot.Builder sessionsStarted = counter("sluice_backend_sessions_started",
                "Client sessions ever assigned");
        GaugeSnapshot.Builder checkLatency = gauge("sluice_backend_health_check_latency_seconds",
                "Duration of the latest health check");
        GaugeSnapshot.Builder checkFailures = gauge("sluice_backend_health_check_consecutive_failures",
                "Failed health checks in a row");
        GaugeSnapshot.Builder connections = gauge("sluice_backend_connections",
                "Backend connections open now, active (lent or logging in) or idle in the pool");
        GaugeSnapshot.Builder pending = gauge("sluice_backend_connections_pending",
                "Sessions waiting for a connection because the pool is full");
        GaugeSnapshot.Builder max = gauge("sluice_backend_connections_max", "The pool's maxPoolSize");
        GaugeSnapshot.Builder perAccount = gauge("sluice_backend_account_connections",
                "Connections open now as a server account of the sessions' own (backendUser, users: FROM_BACKEND)");
        CounterSnapshot.Builder created = counter("sluice_backend_connections_opened",
                "Backend connections that logged in");
        CounterSnapshot.Builder closed = counter("sluice_backend_connections_closed",
                "Logged-in backend connections that closed");
        CounterSnapshot.Builder errors = counter("sluice_backend_connection_errors",
                "Backend connects and logins that failed");
        HistogramSnapshot.Builder acquire = HistogramSnapshot.builder().name("sluice_backend_acquire_seconds")
                .help("How long sessions waited for a backend connection (once per session)");
        for (BackendSnapshot backend : sources.backends().get()) {
            BackendState state = backend.state();
            Labels labels = Labels.of("backend", state.name());
            up.dataPoint(point(labels, state.status() != BackendStatus.DOWN ? 1 : 0));
            for (BackendStatus each : BackendStatus.values()) {
                status.dataPoint(point(Labels.of("backend", state.name(), "status", each.name()),
                        state.status() == each ? 1 : 0));
            }
            weight.dataPoint(point(labels, state.weight()));
            sessions.dataPoint(point(labels, state.activeSessions()));
            sessionsStarted.dataPoint(count(labels, state.totalSessions()));
            if (state.lastCheck() != null) {
                checkLatency.dataPoint(point(labels, state.lastCheck().latencyNanos() / 1e9));
            }
            checkFailures.dataPoint(point(labels, state.consecutiveFailures()));
            connections.dataPoint(point(Labels.of("backend", state.name(), "state", "active"),
                    backend.activeConnections()));
            connections.dataPoint(point(Labels.of("backend", state.name(), "state", "idle"),
                    backend.idleConnections()));
            pending.dataPoint(point(labels, backend.pendingAcquires()));
            max.dataPoint(point(labels, backend.maxPoolSize()));
            backend.accountConnections().forEach((account, open) -> perAccount.dataPoint(
                    point(Labels.of("backend", state.name(), "account", account), open)));
            created.dataPoint(count(labels, backend.createdConnections()));
            closed.dataPoint(count(labels, backend.closedConnections()));
            errors.dataPoint(count(labels, backend.connectionErrors()));
            acquire.dataPoint(HistogramDataPointSnapshot.builder().labels(labels)
                    .classicHistogramBuckets(ClassicHistogramBuckets.of(BOUNDS, backend.acquireWaitBuckets()))
                    .sum(backend.acquireWaitNanos() / 1e9).build());
        }
        all.metricSnapshot(up.build()).metricSnapshot(status.build()).metricSnapshot(weight.build())
                .metricSnapshot(sessions.build()).metricSnapshot(sessionsStarted.build())
                .metricSnapshot(checkLatency.build()).metricSnapshot(checkFailures.build())
                .metricSnapshot(connections.build()).metricSnapshot(pending.build()).metricSnapshot(max.build())
                .metricSnapshot(perAccount.build())
                .metricSnapshot(created.build()).metricSnapshot(closed.build()).metricSnapshot(errors.build())
                .metricSnapshot(acquire.build());
    }

    /** Longest digest text in a label: enough to recognise a statement on a dashboard, bounded for the scrape. */
    private static final int DIGEST_TEXT_LABEL = 120;

    /**
     * The statement digests with the largest total time, {@code topN} of them: bounded label cardinality, whatever
     * the workload (issue #41). A digest leaves the series when another overtakes it; {@code /api/digests} has all.
     */
    private static void collectDigests(MetricSnapshots.Builder all, DigestStatistics digests, int topN) {
        CounterSnapshot.Builder statements = counter("sluice_digest_statements",
                "Statements of the digests with the largest total time (top N), by digest, user, schema, group");
        CounterSnapshot.Builder errors = counter("sluice_digest_errors",
                "Statements of those digests that ended with an ERR packet");
        CounterSnapshot.Builder seconds = counter("sluice_digest_seconds",
                "Time from forwarding to the end of the response, summed, of those digests' statements");
        if (topN > 0) {
            for (DigestSummary row : digests.top(DigestOrder.TOTAL_TIME, topN)) {
                String text = row.digestText().length() > DIGEST_TEXT_LABEL
                        ? row.digestText().substring(0, DIGEST_TEXT_LABEL) + "..." : row.digestText();
                Labels labels = Labels.of("digest", row.digest(), "digest_text", text, "user", row.user(),
                        "schema", row.schema(), "group", row.group());
                statements.dataPoint(count(labels, row.count()));
                errors.dataPoint(count(labels, row.errors()));
                seconds.dataPoint(count(labels, row.totalMicros() / 1e6));
            }
        }
        all.metricSnapshot(statements.build()).metricSnapshot(errors.build()).metricSnapshot(seconds.build());
        all.metricSnapshot(gauge("sluice_digest_entries", "Digest entries kept, over all event loops")
                .dataPoint(point(Labels.EMPTY, digests.entries())).build());
        all.metricSnapshot(gauge("sluice_digest_memory_bytes", "Memory the statement statistics hold, roughly")
                .dataPoint(point(Labels.EMPTY, digests.memoryBytes())).build());
    }

    /** Each running query rule's counters, by its name: as many series as rules, whatever the workload. */
    private static void collectRules(MetricSnapshots.Builder all, QueryRules rules) {
        CounterSnapshot.Builder matched = counter("sluice_query_rule_matched",
                "Statements a query rule was the first to match, by rule");
        CounterSnapshot.Builder acted = counter("sluice_query_rule_acted",
                "Statements a query rule did its action to (refused, routed), by rule");
        CounterSnapshot.Builder errors = counter("sluice_query_rule_errors",
                "Statements a query rule matched but could not act on (a route outside a split group, a write sent"
                        + " to replicas), by rule");
        for (QueryRule rule : rules.rules()) {
            Labels labels = Labels.of("rule", rule.name(), "action", rule.config().action().key());
            matched.dataPoint(count(labels, rule.counters().matchedCount()));
            acted.dataPoint(count(labels, rule.counters().actedCount()));
            errors.dataPoint(count(labels, rule.counters().errorCount()));
        }
        all.metricSnapshot(matched.build()).metricSnapshot(acted.build()).metricSnapshot(errors.build());
    }

    private static GaugeSnapshot.Builder gauge(String name, String help) {
        return GaugeSnapshot.builder().name(name).help(help);
    }

    private static CounterSnapshot.Builder counter(String name, String help) {
        return CounterSnapshot.builder().name(name).help(help);
    }

    private static GaugeDataPointSnapshot point(Labels labels, double value) {
        return GaugeDataPointSnapshot.builder().labels(labels).value(value).build();
    }

    private static CounterDataPointSnapshot count(Labels labels, double value) {
        return CounterDataPointSnapshot.builder().labels(labels).value(value).build();
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}
