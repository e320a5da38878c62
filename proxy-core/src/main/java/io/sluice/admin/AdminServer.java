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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin HTTP port ({@code admin.address:admin.port}, 127.0.0.1:3080 by default), served by the JDK's own HTTP
 * server ({@code com.sun.net.httpserver}) on a thread of its own, so that a scrape or a reload never runs on a
 * thread that relays client traffic.
 *
 * <p>Not Netty, on purpose (decision 060): HTTP handled by Netty's codec runs through the same Netty pipeline and
 * buffer methods as the relay, and the JIT, which keeps one type profile per method, then deoptimises the relay's
 * compiled code and recompiles it with call sites that see HTTP handlers too. The JDK server shares no code with the
 * relay.
 *
 * <p>Started by {@code ops.SluiceServer}, not by the proxy: it reaches the proxy through {@link ProxyControl} only.
 *
 * <p>Endpoints: {@code GET /metrics}, {@code GET /health}, {@code GET /api/backends},
 * {@code POST /api/backends/{name}/drain} and {@code /undrain}, {@code GET /api/sessions[?verbose]},
 * {@code POST /api/config/reload}, and the traffic capture's {@code /api/traffic/capture[/start|/stop]}. Every
 * {@code POST} needs {@code Authorization: Bearer <admin.token>}. See
 * docs/operations.md.
 */
public final class AdminServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);

    /** Requests are small; anything larger is refused with 413 before it is read. */
    static final int MAX_REQUEST_BYTES = 16 * 1024;

    private final HttpServer server;
    private final ExecutorService thread;

    private AdminServer(HttpServer server, ExecutorService thread) {
        this.server = server;
        this.thread = thread;
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
        // One thread: the calls are rare and short, and one at a time keeps reloads and drains in order.
        ExecutorService thread = Executors.newSingleThreadExecutor(task -> {
            Thread t = new Thread(task, "sluice-admin");
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(thread);
        server.createContext("/", new AdminHandler(proxy, capture, metrics, config.token()));
        server.start();
        AdminServer admin = new AdminServer(server, thread);
        log.info("Admin API on http://{}:{} (metrics at /metrics, health at /health){}", config.address(),
                admin.port(), config.token() == null ? "; POST calls are disabled until admin.token is set" : "");
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
        thread.shutdownNow();
        try {
            thread.awaitTermination(1, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
