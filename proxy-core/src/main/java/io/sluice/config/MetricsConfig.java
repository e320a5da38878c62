package io.sluice.config;

import java.util.Objects;

/**
 * Metrics.
 *
 * @param enabled whether Sluice counts commands, times them and serves {@code /metrics}; off, the command path does
 *     no metrics work at all (the switch the "metrics on vs off" benchmark compares)
 * @param statistics statement statistics by digest (config.yaml's top-level {@code statistics}), which do not depend
 *     on {@code enabled}
 */
public record MetricsConfig(boolean enabled, StatisticsConfig statistics) {

    public MetricsConfig {
        Objects.requireNonNull(statistics, "statistics");
    }

    /** With statistics by digest on, as by default. */
    public MetricsConfig(boolean enabled) {
        this(enabled, StatisticsConfig.defaults());
    }

    public static MetricsConfig defaults() {
        return new MetricsConfig(true);
    }

    public MetricsConfig withStatistics(StatisticsConfig value) {
        return new MetricsConfig(enabled, value);
    }
}
