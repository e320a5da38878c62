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
}
