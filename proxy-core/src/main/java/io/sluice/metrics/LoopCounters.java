package io.sluice.metrics;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The command and byte counters of one event loop. Only that loop's thread writes them, so an increment is a plain
 * load, an add and a release store: no lock, no atomic read-modify-write, no allocation, no shared cache line with
 * another loop. A Prometheus scrape reads every loop's counters with acquire loads and adds them up.
 *
 * <p>All counters live in one array, padded at both ends, so that two loops' counters never share a cache line.
 */
public final class LoopCounters {

    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    /** 128 bytes on each side: two cache lines, against adjacent-line prefetching too. */
    private static final int PAD = 16;
    private static final int TYPES = CommandTypes.COUNT;
    private static final int BUCKETS = LatencyBuckets.COUNT;

    private static final int COMMANDS = PAD;
    private static final int FAILURES = COMMANDS + TYPES;
    private static final int TIMED = FAILURES + TYPES;
    private static final int SUM_NANOS = TIMED + TYPES;
    private static final int HISTOGRAM = SUM_NANOS + TYPES;
    private static final int BYTES_IN = HISTOGRAM + TYPES * BUCKETS;
    private static final int BYTES_OUT = BYTES_IN + 1;
    private static final int SIZE = BYTES_OUT + 1 + PAD;

    private final long[] counts = new long[SIZE];

    /** A command of this byte arrived from a client. Called on the loop only. */
    public void command(int command) {
        increment(COMMANDS + CommandTypes.index(command), 1);
    }

    /**
     * A response to a command of this type ended after {@code nanos}. Called on the loop only.
     *
     * @param failed whether the response was (or ended with) an ERR packet
     */
    public void completed(int type, long nanos, boolean failed) {
        increment(TIMED + type, 1);
        increment(SUM_NANOS + type, nanos);
        increment(HISTOGRAM + type * BUCKETS + LatencyBuckets.index(nanos), 1);
        if (failed) {
            increment(FAILURES + type, 1);
        }
    }

    /** Bytes read from a client. Called on the loop only. */
    public void bytesIn(int bytes) {
        increment(BYTES_IN, bytes);
    }

    /** Bytes relayed to a client. Called on the loop only. */
    public void bytesOut(int bytes) {
        increment(BYTES_OUT, bytes);
    }

    private void increment(int index, long delta) {
        long[] a = counts;
        LONGS.setRelease(a, index, a[index] + delta);
    }

    private long read(int index) {
        return (long) LONGS.getAcquire(counts, index);
    }

    // ---- reads, from any thread (a scrape) ----

    /** Commands of this type received. */
    public long commands(int type) {
        return read(COMMANDS + type);
    }

    /** Responses of this type that were errors. */
    public long failures(int type) {
        return read(FAILURES + type);
    }

    /** Responses of this type timed. */
    public long timed(int type) {
        return read(TIMED + type);
    }

    /** The sum of the times of the responses of this type, in nanoseconds. */
    public long sumNanos(int type) {
        return read(SUM_NANOS + type);
    }

    /** Responses of this type whose time fell in {@code bucket} of {@link LatencyBuckets} (not cumulative). */
    public long bucket(int type, int bucket) {
        return read(HISTOGRAM + type * BUCKETS + bucket);
    }

    /** Bytes read from clients on this loop. */
    public long bytesIn() {
        return read(BYTES_IN);
    }

    /** Bytes relayed to clients on this loop. */
    public long bytesOut() {
        return read(BYTES_OUT);
    }
}
