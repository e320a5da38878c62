package io.sluice.ops;

import io.sluice.Sluice;
import io.sluice.admin.AdminServer;
import io.sluice.api.MetricSources;
import io.sluice.config.AdminConfig;
import io.sluice.config.ConfigException;
import io.sluice.config.ProxyConfig;
import io.sluice.ops.metrics.SluiceMetrics;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Sluice with its operations: the proxy, the Prometheus metrics (when {@code metrics.enabled}) and the admin HTTP
 * port (when {@code admin.enabled}). The standalone proxy starts this; so does an embedder who wants the admin port.
 *
 * <pre>{@code
 * try (SluiceServer server = SluiceServer.start(config)) {
 *     int port = server.sluice().port();   // clients connect here
 *     int admin = server.adminPort();      // /metrics, /health, /api/...
 * }
 * }</pre>
 *
 * <p>The composition root: the proxy knows neither the admin server nor the exporter, which reach it only through
 * {@link io.sluice.api.ProxyControl} and {@link MetricSources}; see docs/decisions/065-layering.md.
 */
public final class SluiceServer implements AutoCloseable {
    private final Sluice sluice;
    private final SluiceMetrics metrics;
    private final AdminServer admin;
    private final AtomicBoolean adminClosed = new AtomicBoolean();
    private final AtomicBoolean metricsClosed = new AtomicBoolean();

    private SluiceServer(Sluice sluice, SluiceMetrics metrics, AdminServer admin) {
        this.sluice = sluice;
        this.metrics = metrics;
        this.admin = admin;
    }

    /**
     * Starts the proxy, then its metrics and admin port as the configuration asks; returns once all accept
     * connections.
     *
     * @throws ConfigException when the configuration cannot be served: a port is taken, or no backend can be
     *     reached; whatever had started is closed again
     */
    public static SluiceServer start(ProxyConfig config) {
        Sluice sluice = Sluice.start(config);
        MetricSources sources = sluice.metricSources();
        SluiceMetrics metrics = sources == null ? null : new SluiceMetrics(sources);
        AdminConfig adminConfig = config.operations().admin();
        AdminServer admin = null;
        if (adminConfig.enabled()) {
            try {
                admin = AdminServer.start(adminConfig, sluice, sluice.trafficCapture(), metrics);
            } catch (ConfigException e) {
                sluice.close();
                if (metrics != null) {
                    metrics.close();
                }
                throw e;
            }
        }
        return new SluiceServer(sluice, metrics, admin);
    }

    /** The proxy. */
    public Sluice sluice() {
        return sluice;
    }

    /** The metrics, or {@code null} when {@code metrics.enabled} is false. */
    public SluiceMetrics metrics() {
        return metrics;
    }

    /** The port of the admin API, or -1 when it is not open. */
    public int adminPort() {
        return admin == null ? -1 : admin.port();
    }

    /**
     * Shuts the proxy down gracefully ({@link Sluice#shutdownGracefully()}: {@code /health} answers 503 while
     * sessions drain), then closes the admin port and the metrics.
     *
     * @return true when every session ended on its own, false when some had to be cut
     */
    public boolean shutdownGracefully() {
        try {
            return sluice.shutdownGracefully();
        } finally {
            closeAdmin();
            closeMetrics();
        }
    }

    /**
     * As {@link #shutdownGracefully()}, with these timings rather than the configured ones; see
     * {@link Sluice#shutdownGracefully(Duration, Duration)}.
     */
    public boolean shutdownGracefully(Duration waitBeforeRefusing, Duration closeTimeout) {
        try {
            return sluice.shutdownGracefully(waitBeforeRefusing, closeTimeout);
        } finally {
            closeAdmin();
            closeMetrics();
        }
    }

    /** Closes the admin port, the proxy and the metrics. Idempotent. */
    @Override
    public void close() {
        closeAdmin(); // first: nothing may reach a proxy that is closing
        sluice.close();
        closeMetrics();
    }

    private void closeAdmin() {
        if (admin != null && adminClosed.compareAndSet(false, true)) {
            admin.close();
        }
    }

    private void closeMetrics() {
        if (metrics != null && metricsClosed.compareAndSet(false, true)) {
            metrics.close();
        }
    }
}
