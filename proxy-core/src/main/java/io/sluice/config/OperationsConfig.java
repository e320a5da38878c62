package io.sluice.config;

import java.util.Objects;

/**
 * What operators need besides the data path: the admin port, metrics, graceful shutdown, the slow-query
 * log and config reload. One record so that {@link ProxyConfig} grows by one component, not five.
 *
 * @param admin the admin HTTP port
 * @param metrics command counting and timing, {@code /metrics}
 * @param shutdown graceful shutdown timings
 * @param slowQueryLog the slow-query log
 * @param watchConfigFile whether the standalone proxy reloads {@code config.yaml} when the file changes
 * @param capture where traffic captures may write, and read their keys
 */
public record OperationsConfig(AdminConfig admin, MetricsConfig metrics, ShutdownConfig shutdown,
        SlowQueryLogConfig slowQueryLog, boolean watchConfigFile, CaptureConfig capture) {

    public OperationsConfig {
        Objects.requireNonNull(admin, "admin");
        Objects.requireNonNull(metrics, "metrics");
        Objects.requireNonNull(shutdown, "shutdown");
        Objects.requireNonNull(slowQueryLog, "slowQueryLog");
        Objects.requireNonNull(capture, "capture");
    }

    /** With the capture directories of a configuration without a conf dir ({@link CaptureConfig#defaults}). */
    public OperationsConfig(AdminConfig admin, MetricsConfig metrics, ShutdownConfig shutdown,
            SlowQueryLogConfig slowQueryLog, boolean watchConfigFile) {
        this(admin, metrics, shutdown, slowQueryLog, watchConfigFile, CaptureConfig.defaults(null));
    }

    /** What config.yaml gets for absent sections: admin on 127.0.0.1:3080, metrics on, file watched. */
    public static OperationsConfig defaults() {
        return new OperationsConfig(AdminConfig.defaults(), MetricsConfig.defaults(), ShutdownConfig.defaults(),
                SlowQueryLogConfig.defaults(), true);
    }

    /**
     * What a configuration built in code gets: the same, except that no admin port is opened and no file is
     * watched. An embedding application has its own HTTP server and must not find a port taken it never asked for.
     */
    public static OperationsConfig embedded() {
        return new OperationsConfig(AdminConfig.disabled(), MetricsConfig.defaults(), ShutdownConfig.defaults(),
                SlowQueryLogConfig.defaults(), false);
    }

    public OperationsConfig withAdmin(AdminConfig value) {
        return new OperationsConfig(value, metrics, shutdown, slowQueryLog, watchConfigFile, capture);
    }

    public OperationsConfig withMetrics(MetricsConfig value) {
        return new OperationsConfig(admin, value, shutdown, slowQueryLog, watchConfigFile, capture);
    }

    public OperationsConfig withShutdown(ShutdownConfig value) {
        return new OperationsConfig(admin, metrics, value, slowQueryLog, watchConfigFile, capture);
    }

    public OperationsConfig withSlowQueryLog(SlowQueryLogConfig value) {
        return new OperationsConfig(admin, metrics, shutdown, value, watchConfigFile, capture);
    }

    public OperationsConfig withCapture(CaptureConfig value) {
        return new OperationsConfig(admin, metrics, shutdown, slowQueryLog, watchConfigFile, value);
    }
}
