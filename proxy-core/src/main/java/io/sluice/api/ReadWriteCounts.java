package io.sluice.api;

import java.util.List;

/**
 * What a read/write split group's sessions did, counted since start: where their statements went and why, and how
 * their causal reads' waits ended. Read by the metrics exporter at each scrape; implemented by the group at run time.
 */
public interface ReadWriteCounts {

    /** The group's name, the logical database its sessions log in to. */
    String group();

    /** The reasons statements are routed for ({@code replica}, {@code primary:write}...), in a fixed order. */
    List<String> routeReasons();

    /** Statements routed for the reason at {@code index} in {@link #routeReasons()}. */
    long routes(int index);

    /** How causal waits end ({@code reached}, {@code timed_out}, {@code failed}), in a fixed order. */
    List<String> causalOutcomes();

    /** Causal waits that ended as the outcome at {@code index} in {@link #causalOutcomes()}. */
    long causalWaits(int index);

    /** The group's replicas, in configuration order. */
    default List<String> replicas() {
        return List.of();
    }

    /** The last replication delay read on the replica at {@code index}, in seconds; NaN when unknown. */
    default double secondsBehind(int index) {
        return Double.NaN;
    }

    /** Whether the replica at {@code index} takes reads now. */
    default boolean usable(int index) {
        return true;
    }

    /** Every server of the group, in configuration order: the labels of {@link #isPrimary}. */
    default List<String> dataSources() {
        return List.of();
    }

    /** Whether the server at {@code index} in {@link #dataSources()} is the primary and takes writes now. */
    default boolean isPrimary(int index) {
        return false;
    }

    /** {@code primary}, {@code no_primary}, {@code split_brain} or {@code switching}. */
    default String topologyState() {
        return "primary";
    }

    /** How many times the primary changed to another server since start. */
    default long primaryChanges() {
        return 0;
    }

    /** How many split brains (two writable servers) began since start. */
    default long splitBrains() {
        return 0;
    }

    /** Statements waiting now for the group's primary (none takes writes: a promotion, a split brain, a switchover). */
    default int waitingForPrimary() {
        return 0;
    }

    /** Planned switchovers that switched ({@code true}), or that held writes and did not, since start. */
    default long switchovers(boolean switched) {
        return 0;
    }

    /** How long the last switchover held writes, in seconds; NaN before any. */
    default double lastSwitchoverWritesHeldSeconds() {
        return Double.NaN;
    }

    /** Unplanned failovers that promoted a replica ({@code true}), or that began here and did not, since start. */
    default long failovers(boolean promoted) {
        return 0;
    }

    /** How long the last failover that promoted took, from the primary declared gone; NaN before any. */
    default double lastFailoverSeconds() {
        return Double.NaN;
    }

    /** How many of the group's servers are fenced after a failover now. */
    default int fencedServers() {
        return 0;
    }
}
