package io.sluice.balancer;

import java.util.function.Predicate;

/** The first eligible backend in configuration order: a primary with standbys, as MySQL Router's first-available. */
public final class FirstAvailable implements BalancePolicy {

    @Override
    public Backend choose(Backend[] backends, Predicate<Backend> eligible) {
        for (Backend candidate : backends) {
            if (eligible.test(candidate)) {
                return candidate;
            }
        }
        return null;
    }
}
