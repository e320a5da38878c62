package io.sluice.api;

import java.util.List;

/**
 * Client connections and what happened at the door, counted since start: what the metrics exporter reads at each
 * scrape, from its own thread. Implemented by the frontend's session registry, whose counters are atomic.
 */
public interface ClientCounts {

    /** Client connections open now (logged in or logging in). */
    int open();

    /** Client connections admitted. */
    long accepted();

    /** Client connections refused because {@code server.maxConnections} was reached. */
    long refusedTooMany();

    /** Client connections refused because graceful shutdown had begun. */
    long refusedWhileClosing();

    /** Logins refused for a wrong password or an unknown user. */
    long authenticationFailures();

    /**
     * The reasons a session can be pinned to its backend connection between transactions, as labels
     * ({@code user_variable}), in a fixed order; empty unless {@code pooling: TRANSACTION}.
     */
    List<String> pinReasons();

    /** Sessions pinned for the reason at {@code index} in {@link #pinReasons()}. */
    long pins(int index);

    /** Sessions pinned now whose first reason is the one at {@code index} in {@link #pinReasons()}. */
    int pinnedNow(int index);

    /** Why sessions move to another backend ({@code drain}, {@code down}, {@code rebalance}), in a fixed order. */
    default List<String> moveReasons() {
        return List.of();
    }

    /** Sessions moved to another backend for the reason at {@code index} in {@link #moveReasons()}. */
    default long moves(int index) {
        return 0;
    }

    /** Why sessions asked to move stay ({@code session_pooling}, {@code pinned}, {@code no_backend}), in order. */
    default List<String> moveRefusals() {
        return List.of();
    }

    /** Sessions asked to move that stayed, for the reason at {@code index} in {@link #moveRefusals()}. */
    default long movesRefused(int index) {
        return 0;
    }
}
