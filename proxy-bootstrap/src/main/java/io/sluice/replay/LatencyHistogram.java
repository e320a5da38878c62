package io.sluice.replay;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Latencies in buckets 5% wide (log scale from 1 µs to over a day), so that percentiles of millions of commands cost
 * a few kilobytes; a percentile is exact to within one bucket. Not thread-safe: each session has its own, merged at
 * the end.
 */
final class LatencyHistogram {
    private static final double STEP = Math.log(1.05);
    private static final int BUCKETS = 600;

    private final long[] counts = new long[BUCKETS];
    private long count;
    private long sumNanos;
    private long maxNanos;

    void add(long nanos) {
        long v = Math.max(0, nanos);
        counts[bucket(v)]++;
        count++;
        sumNanos += v;
        maxNanos = Math.max(maxNanos, v);
    }

    void merge(LatencyHistogram other) {
        for (int i = 0; i < BUCKETS; i++) {
            counts[i] += other.counts[i];
        }
        count += other.count;
        sumNanos += other.sumNanos;
        maxNanos = Math.max(maxNanos, other.maxNanos);
    }

    long count() {
        return count;
    }

    double averageMillis() {
        return count == 0 ? 0 : sumNanos / 1e6 / count;
    }

    /** The latency below which {@code fraction} of the values lie, in milliseconds (upper edge of the bucket). */
    double percentileMillis(double fraction) {
        if (count == 0) {
            return 0;
        }
        long rank = (long) Math.ceil(fraction * count);
        long seen = 0;
        for (int i = 0; i < BUCKETS; i++) {
            seen += counts[i];
            if (seen >= Math.max(1, rank)) {
                return Math.min(upperNanos(i), maxNanos) / 1e6;
            }
        }
        return maxNanos / 1e6;
    }

    Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("count", count);
        json.put("avg", round(averageMillis()));
        json.put("p50", round(percentileMillis(0.50)));
        json.put("p95", round(percentileMillis(0.95)));
        json.put("p99", round(percentileMillis(0.99)));
        json.put("max", round(maxNanos / 1e6));
        return json;
    }

    static double round(double millis) {
        return Math.round(millis * 1000) / 1000.0;
    }

    private static int bucket(long nanos) {
        double micros = nanos / 1000.0;
        return (int) Math.min(BUCKETS - 1, Math.max(0, Math.ceil(Math.log1p(micros) / STEP)));
    }

    private static long upperNanos(int bucket) {
        return (long) (Math.expm1(bucket * STEP) * 1000);
    }
}
