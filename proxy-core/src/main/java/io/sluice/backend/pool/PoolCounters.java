package io.sluice.backend.pool;

import io.sluice.metrics.LatencyBuckets;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What a {@link BackendPool} counts for its metrics, since start: connections made, closed and failed, and how long
 * acquires waited. Counted per connection and per acquire, never per command, so atomics are cheap enough; read from
 * any thread.
 */
public final class PoolCounters {
    private final AtomicLong created = new AtomicLong();
    private final AtomicLong closed = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLongArray acquireBuckets = new AtomicLongArray(LatencyBuckets.COUNT);
    private final AtomicLong acquireNanos = new AtomicLong();

    void connectionCreated() {
        created.incrementAndGet();
    }

    void connectionClosed() {
        closed.incrementAndGet();
    }

    void connectionFailed() {
        errors.incrementAndGet();
    }

    void acquired(long waitNanos) {
        acquireBuckets.incrementAndGet(LatencyBuckets.index(waitNanos));
        acquireNanos.addAndGet(waitNanos);
    }

    /** Connections that logged in, since start. */
    public long createdConnections() {
        return created.get();
    }

    /** Logged-in connections that closed, since start. */
    public long closedConnections() {
        return closed.get();
    }

    /** Connects and logins that failed (refused, timed out, access denied), since start. */
    public long connectionErrors() {
        return errors.get();
    }

    /** Acquires that got a connection, per {@link LatencyBuckets} bucket of their wait. */
    public long[] acquireWaitBuckets() {
        long[] counts = new long[acquireBuckets.length()];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = acquireBuckets.get(i);
        }
        return counts;
    }

    /** The sum of those waits. */
    public long acquireWaitNanos() {
        return acquireNanos.get();
    }
}
