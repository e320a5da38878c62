package io.sluice.admin;

import com.sun.net.httpserver.HttpServer;
import io.sluice.api.ProxyControl;
import io.sluice.capture.TrafficCapture;
import io.sluice.config.AdminConfig;
import io.sluice.config.ConfigException;
import io.sluice.ops.metrics.SluiceMetrics;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin HTTP port ({@code admin.address:admin.port}, 127.0.0.1:3080 by default), served by the JDK's own HTTP
 * server ({@code com.sun.net.httpserver}) on a few threads of its own, so that a scrape or a reload never runs on a
 * thread that relays client traffic.
 *
 * <p>Not Netty, on purpose (decision 060): HTTP handled by Netty's codec runs through the same Netty pipeline and
 * buffer methods as the relay, and the JIT, which keeps one type profile per method, then deoptimises the relay's
 * compiled code and recompiles it with call sites that see HTTP handlers too. The JDK server shares no code with the
 * relay.
 *
 * <p>Started by {@code ops.SluiceServer}, not by the proxy: it reaches the proxy through {@link ProxyControl} only.
 *
 * <p>Endpoints: {@code GET /metrics}, {@code GET /health}, {@code GET /livez}, {@code GET /readyz},
 * {@code GET /api/version}, {@code GET /api/config}, {@code GET /api/backends},
 * {@code POST /api/backends/{name}/drain} and {@code /undrain}, {@code GET /api/sessions[?verbose]},
 * {@code POST /api/config/reload}, and the traffic capture's {@code /api/traffic/capture[/start|/stop]}. Every
 * {@code POST} needs {@code Authorization: Bearer <admin.token>}; who may read what is in {@link AdminHandler}. See
 * docs/operations.md.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);

    /** Requests are small; anything larger is refused with 413 before it is read. */
    static final int MAX_REQUEST_BYTES = 16 * 1024;

    /**
     * Threads serving requests. More than one so that a probe or a scrape is never queued behind a reload or a
     * verbose session listing (which may take a couple of seconds); few, because the calls are rare and each thread
     * is memory taken from the proxy. Mutating calls still run one at a time ({@link AdminHandler}).
     */
    static final int THREADS = 4;

    private final HttpServer server;
    private final ExecutorService threads;

    private AdminServer(HttpServer server, ExecutorService threads) {
        this.server = server;
        this.threads = threads;
    }

    /**
     * Opens the admin port.
     *
     * @param proxy the proxy the API reads and changes
     * @param capture the traffic capture {@code /api/traffic/capture} controls
     * @param metrics what {@code /metrics} serves, or {@code null} when metrics are off (it then answers 404)
     * @throws ConfigException when the port cannot be bound
     */
    public static AdminServer start(AdminConfig config, ProxyControl proxy, TrafficCapture capture,
            SluiceMetrics metrics) {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress(config.address(), config.port()), 64);
        } catch (IOException e) {
            throw new ConfigException("admin.port: " + config.port() + " on " + config.address()
                    + " cannot be bound: " + e.getMessage(), e);
        }
        AtomicInteger count = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(THREADS, task -> {
            Thread t = new Thread(task, "sluice-admin-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(threads);
        server.createContext("/", new AdminHandler(proxy, capture, metrics, config));
        server.start();
        AdminServer admin = new AdminServer(server, threads);
        log.info("Admin API on http://{}:{} (metrics at /metrics, probes at /livez and /readyz){}{}", config.address(),
                admin.port(), config.token() == null ? "; POST calls are disabled until admin.token is set" : "",
                !config.hasAnyToken() && !config.isLoopback()
                        ? "; /api/sessions and /api/config are refused until admin.readToken or admin.token is set"
                        : "");
        return admin;
    }

    /** The port the admin API listens on. */
    public int port() {
        return localAddress().getPort();
    }

    /** The address the admin API listens on. */
    public InetSocketAddress localAddress() {
        return server.getAddress();
    }

    /** Closes the port and every open admin connection, kept-alive ones included. */
    @Override
    public void close() {
        server.stop(0);
        threads.shutdownNow();
        try {
            threads.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
