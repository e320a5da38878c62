package io.sluice.balancer;

import java.util.function.Predicate;

/**
 * Chooses among a group's backends. Called from every event loop at once, for every new session: implementations
 * are thread-safe, allocate nothing and cost far less than a network round trip.
 */
public interface BalancePolicy {

    /**
     * The backend for a new session among those {@code eligible} accepts, or {@code null} when none does.
     *
     * @param backends the group's backends in configuration order; never modified
     */
    Backend choose(Backend[] backends, Predicate<Backend> eligible);
}
