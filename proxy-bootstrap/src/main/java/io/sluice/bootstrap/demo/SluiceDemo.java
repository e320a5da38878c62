package io.sluice.bootstrap.demo;

import io.sluice.Sluice;
import io.sluice.api.BuildInfo;
import io.sluice.config.AdminConfig;
import io.sluice.config.ConfigException;
import io.sluice.config.OperationsConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.TlsConfig;
import io.sluice.ops.SluiceServer;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code bin/start.sh --demo [port]}: Sluice in front of an embedded MariaDB holding a small sample schema, for a
 * first try on a machine with nothing but a JDK. Its configuration is built here, never read from config.yaml, and
 * listens on 127.0.0.1 only; the database and everything it wrote are deleted when it stops. Every start logs, at
 * WARN, that this is a demo.
 */
public final class SluiceDemo {

    /** The port Sluice listens on unless the command line says otherwise: the shipped config's. */
    public static final int DEFAULT_PORT = 3307;
    /** The account clients log in to Sluice with. */
    public static final String USER = "demo";
    public static final String PASSWORD = "demo";

    private static final String LOOPBACK = "127.0.0.1";
    private static final int EXIT_START_FAILED = 1;
    private static final Logger LOG = LoggerFactory.getLogger(SluiceDemo.class);

    private SluiceDemo() {
    }

    /**
     * Starts the embedded database and Sluice in front of it, prints how to connect, and runs until JVM shutdown,
     * which stops both and deletes the database's directory.
     *
     * @param port the port to listen on, or {@code null} for {@link #DEFAULT_PORT}
     * @param home the install directory (the demo works in {@code demo/run} under it), or {@code null} for a
     *     temporary directory
     * @return the process exit status
     */
    public static int run(Integer port, Path home, PrintStream out, PrintStream err) {
        warn("Sluice DEMO MODE: an embedded MariaDB with sample data, on 127.0.0.1 only. For trying Sluice, never"
                + " for production: the data is deleted at stop. Without --demo, Sluice uses conf/config.yaml.");
        DemoDirectory directory;
        try {
            directory = DemoDirectory.claim(home);
        } catch (IOException | IllegalStateException e) {
            err.println("sluice: demo: " + e.getMessage());
            return EXIT_START_FAILED;
        }
        // Registered before anything starts: a Ctrl-C while MariaDB unpacks (half a minute) still cleans up.
        Running running = new Running(directory);
        CountDownLatch stopped = new CountDownLatch(1);
        try {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                LOG.info("Stopping the demo");
                try {
                    running.stop();
                    LOG.info("Stopped");
                } finally {
                    stopped.countDown();
                }
            }, "sluice-demo-shutdown"));
        } catch (IllegalStateException shuttingDown) {
            directory.release();
            return EXIT_START_FAILED;
        }
        SluiceServer server;
        try {
            String backendPassword = HexFormat.of().formatHex(new SecureRandom().generateSeed(12));
            LOG.info("Demo: starting an embedded MariaDB in {} (the first start unpacks it: up to a minute)",
                    directory.path());
            ShopDatabase database = running.started(
                    ShopDatabase.start(directory.path().resolve("mariadb"), freePort(), backendPassword));
            LOG.info("Demo: MariaDB listens on {}:{}, with the sample schema {}", LOOPBACK, database.port(),
                    ShopDatabase.SCHEMA);
            ProxyConfig config = config(port == null ? DEFAULT_PORT : port, database.port(), backendPassword,
                    directory.path().resolve("tls"));
            requireLoopback(config);
            server = running.started(SluiceServer.start(config));
        } catch (Exception e) {
            LOG.error("Demo: cannot start", e);
            err.println("sluice: demo: cannot start: " + (e.getMessage() == null ? e.toString() : e.getMessage()));
            running.stop();
            return EXIT_START_FAILED;
        }

        Sluice sluice = server.sluice();
        Path client = directory.linkClient(directory.path().resolve("mariadb").resolve("base").resolve("bin")
                .resolve("mariadb"));
        out.print(DemoInstructions.text(sluice.port(), server.adminPort(), client,
                directory.path().resolve("tls").resolve("ca.pem")));
        announce(sluice, out);
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /**
     * The demo's configuration: clients log in as demo / demo on 127.0.0.1; Sluice logs in to the embedded server
     * as {@link ShopDatabase#BACKEND_USER}, whose privileges end at the sample schema. TLS uses certificates generated
     * into {@code tlsDirectory}, so clients can verify with its {@code ca.pem}; the admin API takes a free port.
     */
    static ProxyConfig config(int port, int backendPort, String backendPassword, Path tlsDirectory) {
        return ProxyConfig.builder()
                .dataSource("demo_shop", "jdbc:mysql://" + LOOPBACK + ":" + backendPort + "/" + ShopDatabase.SCHEMA,
                        ShopDatabase.BACKEND_USER, backendPassword)
                .server(ServerConfig.defaults().withAddress(LOOPBACK).withPort(port)
                        .withTls(TlsConfig.defaults().withGeneratedDirectory(tlsDirectory)))
                .user(USER, PASSWORD)
                .operations(OperationsConfig.defaults().withAdmin(AdminConfig.on(LOOPBACK, 0, null)))
                .build();
    }

    /**
     * Refuses a demo configuration that other hosts could reach: its account and password are printed on every
     * start. The configuration is built in code on 127.0.0.1, so this guards against a change to that code.
     */
    static void requireLoopback(ProxyConfig config) {
        String address = config.server().address();
        boolean loopback;
        try {
            loopback = InetAddress.getByName(address).isLoopbackAddress();
        } catch (UnknownHostException e) {
            loopback = false;
        }
        if (!loopback) {
            throw new ConfigException("demo mode listens on 127.0.0.1 only, not " + address
                    + " (expected: bin/start.sh without --demo and a config.yaml of your own to open Sluice up)");
        }
    }

    /** The line bin/start.sh waits for, as the proxy's own start prints it. */
    private static void announce(Sluice sluice, PrintStream out) {
        String line = "Sluice " + BuildInfo.version() + " listening on " + sluice.localAddress().getHostString() + ":"
                + sluice.port() + " (demo mode)";
        LOG.info(line);
        if (!"console".equals(System.getProperty("sluice.log.target"))) {
            out.println(line); // in the foreground the log line above is on stdout already
        }
        out.flush();
        warn("Sluice DEMO MODE is running: not for production.");
    }

    private static void warn(String message) {
        String rule = "*".repeat(Math.min(message.length(), 100));
        LOG.warn(rule);
        LOG.warn(message);
        LOG.warn(rule);
    }

    /** What the demo has started so far, stopped in reverse order once, by the shutdown hook or a failed start. */
    private static final class Running {
        private final DemoDirectory directory;
        private ShopDatabase database;
        private SluiceServer server;
        private boolean stopped;

        Running(DemoDirectory directory) {
            this.directory = directory;
        }

        synchronized ShopDatabase started(ShopDatabase value) throws Exception {
            if (stopped) { // the JVM is going down: nobody else will stop it
                value.stop();
                throw new IllegalStateException("stopped while starting");
            }
            database = value;
            return value;
        }

        synchronized SluiceServer started(SluiceServer value) {
            if (stopped) {
                value.close();
                throw new IllegalStateException("stopped while starting");
            }
            server = value;
            return value;
        }

        synchronized void stop() {
            if (stopped) {
                return;
            }
            stopped = true;
            if (server != null) {
                server.shutdownGracefully(); // sessions first, while their backend is still there
            }
            if (database != null) {
                try {
                    database.stop();
                } catch (Exception e) {
                    LOG.warn("Demo: stopping the embedded MariaDB: {}", e.toString());
                }
            }
            directory.release();
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
            return socket.getLocalPort();
        }
    }
}
