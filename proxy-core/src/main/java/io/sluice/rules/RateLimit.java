package io.sluice.rules;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A {@code maxPerSecond} rule's token buckets, one per user, shared by every event loop: N statements a second, with
 * a burst of N (one second's worth) after a quiet spell. Each bucket is one {@link AtomicLong} (the generic cell
 * rate algorithm: the time the next statement is due), so taking a token is a compare-and-set, not a lock, and only
 * statements the rule matches pay it.
 */
public final class RateLimit {

    private final long interval;
    private final long burst;
    private final Map<String, AtomicLong> buckets = new ConcurrentHashMap<>();

    RateLimit(long perSecond) {
        this.interval = 1_000_000_000L / perSecond;
        this.burst = interval * (perSecond - 1);
    }

    /**
     * Takes a token of {@code user}'s bucket at {@code nowNanos}.
     *
     * @return 0 when taken; else how many nanoseconds from now the next token is due
     */
    public long take(String user, long nowNanos) {
        AtomicLong due = buckets.computeIfAbsent(user == null ? "" : user, u -> new AtomicLong(Long.MIN_VALUE));
        while (true) {
            long theoretical = due.get();
            long from = theoretical == Long.MIN_VALUE || theoretical < nowNanos ? nowNanos : theoretical;
            if (from - nowNanos > burst) {
                return from - burst - nowNanos;
            }
            if (due.compareAndSet(theoretical, from + interval)) {
                return 0;
            }
        }
    }
}
