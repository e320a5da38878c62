package io.sluice.bootstrap;

import io.sluice.Sluice;
import io.sluice.api.BuildInfo;
import io.sluice.bootstrap.demo.SluiceDemo;
import io.sluice.config.ConfigException;
import io.sluice.config.ConfigYaml;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.ops.SluiceServer;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The standalone proxy: {@code sluice [port] [conf-dir]}, or {@code sluice --demo [port]} ({@link SluiceDemo}).
 * Loads {@code <conf-dir>/config.yaml}, starts Sluice with its metrics and admin port ({@link SluiceServer}) and
 * runs until the JVM is asked to stop (SIGTERM from {@code bin/stop.sh}, Ctrl-C), then shuts down gracefully: see
 * {@link Sluice#shutdownGracefully()}. Reloads config.yaml on {@code POST /api/config/reload} and, unless
 * {@code reload.watchFile} is false, when the file changes.
 *
 * <p>Exit status: 0 after a clean stop, {@code --help} or {@code --version}, 1 when the configuration is refused or the proxy cannot
 * start, 2 for bad arguments. Every failure prints one line {@code sluice: <reason>} to stderr, which
 * {@code bin/start.sh} shows to the user.
 */
public final class SluiceMain {

    /** The configuration was refused or the proxy could not start. */
    static final int EXIT_START_FAILED = 1;
    /** The command line was not {@code [port] [conf-dir]}. */
    static final int EXIT_BAD_ARGUMENTS = 2;

    /** bin/start.sh waits for this text in stdout.log to know the proxy is up. */
    static final String LISTENING = "listening on";

    /** Where conf/logback.xml sends the log: {@code file}, or {@code console} under {@code start.sh --foreground}. */
    static final String LOG_TARGET = "sluice.log.target";
    static final String LOG_TARGET_CONSOLE = "console";

    private static final Logger LOG = LoggerFactory.getLogger(SluiceMain.class);

    private SluiceMain() {
    }

    public static void main(String[] args) {
        poolLargeBuffers(); // first: Netty reads the property once, when its allocator class loads
        int status = run(args, System.out, System.err);
        // Only exit explicitly on failure: after a clean stop we are inside JVM shutdown already, where
        // System.exit would block forever.
        if (status != 0) {
            System.exit(status);
        }
    }

    /** The Netty property that, when true, stops its default allocator pooling buffers over 16 KiB. */
    static final String NETTY_LOW_MEMORY = "io.netty.allocator.lowMemory";

    /**
     * Keeps Netty's allocator pooling the 16–64 KiB buffers Sluice reads results into, unless the user chose
     * otherwise with {@code -Dio.netty.allocator.lowMemory}. Netty switches to its low-memory mode on any heap of
     * 512 MiB or less, start.sh's default; in that mode each read of a large result allocated and zeroed a new direct
     * buffer. See decision 052.
     */
    static void poolLargeBuffers() {
        if (System.getProperty(NETTY_LOW_MEMORY) == null) {
            System.setProperty(NETTY_LOW_MEMORY, "false");
        }
    }

    /**
     * Runs the proxy until JVM shutdown, or refuses to.
     *
     * @return the process exit status
     */
    static int run(String[] args, PrintStream out, PrintStream err) {
        CommandLine commandLine;
        try {
            commandLine = CommandLine.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("sluice: " + e.getMessage());
            err.println(CommandLine.USAGE);
            return EXIT_BAD_ARGUMENTS;
        }
        if (commandLine.help()) {
            out.println(CommandLine.USAGE);
            return 0;
        }
        if (commandLine.version()) {
            out.println("Sluice " + version() + " (Java " + BuildInfo.javaVersion() + ")");
            return 0;
        }
        if (commandLine.demo()) {
            String home = System.getProperty("sluice.home");
            return SluiceDemo.run(commandLine.port(), home == null ? null : Path.of(home), out, err);
        }

        SluiceServer server;
        try {
            server = start(commandLine);
        } catch (ConfigException e) {
            LOG.error("Cannot start: {}", e.getMessage());
            err.println("sluice: " + e.getMessage());
            return EXIT_START_FAILED;
        } catch (RuntimeException e) {
            // Not a refusal we expected: the stack trace goes to the log for a bug report.
            LOG.error("Cannot start", e);
            err.println("sluice: cannot start: " + describe(e));
            return EXIT_START_FAILED;
        }

        Sluice sluice = server.sluice();
        // Reload reads the file again through the same path as the start, port override included.
        sluice.configSource(() -> load(commandLine));
        ConfigFileWatcher watcher = null;
        if (sluice.config().operations().watchConfigFile()) {
            watcher = new ConfigFileWatcher(commandLine.configFile(), sluice);
            watcher.start();
        }
        ConfigFileWatcher watching = watcher;
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            LOG.info("Stopping");
            try {
                if (watching != null) {
                    watching.close();
                }
                server.shutdownGracefully(); // /health 503, refuse new connections, let transactions finish
                LOG.info("Stopped");
            } finally {
                stopped.countDown();
            }
        }, "sluice-shutdown"));
        // Only now: whoever sees this line (start.sh, a supervisor, a test) may stop Sluice at once, and a SIGTERM
        // that came before the hook would end the JVM without the graceful shutdown.
        announce(sluice, out);
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /**
     * Loads the configuration, applies the command line and starts the proxy with its metrics and admin port.
     *
     * @throws ConfigException when the file is refused or the proxy cannot serve it (port taken, no backend)
     */
    static SluiceServer start(CommandLine commandLine) {
        ProxyConfig config = load(commandLine);
        return SluiceServer.start(config);
    }

    /** Says where Sluice listens: the line bin/start.sh waits for. */
    static void announce(Sluice sluice, PrintStream out) {
        InetSocketAddress address = sluice.localAddress();
        String line = "Sluice " + version() + " " + LISTENING + " " + address.getHostString() + ":" + sluice.port();
        LOG.info(line);
        if (!LOG_TARGET_CONSOLE.equals(System.getProperty(LOG_TARGET))) {
            // Daemonised, bin/start.sh waits for this line in logs/stdout.log. In the foreground the log line above is
            // on stdout already, and a second copy would break a stream of JSON log lines.
            out.println(line);
            out.flush();
        }
    }

    /**
     * Reads config.yaml and applies the port from the command line; refuses an open listener with a guessable account
     * ({@link ExposedDefaultsCheck}). Starts and reloads both come through here.
     */
    static ProxyConfig load(CommandLine commandLine) {
        ProxyConfig config = ConfigYaml.load(commandLine.configFile());
        if (commandLine.port() != null) {
            config = config.withServer(config.server().withPort(commandLine.port()));
        }
        ExposedDefaultsCheck.check(config, commandLine.configFile().toString());
        // Names and URLs only: the records' toString never includes a password.
        for (DataSourceConfig dataSource : config.dataSources().values()) {
            LOG.info("Data source {}", dataSource);
        }
        if (config.usersFromBackend()) {
            LOG.info("Users: the server's own accounts (authority.users: FROM_BACKEND), read every {} ms",
                    config.serverAccounts().refreshMilliseconds());
        } else if (config.users().isEmpty()) {
            LOG.warn("{}: no authority.users: no client can log in", commandLine.configFile());
        } else {
            LOG.info("Users: {}", config.users());
        }
        return config;
    }

    /** This build's version: {@link BuildInfo#version()}. */
    static String version() {
        return BuildInfo.version();
    }

    private static String describe(Throwable e) {
        return e.getMessage() == null ? e.getClass().getName() : e.getClass().getSimpleName() + ": " + e.getMessage();
    }
}
