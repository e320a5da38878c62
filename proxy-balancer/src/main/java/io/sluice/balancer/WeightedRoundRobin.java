package io.sluice.balancer;

import java.util.function.Predicate;

/**
 * nginx's smooth weighted round-robin: each pick adds every eligible backend's weight to its running total, takes
 * the backend with the highest total and subtracts the sum of weights from it. Over any window of
 * {@code sum(weights)} picks each backend is chosen exactly {@code weight} times, and the choices interleave
 * (weights 5, 1, 1 give a a b a c a a, not a a a a a b c).
 *
 * <p>The running totals are shared state, so picks are serialised by a lock; it is held for one pass over the
 * backends, tens of nanoseconds for a handful of them.
 */
public final class WeightedRoundRobin implements BalancePolicy {

    @Override
    public synchronized Backend choose(Backend[] backends, Predicate<Backend> eligible) {
        Backend best = null;
        long total = 0;
        for (Backend candidate : backends) {
            if (!eligible.test(candidate)) {
                continue;
            }
            int weight = candidate.weight();
            candidate.currentWeight += weight;
            total += weight;
            if (best == null || candidate.currentWeight > best.currentWeight) {
                best = candidate;
            }
        }
        if (best != null) {
            best.currentWeight -= total;
        }
        return best;
    }
}
