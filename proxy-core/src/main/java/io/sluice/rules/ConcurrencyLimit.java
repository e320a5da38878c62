package io.sluice.rules;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@code maxConcurrency} rule's permits, shared by every event loop: at most N statements the rule matches run at
 * once, across sessions (decision 190). One {@link AtomicInteger} of permits in use, so taking one is a
 * compare-and-set, not a lock, and only statements the rule matches pay it. The count lives in the rule's counters,
 * which a reload that leaves the rule as it was keeps, so statements running across a reload still count.
 */
public final class ConcurrencyLimit {

    private final int limit;
    private final AtomicInteger running;

    ConcurrencyLimit(int limit, AtomicInteger running) {
        this.limit = limit;
        this.running = running;
    }

    /** Takes a permit if one is free, else {@code null}; every permit taken is given back ({@link Permit#giveBack()}). */
    public Permit tryTake() {
        while (true) {
            int now = running.get();
            if (now >= limit) {
                return null;
            }
            if (running.compareAndSet(now, now + 1)) {
                return new Permit(running);
            }
        }
    }

    /** Statements of the rule running now. */
    public int running() {
        return running.get();
    }

    /**
     * One statement's permit. Given back once, whichever end comes first (the response's end, the session's close),
     * from any thread.
     */
    public static final class Permit {
        private final AtomicInteger running;
        private final AtomicInteger given = new AtomicInteger();

        private Permit(AtomicInteger running) {
            this.running = running;
        }

        /** Gives the permit back; a second call does nothing. */
        public void giveBack() {
            if (given.compareAndSet(0, 1)) {
                running.decrementAndGet();
            }
        }

        /** Whether it was given back. */
        public boolean isGivenBack() {
            return given.get() != 0;
        }
    }
}
