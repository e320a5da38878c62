package io.sluice.drivers;

import io.sluice.testing.Prerequisites;
import io.sluice.testing.Tool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Driver;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The client libraries of the driver matrix (issue #27, item 5), each with its defaults unless said otherwise, and
 * how the test starts one. A library the machine lacks is a {@link Prerequisites} failure (on CI) naming the Debian
 * package that {@code .ci/run} installs, never a silent skip.
 */
enum ClientDriver {

    /** MariaDB Connector/J 3.x, the version the project tests with (pom: mariadb-client.version). */
    MARIADB_CONNECTOR_J(Prepares.SERVER) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            return JdbcClient.direct(new org.mariadb.jdbc.Driver(), jdbcUrl("mariadb", e,
                    serverPrepare ? "useServerPrepStmts=true" : ""), e.user(), e.password());
        }

        /** It closes its connection when the server reports a character set that is not UTF-8 (decision 064). */
        @Override
        boolean takesLatin1Results() {
            return false;
        }
    },

    /** MySQL Connector/J 9.x with a default URL (no trackSessionState). */
    MYSQL_CONNECTOR_J_9(Prepares.SERVER) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            return JdbcClient.direct(connectorJ9(), jdbcUrl("mysql", e, connectorJ(serverPrepare, "")),
                    e.user(), e.password());
        }
    },

    /** MySQL Connector/J 9.x with {@code trackSessionState=true}, which makes it negotiate CLIENT_SESSION_TRACK. */
    MYSQL_CONNECTOR_J_9_TRACK_SESSION_STATE(Prepares.SERVER) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            return JdbcClient.direct(connectorJ9(),
                    jdbcUrl("mysql", e, connectorJ(serverPrepare, "trackSessionState=true")), e.user(), e.password());
        }
    },

    /** MySQL Connector/J 9.x with a default URL, its connections kept open by HikariCP. */
    MYSQL_CONNECTOR_J_9_HIKARICP(Prepares.SERVER) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            return JdbcClient.hikari(connectorJ9(), jdbcUrl("mysql", e, connectorJ(serverPrepare, "")),
                    e.user(), e.password(), sessions);
        }
    },

    /** MySQL Connector/J 8.x with a default URL, from a class loader of its own (see {@link #connectorJ8()}). */
    MYSQL_CONNECTOR_J_8(Prepares.SERVER) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            return JdbcClient.direct(connectorJ8(), jdbcUrl("mysql", e, connectorJ(serverPrepare, "")), e.user(),
                    e.password());
        }
    },

    /** MySQL Connector/J 8.x with a default URL, through HikariCP. */
    MYSQL_CONNECTOR_J_8_HIKARICP(Prepares.SERVER) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            return JdbcClient.hikari(connectorJ8(), jdbcUrl("mysql", e, connectorJ(serverPrepare, "")), e.user(),
                    e.password(), sessions);
        }
    },

    /** PHP's mysqli on mysqlnd (Debian php-cli, php-mysql). */
    PHP_MYSQLI(Prepares.SERVER) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            requirePhp("mysqli");
            return new ScriptedClient("php-mysqli", List.of("php", script("php.php").toString(), "mysqli"), Map.of(),
                    e, serverPrepare);
        }
    },

    /** PHP's PDO_mysql on mysqlnd, with ATTR_EMULATE_PREPARES off for the prepared statements. */
    PHP_PDO(Prepares.SERVER) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            requirePhp("pdo_mysql");
            return new ScriptedClient("php-pdo", List.of("php", script("php.php").toString(), "pdo"), Map.of(), e,
                    serverPrepare);
        }
    },

    /** Go's database/sql with go-sql-driver/mysql, built in GOPATH mode from Debian's package. */
    GO_SQL_DRIVER(Prepares.SERVER) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            return new ScriptedClient("go-sql-driver", List.of(GoBuild.binary().toString()), Map.of(), e,
                    serverPrepare);
        }
    },

    /** Ruby's mysql2 on libmariadb (Debian ruby-mysql2). */
    RUBY_MYSQL2(Prepares.SERVER) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            require(List.of("ruby", "-e", "require 'mysql2'"), "Ruby's mysql2", "apt-get install ruby-mysql2");
            return new ScriptedClient("ruby-mysql2", List.of("ruby", script("mysql2_client.rb").toString()), Map.of(),
                    e, serverPrepare);
        }
    },

    /** Perl's DBI with DBD::MariaDB on libmariadb, with mariadb_server_prepare for the prepared statements. */
    PERL_DBD_MARIADB(Prepares.SERVER) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            require(List.of("perl", "-MDBD::MariaDB", "-e", "1"), "Perl's DBD::MariaDB",
                    "apt-get install libdbd-mariadb-perl");
            return new ScriptedClient("perl-dbd-mariadb", List.of("perl", script("dbd_mariadb.pl").toString()),
                    Map.of(), e, serverPrepare);
        }
    },

    /** PyMySQL, Debian's, so on Debian's Python; it quotes parameters on the client (it has no server prepare). */
    PYTHON_PYMYSQL(Prepares.CLIENT) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            require(List.of(DEBIAN_PYTHON, "-c", "import pymysql"), "PyMySQL for " + DEBIAN_PYTHON,
                    "apt-get install python3-pymysql");
            return new ScriptedClient("python-pymysql", List.of(DEBIAN_PYTHON, script("pymysql_client.py").toString()),
                    Map.of(), e, serverPrepare);
        }
    },

    /** The mariadb command-line client (libmariadb), one process per session. */
    MARIADB_CLI(Prepares.NONE) {
        @Override
        DriverClient start(Endpoint e, int sessions, boolean serverPrepare) {
            Path mariadb = Tool.MARIADB.path();
            return new MariaDbCliClient(mariadb, e, output(List.of(mariadb.toString(), "--version")).strip());
        }
    };

    /** What a library's prepared statements are. */
    enum Prepares {
        /** COM_STMT_PREPARE and COM_STMT_EXECUTE on the server. */
        SERVER,
        /** Parameters quoted into the SQL on the client. */
        CLIENT,
        /** None at all. */
        NONE
    }

    /** Debian's interpreter, where python3-pymysql installs (the PATH may lead to another one, pyenv's say). */
    private static final String DEBIAN_PYTHON = "/usr/bin/python3";

    private final Prepares prepares;

    ClientDriver(Prepares prepares) {
        this.prepares = prepares;
    }

    /**
     * Starts the library: nothing is connected yet.
     *
     * @param sessions how many sessions the test will open at most (a HikariCP pool keeps that many open)
     * @param serverPrepare whether prepared statements should be server-side where the library makes that optional
     */
    abstract DriverClient start(Endpoint endpoint, int sessions, boolean serverPrepare);

    Prepares prepares() {
        return prepares;
    }

    /** Whether the library lives with {@code SET NAMES latin1}. */
    boolean takesLatin1Results() {
        return true;
    }

    // ---- helpers ----------------------------------------------------------------------------------------------

    private static String jdbcUrl(String scheme, Endpoint e, String params) {
        return "jdbc:" + scheme + "://" + e.host() + ":" + e.port() + "/" + e.database()
                + (params.isEmpty() ? "" : "?" + params);
    }

    /** MySQL Connector/J parameters: server-side prepared statements (its default is to emulate them) and more. */
    private static String connectorJ(boolean serverPrepare, String more) {
        String prepare = serverPrepare ? "useServerPrepStmts=true&cachePrepStmts=true" : "";
        if (more.isEmpty()) {
            return prepare;
        }
        return prepare.isEmpty() ? more : prepare + "&" + more;
    }

    /** MySQL Connector/J 9.x, the version on the test class path (pom: mysql-client.version). */
    private static Driver connectorJ9() {
        try {
            return new com.mysql.cj.jdbc.Driver();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static volatile Driver connectorJ8;

    /**
     * MySQL Connector/J 8.x, loaded from its own jar by a class loader of its own (the test class path has 9.x):
     * the build copies the jar to {@code target/drivers} (maven-dependency-plugin) and names it in the system
     * property {@code sluice.test.mysqlConnectorJ8}.
     */
    static synchronized Driver connectorJ8() {
        if (connectorJ8 == null) {
            String jar = System.getProperty("sluice.test.mysqlConnectorJ8");
            Prerequisites.require(jar != null && Files.isRegularFile(Path.of(jar)),
                    "MySQL Connector/J 8.x at the path in -Dsluice.test.mysqlConnectorJ8 (" + jar + ")",
                    "run the tests through Maven, whose dependency plugin copies it to proxy-core/target/drivers");
            try {
                // The platform class loader as parent: nothing of the test class path (Connector/J 9) is visible.
                URLClassLoader loader = new URLClassLoader("mysql-connector-j-8",
                        new URL[] {Path.of(jar).toUri().toURL()}, ClassLoader.getPlatformClassLoader());
                connectorJ8 = (Driver) loader.loadClass("com.mysql.cj.jdbc.Driver").getDeclaredConstructor()
                        .newInstance();
            } catch (MalformedURLException | ReflectiveOperationException e) {
                throw new IllegalStateException("cannot load MySQL Connector/J 8 from " + jar, e);
            }
            if (connectorJ8.getMajorVersion() != 8) {
                throw new IllegalStateException(jar + " is Connector/J " + connectorJ8.getMajorVersion());
            }
        }
        return connectorJ8;
    }

    /** A script of src/test/resources/drivers, as a file. */
    static Path script(String name) {
        URL url = ClientDriver.class.getResource("/drivers/" + name);
        if (url == null) {
            throw new IllegalStateException("no test resource drivers/" + name);
        }
        try {
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(url.toString(), e);
        }
    }

    private static void requirePhp(String extension) {
        require(List.of("php", "-r", "exit(extension_loaded('" + extension + "') ? 0 : 1);"),
                "PHP with its " + extension + " extension", "apt-get install php-cli php-mysql");
    }

    private static final Map<List<String>, Boolean> PROBES = new ConcurrentHashMap<>();

    /** Fails on CI (skips elsewhere) unless {@code probe} runs and exits with 0. */
    static void require(List<String> probe, String what, String remedy) {
        boolean ok = PROBES.computeIfAbsent(probe, ClientDriver::exitsWithZero);
        Prerequisites.require(ok, what + " (checked with: " + String.join(" ", probe) + ")", remedy);
    }

    private static boolean exitsWithZero(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!process.waitFor(60, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                return false;
            }
            return process.exitValue() == 0;
        } catch (IOException e) {
            return false; // not installed
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** What {@code command} prints (stdout and stderr); fails unless it exits with 0. */
    static String output(List<String> command) {
        try {
            Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            String text = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new AssertionError(String.join(" ", command) + " failed:\n" + text);
            }
            return text;
        } catch (IOException e) {
            throw new UncheckedIOException(String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /**
     * The Go client, built once per JVM in GOPATH mode ({@code GO111MODULE=off}) against Debian's
     * go-sql-driver/mysql in {@code /usr/share/gocode}: no module is downloaded.
     */
    static final class GoBuild {
        static final Path GOPATH = Path.of("/usr/share/gocode");
        private static Path binary;

        private GoBuild() {
        }

        static synchronized Path binary() {
            if (binary == null) {
                require(List.of("go", "version"), "the go command", "apt-get install golang-go");
                Prerequisites.require(Files.isDirectory(GOPATH.resolve("src/github.com/go-sql-driver/mysql")),
                        "go-sql-driver/mysql in " + GOPATH, "apt-get install golang-github-go-sql-driver-mysql-dev");
                Path out = Path.of("target", "drivers", "go_sql_driver").toAbsolutePath();
                List<String> command = new ArrayList<>(List.of("go", "build", "-o", out.toString(),
                        script("go_sql_driver.go").toString()));
                try {
                    Files.createDirectories(out.getParent());
                    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
                    Map<String, String> env = builder.environment();
                    env.putAll(environment(out.getParent()));
                    Process process = builder.start();
                    String text = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    if (!process.waitFor(5, TimeUnit.MINUTES) || process.exitValue() != 0) {
                        throw new AssertionError("go build failed (" + env.entrySet().stream()
                                .filter(x -> x.getKey().startsWith("GO")).toList() + "):\n" + text);
                    }
                } catch (IOException e) {
                    throw new UncheckedIOException("go build", e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
                binary = out;
            }
            return binary;
        }

        private static Map<String, String> environment(Path scratch) {
            Map<String, String> env = new HashMap<>();
            env.put("GO111MODULE", "off");
            env.put("GOPATH", GOPATH.toString());
            env.put("GOFLAGS", ""); // no -mod=mod from the environment: nothing is fetched
            env.put("GOPROXY", "off");
            if (System.getenv("GOCACHE") == null && System.getenv("HOME") == null
                    && System.getenv("XDG_CACHE_HOME") == null) {
                env.put("GOCACHE", scratch.resolve("go-cache").toString());
            }
            return env;
        }
    }
}
