package io.sluice.statistics;

import io.sluice.metrics.LatencyBuckets;
import io.sluice.sql.SqlDigest;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The counters of one digest, user, schema and group on one event loop. Only that loop writes them (a plain load,
 * an add and a release store, as {@link io.sluice.metrics.LoopCounters}); a reader on another thread reads them with
 * acquire loads and may see one statement half-counted, never a torn value.
 */
public final class DigestCounters implements StatementRecord {

    private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

    static final int COUNT = 0;
    static final int ERRORS = 1;
    static final int WARNINGS = 2;
    static final int ROWS = 3;
    static final int AFFECTED = 4;
    static final int SUM_NANOS = 5;
    static final int MIN_NANOS = 6;
    static final int MAX_NANOS = 7;
    static final int LAST_NANOS = 8;
    static final int REPLICA = 9;
    static final int PINS = 10;
    static final int HISTOGRAM = 11;
    static final int SIZE = HISTOGRAM + LatencyBuckets.COUNT;

    /** What one entry costs, roughly: the object, its array, its slots in the loop's table. */
    static final long BYTES = 32 + 16 + 8L * SIZE + 40;

    private final long shape;
    private final DigestScope scope;
    private final SqlDigest digest;
    private final long firstNanos;
    private final long[] values = new long[SIZE];

    DigestCounters(long shape, DigestScope scope, SqlDigest digest, long firstNanos) {
        this.shape = shape;
        this.scope = scope;
        this.digest = digest;
        this.firstNanos = firstNanos;
        values[MIN_NANOS] = Long.MAX_VALUE;
        values[LAST_NANOS] = firstNanos;
    }

    long shape() {
        return shape;
    }

    /** Who ran the statements. */
    public DigestScope scope() {
        return scope;
    }

    /** Their digest; {@code null} for the {@code other} entry, which counts what the cap left out. */
    public SqlDigest digest() {
        return digest;
    }

    long firstNanos() {
        return firstNanos;
    }

    @Override
    public void completed(long nanos, long nowNanos, boolean failed, int warnings, long rows, long affectedRows,
            long statementId, boolean replica) {
        long[] a = values;
        add(a, COUNT, 1);
        if (failed) {
            add(a, ERRORS, 1);
        }
        if (warnings != 0) {
            add(a, WARNINGS, warnings);
        }
        if (rows != 0) {
            add(a, ROWS, rows);
        }
        if (affectedRows != 0) {
            add(a, AFFECTED, affectedRows);
        }
        add(a, SUM_NANOS, nanos);
        if (nanos < a[MIN_NANOS]) {
            LONGS.setRelease(a, MIN_NANOS, nanos);
        }
        if (nanos > a[MAX_NANOS]) {
            LONGS.setRelease(a, MAX_NANOS, nanos);
        }
        LONGS.setRelease(a, LAST_NANOS, nowNanos);
        if (replica) {
            add(a, REPLICA, 1);
        }
        add(a, HISTOGRAM + LatencyBuckets.index(nanos), 1);
    }

    /** A statement of this entry pinned its session to its backend connection (transaction pooling). */
    void pinned() {
        add(values, PINS, 1);
    }

    private static void add(long[] a, int index, long delta) {
        LONGS.setRelease(a, index, a[index] + delta);
    }

    /** One value, from any thread. */
    long read(int index) {
        return (long) LONGS.getAcquire(values, index);
    }
}
