package io.sluice.balancer;

import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Predicate;

/**
 * Two distinct backends at random, and the less loaded of them (sessions per unit of weight). Nearly as even as
 * least-connections, without reading every backend's count, and without every proxy of a fleet rushing to the same
 * emptiest server. When random draws keep hitting backends that are not eligible, it falls back to a full scan.
 */
public final class PowerOfTwoChoices implements BalancePolicy {
    private static final int DRAWS = 4;

    @Override
    public Backend choose(Backend[] backends, Predicate<Backend> eligible) {
        int n = backends.length;
        if (n == 1) {
            return eligible.test(backends[0]) ? backends[0] : null;
        }
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int draw = 0; draw < DRAWS; draw++) {
            int i = random.nextInt(n);
            int j = random.nextInt(n - 1);
            if (j >= i) {
                j++; // j is uniform over the other n - 1 backends
            }
            Backend a = backends[i];
            Backend b = backends[j];
            boolean aOk = eligible.test(a);
            boolean bOk = eligible.test(b);
            if (aOk && bOk) {
                return b.lessLoadedThan(a) ? b : a;
            }
            if (aOk) {
                return a;
            }
            if (bOk) {
                return b;
            }
        }
        Backend best = null;
        for (Backend candidate : backends) {
            if (eligible.test(candidate) && (best == null || candidate.lessLoadedThan(best))) {
                best = candidate;
            }
        }
        return best;
    }
}
