package io.sluice.admin;

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
 * The admin HTTP port ({@code admin.address:admin.port}, 127.0.0.1:3080 by default): HTTP/1.1 read and written without
 * blocking by {@link AdminPort} on a thread of its own, requests answered on a few threads of their own, so that a
 * scrape or a reload never runs on a thread that relays client traffic, and no client holds a thread while it sends.
 *
 * <p>Not Netty, on purpose (decision 060): HTTP handled by Netty's codec runs through the same Netty pipeline and
 * buffer methods as the relay, and the JIT, which keeps one type profile per method, then deoptimises the relay's
 * compiled code and recompiles it with call sites that see HTTP handlers too. Nor, since decision 132, the JDK's
 * {@code com.sun.net.httpserver}: it reads a request's headers on the thread that will answer it, so four clients
 * trickling headers took every thread and the probes with them.
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
     * Threads answering API requests. More than one so that a reload or a verbose session listing (which may take a
     * couple of seconds) holds up no other call; few, because the calls are rare and each thread is memory taken from
     * the proxy. Mutating calls still run one at a time ({@link AdminHandler}).
     */
    static final int THREADS = 4;
    /** Threads answering the probes and {@code /metrics}, which never wait behind an API call. */
    static final int PROBE_THREADS = 2;

    private final AdminPort port;
    private final ExecutorService threads;
    private final ExecutorService probeThreads;

    private AdminServer(AdminPort port, ExecutorService threads, ExecutorService probeThreads) {
        this.port = port;
        this.threads = threads;
        this.probeThreads = probeThreads;
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
        ExecutorService threads = pool("sluice-admin-", THREADS);
        ExecutorService probeThreads = pool("sluice-admin-probe-", PROBE_THREADS);
        AdminPort port;
        try {
            port = new AdminPort(new InetSocketAddress(config.address(), config.port()),
                    new AdminHandler(proxy, capture, metrics, config), probeThreads, threads);
        } catch (IOException e) {
            threads.shutdownNow();
            probeThreads.shutdownNow();
            throw new ConfigException("admin.port: " + config.port() + " on " + config.address()
                    + " cannot be bound: " + e.getMessage(), e);
        }
        port.start();
        AdminServer admin = new AdminServer(port, threads, probeThreads);
        log.info("Admin API on http://{}:{} (metrics at /metrics, probes at /livez and /readyz){}{}", config.address(),
                admin.port(), config.token() == null ? "; POST calls are disabled until admin.token is set" : "",
                !config.hasAnyToken() && !config.isLoopback()
                        ? "; /api/sessions and /api/config are refused until admin.readToken or admin.token is set"
                        : "");
        return admin;
    }

    private static ExecutorService pool(String name, int size) {
        AtomicInteger count = new AtomicInteger();
        return Executors.newFixedThreadPool(size, task -> {
            Thread t = new Thread(task, name + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** The port the admin API listens on. */
    public int port() {
        return localAddress().getPort();
    }

    /** The address the admin API listens on. */
    public InetSocketAddress localAddress() {
        return port.localAddress();
    }

    /** Closes the port and every open admin connection, kept-alive ones included. */
    @Override
    public void close() {
        port.close();
        threads.shutdownNow();
        probeThreads.shutdownNow();
        try {
            threads.awaitTermination(1, TimeUnit.SECONDS);
            probeThreads.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
