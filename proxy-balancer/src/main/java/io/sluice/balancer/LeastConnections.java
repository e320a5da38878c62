package io.sluice.balancer;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * The backend with the fewest open sessions per unit of weight. The scan starts one place further on each pick, so
 * that equally loaded backends take turns instead of the first one taking every tie.
 */
public final class LeastConnections implements BalancePolicy {
    private final AtomicInteger start = new AtomicInteger();

    @Override
    public Backend choose(Backend[] backends, Predicate<Backend> eligible) {
        int n = backends.length;
        int first = Math.floorMod(start.getAndIncrement(), n);
        Backend best = null;
        for (int i = 0; i < n; i++) {
            Backend candidate = backends[(first + i) % n];
            if (eligible.test(candidate) && (best == null || candidate.lessLoadedThan(best))) {
                best = candidate;
            }
        }
        return best;
    }
}
