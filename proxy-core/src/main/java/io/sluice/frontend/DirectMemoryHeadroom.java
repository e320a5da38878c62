package io.sluice.frontend;

import io.sluice.metrics.DirectMemory;
import java.util.function.LongSupplier;

/**
 * Whether there is direct memory left for one more client session. When Netty cannot allocate, every session on the
 * loop that asked fails; so when little is left, a new client is turned away at once with ERR 1040 and the sessions
 * already open keep what remains (issue #30: 64 connections holding 16 MiB frames exhausted it, and a legitimate
 * login timed out).
 *
 * <p>The reserve is what a session may need at once: a frame of up to 16 MiB, and the allocator's next chunk.
 */
public final class DirectMemoryHeadroom {
    /** Direct memory kept free for the sessions already open: at least this much... */
    static final long MIN_RESERVE_BYTES = 32L << 20;
    /** ...or this fraction of the limit, whichever is more. */
    static final int RESERVE_PERCENT = 5;

    private final LongSupplier used;
    private final LongSupplier max;

    /** @param used bytes in use now, negative when unknown (then every session is admitted); {@code max} likewise */
    public DirectMemoryHeadroom(LongSupplier used, LongSupplier max) {
        this.used = used;
        this.max = max;
    }

    /** This JVM's direct memory, as {@link DirectMemory} counts it. */
    public static DirectMemoryHeadroom ofThisJvm() {
        return new DirectMemoryHeadroom(DirectMemory::used, DirectMemory::max);
    }

    /** Whether a new session may start: more than the reserve is free, or the count is unknown. */
    public boolean admitsNewSession() {
        long limit = max.getAsLong();
        long inUse = used.getAsLong();
        if (limit <= 0 || inUse < 0) {
            return true;
        }
        return limit - inUse > reserve(limit);
    }

    /** In use and limit, in MiB, for the refusal's message and the log. */
    public String describe() {
        return (used.getAsLong() >> 20) + " of " + (max.getAsLong() >> 20) + " MiB in use";
    }

    static long reserve(long limit) {
        return Math.max(MIN_RESERVE_BYTES, limit / 100 * RESERVE_PERCENT);
    }
}
