package io.sluice.metrics;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;

/**
 * A WARN line that clients can cause at will (a backend connection lost or confused by what a client sent): at most
 * one a period is logged at WARN, the others at DEBUG, and the next WARN says how many were held back. A fuzzing or
 * misbehaving client so costs a line a period, not a line a connection. Shared by every event loop.
 */
public final class RateLimitedWarning {
    /** One WARN a minute per kind of event: enough to see that it happens, and when it stops. */
    public static final long DEFAULT_PERIOD_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final Logger log;
    private final long periodNanos;
    private final LongSupplier nanoTime;
    private final AtomicLong nextWarnNanos;
    private final AtomicLong heldBack = new AtomicLong();

    public RateLimitedWarning(Logger log) {
        this(log, DEFAULT_PERIOD_NANOS, System::nanoTime);
    }

    RateLimitedWarning(Logger log, long periodNanos, LongSupplier nanoTime) {
        this.log = log;
        this.periodNanos = periodNanos;
        this.nanoTime = nanoTime;
        this.nextWarnNanos = new AtomicLong(nanoTime.getAsLong());
    }

    /**
     * Logs at WARN if the period since the last WARN is over, else at DEBUG; the arguments are SLF4J's.
     *
     * @return whether it was logged at WARN
     */
    public boolean warn(String format, Object... arguments) {
        long now = nanoTime.getAsLong();
        long next = nextWarnNanos.get();
        if (now - next < 0 || !nextWarnNanos.compareAndSet(next, now + periodNanos)) {
            heldBack.incrementAndGet();
            log.debug(format, arguments);
            return false;
        }
        long held = heldBack.getAndSet(0);
        if (held == 0) {
            log.warn(format, arguments);
        } else {
            Object[] withCount = java.util.Arrays.copyOf(arguments, arguments.length + 1);
            withCount[arguments.length] = held;
            log.warn(format + " ({} more like it since the last such line, logged at DEBUG)", withCount);
        }
        return true;
    }

    /** How many were logged at DEBUG since the last WARN. */
    long heldBack() {
        return heldBack.get();
    }
}
