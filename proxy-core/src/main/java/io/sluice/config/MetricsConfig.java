package io.sluice.config;

/**
 * Metrics.
 *
 * @param enabled whether Sluice counts commands, times them and serves {@code /metrics}; off, the command path does
 *     no metrics work at all (the switch the "metrics on vs off" benchmark compares)
 */
public record MetricsConfig(boolean enabled) {

    public static MetricsConfig defaults() {
        return new MetricsConfig(true);
    }
}
