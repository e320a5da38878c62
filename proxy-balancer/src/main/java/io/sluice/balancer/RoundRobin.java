package io.sluice.balancer;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/** Each backend in turn, skipping those not eligible. */
public final class RoundRobin implements BalancePolicy {
    private final AtomicInteger next = new AtomicInteger();

    @Override
    public Backend choose(Backend[] backends, Predicate<Backend> eligible) {
        int n = backends.length;
        int first = Math.floorMod(next.getAndIncrement(), n);
        for (int i = 0; i < n; i++) {
            Backend candidate = backends[(first + i) % n];
            if (eligible.test(candidate)) {
                return candidate;
            }
        }
        return null;
    }
}
