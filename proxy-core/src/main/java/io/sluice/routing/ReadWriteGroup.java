package io.sluice.routing;

import io.sluice.api.ReadWriteCounts;
import io.sluice.balancer.Backend;
import io.sluice.balancer.BackendGroup;
import io.sluice.balancer.replication.ReplicaEligibility;
import io.sluice.balancer.replication.Roles;
import io.sluice.balancer.replication.Topology;
import io.sluice.config.ReadLoadBalancer;
import io.sluice.config.ReadWriteSplittingConfig;
import io.sluice.readwrite.RouteReason;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A read/write split group at run time: its configuration, which of its replicas may take reads now, and what its
 * sessions' statements did (routes by reason, causal waits). Shared by the group's sessions on every event loop, so
 * everything here is atomic; the replicas' health is the backend group's (health checks, drain).
 */
public final class ReadWriteGroup implements ReadWriteCounts {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ReadWriteGroup.class);
    private static final RouteReason[] REASONS = RouteReason.values();

    /** How a causal wait ended, a metrics label each. */
    public enum CausalOutcome {
        /** The replica had applied the session's last write: the read ran there. */
        REACHED,
        /** It had not within the timeout: the read ran on the primary. */
        TIMED_OUT,
        /** The wait failed (an error, NULL): the read ran on the primary. */
        FAILED;

        public String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private final ReadWriteSplittingConfig config;
    private final BackendGroup backends;
    /** Who is the primary (issue #40): fixed by the config, or followed from the servers' {@code read_only}. */
    private final Topology topology;
    /**
     * Whether the primary may change at run time (discovery, or a switchover): only then is {@link #topology}'s
     * volatile roles read on the way of a statement; a fixed group reads its config's final fields.
     */
    private final boolean dynamic;
    private final PrimaryWaiters waiters = new PrimaryWaiters();
    private final AtomicInteger next = new AtomicInteger();
    private final AtomicLongArray routes = new AtomicLongArray(REASONS.length);
    private final AtomicLongArray causal = new AtomicLongArray(CausalOutcome.values().length);
    /** The replica watch's last word on each replica; none yet: usable while its health checks say up. */
    private final java.util.Map<String, ReplicaEligibility.Judgement> judgements =
            new java.util.concurrent.ConcurrentHashMap<>();

    public ReadWriteGroup(ReadWriteSplittingConfig config, BackendGroup backends) {
        this.config = config;
        this.backends = backends;
        this.topology = new Topology(config.name(), config.dataSourceNames(), config.writeDataSourceName(),
                config.followsPrimary());
        this.dynamic = config.followsPrimary() || config.administration() != null;
        topology.onChange(roles -> {
            if (roles.takesWrites()) {
                waiters.wakeAll();
            }
        });
    }

    /** Who is the primary and whether it takes writes, and the history of changes. */
    public Topology topology() {
        return topology;
    }

    /** Whether the primary may change at run time: discovery is on, or a switchover may run. */
    public boolean dynamic() {
        return dynamic;
    }

    /**
     * The roles now; for a group whose primary may change, one volatile read. Asked only by statements that need the
     * primary ({@code BackendLease}), once per connection taken.
     */
    public Roles roles() {
        return topology.roles();
    }

    /**
     * Runs {@code wake} on {@code loop} once the group has a primary that takes writes again (at once, should it have
     * one by now). The caller bounds the wait ({@code primaryWaitMilliseconds}) and {@link #stopWaiting} then.
     */
    public Object awaitPrimary(java.util.concurrent.Executor loop, Runnable wake) {
        Object waiter = waiters.add(loop, wake);
        if (topology.roles().takesWrites()) {
            waiters.wakeAll(); // it changed between the caller's look and the add
        }
        return waiter;
    }

    /** A wait of {@link #awaitPrimary} ended otherwise (it timed out, the session ended): forgets it. */
    public void stopWaiting(Object waiter) {
        waiters.remove(waiter);
    }

    @Override
    public int waitingForPrimary() {
        return waiters.size();
    }

    public ReadWriteSplittingConfig config() {
        return config;
    }

    public String name() {
        return config.name();
    }

    @Override
    public String group() {
        return config.name();
    }

    @Override
    public List<String> routeReasons() {
        return java.util.Arrays.stream(REASONS).map(RouteReason::label).toList();
    }

    @Override
    public long routes(int index) {
        return routes.get(index);
    }

    @Override
    public List<String> causalOutcomes() {
        return java.util.Arrays.stream(CausalOutcome.values()).map(CausalOutcome::label).toList();
    }

    @Override
    public long causalWaits(int index) {
        return causal.get(index);
    }

    /** The primary's data source. */
    public String primary() {
        return dynamic ? topology.roles().primary() : config.writeDataSourceName();
    }

    /** The data sources that are replicas now, in configuration order. */
    private List<String> readers() {
        return dynamic ? topology.roles().replicas() : config.readDataSourceNames();
    }

    /**
     * A replica that may take a read now, chosen by the group's load balancer, or {@code null} when none may (all
     * down or drained: the read goes to the primary).
     */
    public String pickReplica() {
        List<String> reads = readers();
        int n = reads.size();
        int start = config.loadBalancer().type() == ReadLoadBalancer.Type.RANDOM
                ? ThreadLocalRandom.current().nextInt(n) : Math.floorMod(next.getAndIncrement(), n);
        for (int i = 0; i < n; i++) {
            String name = reads.get((start + i) % n);
            if (usableNow(name)) {
                return name;
            }
        }
        return null;
    }

    /** Whether any replica may take a read now (as {@link #pickReplica} would find one). */
    public boolean anyReplicaUsable() {
        for (String name : readers()) {
            if (usableNow(name)) {
                return true;
            }
        }
        return false;
    }

    /** Whether the health checks have the primary up: while it is down, SET and USE run on a replica. */
    public boolean primaryUp() {
        Backend backend = backends.backend(primary());
        return backend != null && backend.isUp();
    }

    /** Whether data source {@code name} may take a read now: up, not drained, not judged unusable. */
    public boolean usableNow(String name) {
        Backend backend = backends.backend(name);
        ReplicaEligibility.Judgement judged = judgements.get(name);
        return backend != null && backend.isUp() && !backend.isDraining() && (judged == null || judged.usable());
    }

    /** The replica watch judged a replica: a stopped, lagging or writable one takes no reads until it is usable. */
    public void judged(ReplicaEligibility.Judgement judgement) {
        ReplicaEligibility.Judgement before = judgements.put(judgement.server(), judgement);
        if (before == null || before.usable() != judgement.usable()) {
            if (judgement.usable()) {
                log.info("read/write group {}: replica {} takes reads", config.name(), judgement.server());
            } else {
                log.warn("read/write group {}: replica {} takes no reads: {} ({})", config.name(),
                        judgement.server(), judgement.verdict().label(), judgement.detail());
            }
        }
    }

    /** The group's replicas for the metrics, a list that never changes: with a dynamic primary, every server. */
    @Override
    public List<String> replicas() {
        return dynamic ? topology.servers() : config.readDataSourceNames();
    }

    @Override
    public double secondsBehind(int index) {
        ReplicaEligibility.Judgement judged = judgements.get(replicas().get(index));
        return judged == null ? Double.NaN : judged.secondsBehind();
    }

    @Override
    public boolean usable(int index) {
        String name = replicas().get(index);
        ReplicaEligibility.Judgement judged = judgements.get(name);
        return !name.equals(primary()) && (judged == null || judged.usable());
    }

    @Override
    public List<String> dataSources() {
        return topology.servers();
    }

    @Override
    public boolean isPrimary(int index) {
        Roles roles = topology.roles();
        return roles.takesWrites() && roles.primary().equals(topology.servers().get(index));
    }

    @Override
    public String topologyState() {
        return topology.roles().state().label();
    }

    @Override
    public long primaryChanges() {
        return topology.primaryChanges();
    }

    @Override
    public long splitBrains() {
        return topology.splitBrains();
    }

    @Override
    public long switchovers(boolean switched) {
        return topology.switchovers(switched);
    }

    @Override
    public double lastSwitchoverWritesHeldSeconds() {
        long millis = topology.lastWritesHeldMillis();
        return millis < 0 ? Double.NaN : millis / 1000.0;
    }

    @Override
    public long failovers(boolean promoted) {
        return topology.failovers(promoted);
    }

    @Override
    public double lastFailoverSeconds() {
        long millis = topology.lastFailoverMillis();
        return millis < 0 ? Double.NaN : millis / 1000.0;
    }

    @Override
    public int fencedServers() {
        return topology.fenced().size();
    }

    void routed(RouteReason reason) {
        routes.incrementAndGet(reason.ordinal());
    }

    void causalWait(CausalOutcome outcome) {
        causal.incrementAndGet(outcome.ordinal());
    }

    /** Statements routed for {@code reason} since start. */
    public long routes(RouteReason reason) {
        return routes.get(reason.ordinal());
    }

    /** Causal waits that ended in {@code outcome} since start. */
    public long causalWaits(CausalOutcome outcome) {
        return causal.get(outcome.ordinal());
    }
}
