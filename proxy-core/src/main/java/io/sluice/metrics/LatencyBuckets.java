package io.sluice.metrics;

import java.util.concurrent.TimeUnit;

/**
 * The fixed upper bounds of Sluice's latency histograms, from 50 µs (a point select through the proxy on one host)
 * to 10 s, plus +Inf. Fixed so that a histogram is a plain array of counters and recording is a short scan.
 */
public final class LatencyBuckets {

    private static final long[] BOUNDS_NANOS = {
        micros(50), micros(100), micros(250), micros(500),
        millis(1), micros(2500), millis(5), millis(10), millis(25), millis(50), millis(100), millis(250),
        millis(500), millis(1000), millis(2500), millis(5000), millis(10_000),
    };

    /** How many buckets a histogram has, +Inf included. */
    public static final int COUNT = BOUNDS_NANOS.length + 1;

    private LatencyBuckets() {
    }

    /** The bucket a duration falls in: the first whose upper bound is at least {@code nanos}. */
    public static int index(long nanos) {
        long[] bounds = BOUNDS_NANOS;
        for (int i = 0; i < bounds.length; i++) {
            if (nanos <= bounds[i]) {
                return i;
            }
        }
        return bounds.length;
    }

    /** The upper bounds in seconds, ending with +Inf, as Prometheus writes them in {@code le}. */
    public static double[] upperBoundsSeconds() {
        double[] seconds = new double[COUNT];
        for (int i = 0; i < BOUNDS_NANOS.length; i++) {
            seconds[i] = BOUNDS_NANOS[i] / 1e9;
        }
        seconds[COUNT - 1] = Double.POSITIVE_INFINITY;
        return seconds;
    }

    private static long micros(long value) {
        return TimeUnit.MICROSECONDS.toNanos(value);
    }

    private static long millis(long value) {
        return TimeUnit.MILLISECONDS.toNanos(value);
    }
}
