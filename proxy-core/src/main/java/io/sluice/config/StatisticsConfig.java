package io.sluice.config;

/**
 * Statement statistics by digest ({@code statistics} in config.yaml; issue #41).
 *
 * @param enabled whether statements are counted by digest; off, the command path makes no call for them
 * @param maxDigests the most digest entries (digest, user, schema, group) each event loop keeps; statements of
 *     further shapes count in one {@code other} entry
 * @param metricsTopN how many entries, the largest by total time, {@code /metrics} shows as series of their own
 */
public record StatisticsConfig(boolean enabled, int maxDigests, int metricsTopN) {

    public static final int DEFAULT_MAX_DIGESTS = 10_000;
    public static final int DEFAULT_METRICS_TOP_N = 20;

    public StatisticsConfig {
        if (maxDigests < 1 || maxDigests > 10_000_000) {
            throw new IllegalArgumentException("maxDigests: " + maxDigests + " (expected: 1..10000000)");
        }
        if (metricsTopN < 0 || metricsTopN > 1000) {
            throw new IllegalArgumentException("metricsTopN: " + metricsTopN + " (expected: 0..1000)");
        }
    }

    /** On, 10,000 digests per event loop, the top 20 in the metrics. */
    public static StatisticsConfig defaults() {
        return new StatisticsConfig(true, DEFAULT_MAX_DIGESTS, DEFAULT_METRICS_TOP_N);
    }

    /** Off. */
    public static StatisticsConfig off() {
        return new StatisticsConfig(false, DEFAULT_MAX_DIGESTS, DEFAULT_METRICS_TOP_N);
    }
}
