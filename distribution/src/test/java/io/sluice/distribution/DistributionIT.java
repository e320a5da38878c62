package io.sluice.distribution;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.ConfigYaml;
import io.sluice.config.ProxyConfig;
import io.sluice.config.UserConfig;
import io.sluice.json.Json;
import io.sluice.testing.AdminClient;
import io.sluice.testing.PrometheusText;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import io.sluice.testing.TestMariaDb;
import org.junit.jupiter.api.Test;

/**
 * Unpacks the real sluice-VERSION.tar.gz and drives it as an operator would: bin/start.sh, a MariaDB client, bin/stop.sh.
 * The backend is the tests' shared MariaDB ({@link TestMariaDb}): the local server on 127.0.0.1:3306 when it runs,
 * else an embedded one, so the test also passes on a machine without MariaDB.
 */
class DistributionIT {

    private static final Duration SCRIPT_TIMEOUT = Duration.ofSeconds(90);
    // Small heap: the machine is shared and the test only runs SELECT 1.
    private static final String JAVA_OPTS = "-Xms32m -Xmx128m -XX:+UseSerialGC";
    private static final int SCHED_OTHER = 0;
    private static final int SCHED_BATCH = 3;

    private static Path home;
    private static Path work;

    @BeforeAll
    static void unpack() throws Exception {
        Path tarball = Path.of(System.getProperty("sluice.tarball"));
        String version = System.getProperty("sluice.version");
        work = Path.of(System.getProperty("sluice.it.dir"));
        assertThat(tarball).exists();
        deleteRecursively(work);
        Files.createDirectories(work);
        Result tar = run(List.of("tar", "-xzf", tarball.toString(), "-C", work.toString()), null);
        assertThat(tar.status).as(tar.output).isZero();
        home = work.resolve("sluice-" + version);
    }

    @AfterEach
    void stopWhateverStarted() throws Exception {
        script("stop.sh");
    }

    @Test
    void tarballHasTheDocumentedLayout() throws IOException {
        for (String file : List.of("LICENSE", "NOTICE", "README.md", "CHANGELOG.md",
                "contrib/systemd/sluice.service")) {
            assertThat(home.resolve(file)).isRegularFile();
        }
        assertThat(Files.readString(home.resolve("LICENSE"))).contains("Apache License")
                .contains("Version 2.0, January 2004");
        assertThat(Files.readString(home.resolve("contrib/systemd/sluice.service")))
                .contains("ExecStart=/opt/sluice/bin/start.sh --foreground");
        assertThat(home.resolve("bin/start.sh")).isRegularFile();
        assertThat(home.resolve("bin/sluice-ctl")).isRegularFile();
        assertThat(home.resolve("conf/config.yaml")).isRegularFile();
        assertThat(home.resolve("conf/logback.xml")).isRegularFile();
        assertThat(home.resolve("conf/grafana/sluice-dashboard.json")).isRegularFile();
        assertThat(Files.readString(home.resolve("conf/grafana/sluice-dashboard.json")))
                .contains("sluice_command_duration_seconds_bucket").contains("\"title\": \"Sluice\"");
        for (String script : List.of("start.sh", "stop.sh", "hash-password.sh", "sluice-ctl")) {
            assertThat(Files.getPosixFilePermissions(home.resolve("bin").resolve(script))).contains(
                    PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.GROUP_EXECUTE,
                    PosixFilePermission.OTHERS_EXECUTE);
        }
        try (Stream<Path> jars = Files.list(home.resolve("lib"))) {
            assertThat(jars.map(jar -> jar.getFileName().toString()))
                    .anyMatch(name -> name.equals("sluice-bootstrap-" + System.getProperty("sluice.version") + ".jar"))
                    .anyMatch(name -> name.equals("sluice-core-" + System.getProperty("sluice.version") + ".jar"))
                    .anyMatch(name -> name.equals("sluice-balancer-" + System.getProperty("sluice.version") + ".jar"))
                    .noneMatch(name -> name.startsWith("proxy-"))
                    .anyMatch(name -> name.startsWith("snakeyaml-"))
                    .anyMatch(name -> name.startsWith("logback-classic-"))
                    .anyMatch(name -> name.startsWith("bcpkix-jdk18on-"))
                    .anyMatch(name -> name.startsWith("netty-tcnative-boringssl-static-") && name.contains("linux-x86_64"))
                    .anyMatch(name -> name.startsWith("micrometer-registry-prometheus-"))
                    // the admin port is the JDK's HTTP server (decision 060): Netty's HTTP codec is not shipped
                    .noneMatch(name -> name.startsWith("netty-codec-http-"))
                    .noneMatch(name -> name.startsWith("junit-") || name.startsWith("assertj-"));
        }
    }

    @Test
    void sluiceCtlRunsAndExplainsItself() throws Exception {
        Result help = script("sluice-ctl", "--help");

        assertThat(help.status).as(help.output).isZero();
        assertThat(help.output).contains("sluice-ctl traffic capture start --output DIR")
                .contains("sluice-ctl traffic replay --input DIR --target HOST:PORT");

        Result noAdmin = script("sluice-ctl", "traffic", "capture", "status", "--admin", "127.0.0.1:" + freePort());

        assertThat(noAdmin.status).as(noAdmin.output).isEqualTo(1);
        assertThat(noAdmin.output).contains("cannot reach the admin API");
    }

    @Test
    void shippedConfigIsTheDocumentedWorkingExample() {
        ProxyConfig config = ConfigYaml.load(home.resolve("conf/config.yaml"));

        assertThat(config.primaryDataSource().url()).isEqualTo("jdbc:mysql://127.0.0.1:3306/test");
        assertThat(config.primaryDataSource().username()).isEqualTo("root");
        assertThat(config.primaryDataSource().password()).isEmpty();
        assertThat(config.server().port()).isEqualTo(3307);
        // root / root is for trying Sluice on this host only (decision 077)
        assertThat(config.server().address()).isEqualTo("127.0.0.1");
        assertThat(config.users()).containsExactly(new UserConfig("root", "%", "root"));
        assertThat(config.operations().admin().port()).isEqualTo(3080);
        assertThat(config.operations().admin().address()).isEqualTo("127.0.0.1");
        assertThat(config.operations().metrics().enabled()).isTrue();
    }

    @Test
    void startsServesSelectOneAndStops() throws Exception {
        int adminPort = freePort();
        Path conf = writeConf("conf-ok", withAdmin(backendConfig(), adminPort));
        int port = freePort();

        Result start = script("start.sh", String.valueOf(port), conf.toString());

        assertThat(start.status).as(start.output).isZero();
        assertThat(start.output).contains("listening on").contains(":" + port).contains("(pid ");
        long pid = Long.parseLong(Files.readString(home.resolve("sluice.pid")).trim());
        assertThat(isRunning(pid)).isTrue();
        assertThat(start.output).contains("(pid " + pid + ")");
        // A session of its own, as a daemon (decision 061): not the test JVM's, which started the script.
        assertThat(sessionId(pid)).as("session of pid %d", pid).isEqualTo(pid);
        assertThat(sessionId(ProcessHandle.current().pid())).isNotEqualTo(pid);
        // start.sh's default policy (decision 059), inherited by the relay loops and every other thread; where this
        // machine refuses it, the documented fallback: a warning and the normal policy.
        if (machineAllowsSchedBatch()) {
            assertThat(schedulingPolicies(pid)).as("policies of pid %d's threads", pid).containsOnly(SCHED_BATCH);
            assertThat(start.output).doesNotContain("SCHED_BATCH");
        } else {
            assertThat(schedulingPolicies(pid)).as("policies of pid %d's threads", pid).containsOnly(SCHED_OTHER);
            assertThat(start.output).contains("sluice: warning: cannot run under SCHED_BATCH");
        }

        // TLS is on by default: the first start generated a CA and a server certificate into the conf dir.
        assertThat(conf.resolve("ca.pem")).isRegularFile();
        assertThat(conf.resolve("server-key.pem")).isRegularFile();
        String url = "jdbc:mariadb://127.0.0.1:" + port + "/?user=root&password=root&sslMode=verify-ca&serverSslCert="
                + conf.resolve("ca.pem");
        try (Connection connection = DriverManager.getConnection(url);
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT 1")) {
            assertThat(rows.next()).isTrue();
            assertThat(rows.getInt(1)).isEqualTo(1);
        }
        String log = Files.readString(home.resolve("logs/sluice.log"));
        assertThat(log).contains("listening on").doesNotContain("password: root");
        // ISO 8601 with the UTC offset
        assertThat(log.lines().findFirst().orElseThrow())
                .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}(Z|[+-]\\d\\d:\\d\\d) [A-Z]+ .*");
        // Daemonised, the log goes to sluice.log only: stdout.log keeps what the JVM itself prints, no copy of it.
        String stdout = Files.readString(home.resolve("logs/stdout.log"));
        assertThat(stdout).contains("listening on").doesNotContain(" INFO ").doesNotContain("Data source");
        AdminClient admin = new AdminClient("127.0.0.1", adminPort);
        assertThat(admin.get("/health").status()).isEqualTo(200);
        PrometheusText metrics = admin.scrape();
        assertThat(metrics.value("sluice_commands_total", "command", "COM_QUERY")).isGreaterThanOrEqualTo(1);
        assertThat(metrics.value("sluice_backend_up", "backend", "ds_0")).isEqualTo(1);

        Result stop = script("stop.sh");

        assertThat(stop.status).as(stop.output).isZero();
        assertThat(stop.output).contains("stopped");
        assertThat(isRunning(pid)).as("pid %d still running after stop.sh", pid).isFalse();
        assertThat(home.resolve("sluice.pid")).doesNotExist();
    }

    @Test
    void versionOptionPrintsTheBuildsVersion() throws Exception {
        Result version = script("start.sh", "--version");

        assertThat(version.status).as(version.output).isZero();
        assertThat(version.output).startsWith("Sluice " + System.getProperty("sluice.version") + " (Java ");
        assertThat(home.resolve("sluice.pid")).doesNotExist();
    }

    @Test
    void foregroundExecsTheJvmLogsToStdoutAndStopsCleanlyOnSigterm() throws Exception {
        Path conf = writeConf("conf-foreground", backendConfig());
        int port = freePort();

        try (Foreground sluice = Foreground.start(conf, port)) {
            sluice.awaitLine("listening on 127.0.0.1:" + port);

            // exec: the process start.sh was is now the JVM, so a supervisor's signal reaches it directly
            assertThat(Files.readString(Path.of("/proc", String.valueOf(sluice.process.pid()), "cmdline")))
                    .contains("io.sluice.bootstrap.SluiceMain").contains("-Dsluice.log.target=console");
            assertThat(home.resolve("sluice.pid")).as("no pid file in the foreground").doesNotExist();
            try (Connection connection = DriverManager.getConnection(
                            "jdbc:mariadb://127.0.0.1:" + port + "/?user=root&password=root");
                    Statement statement = connection.createStatement();
                    ResultSet rows = statement.executeQuery("SELECT 3")) {
                assertThat(rows.next()).isTrue();
                assertThat(rows.getInt(1)).isEqualTo(3);
            }

            int status = sluice.terminate();

            // 128 + SIGTERM: the JVM ran its shutdown (systemd's SuccessExitStatus=143 counts it as clean)
            assertThat(status).as(sluice.output()).isEqualTo(143);
            assertThat(sluice.output()).contains("Graceful shutdown").contains("Stopped");
            assertThat(sluice.stdout).allSatisfy(line -> assertThat(line).matches("\\d{4}-\\d\\d-\\d\\dT.*"));
            assertThat(sluice.stderr.toString()).as("logback's start-up status").doesNotContain("|-");
        }
    }

    @Test
    void jsonLogFormatWritesOneJsonObjectPerLine() throws Exception {
        Path conf = writeConf("conf-json", backendConfig());
        int port = freePort();

        try (Foreground sluice = Foreground.start(conf, port, "SLUICE_LOG_FORMAT", "json")) {
            String listening = sluice.awaitLine("listening on 127.0.0.1:" + port);

            Map<String, Object> event = Json.parseObject(listening);
            assertThat(event).containsEntry("level", "INFO").containsEntry("loggerName",
                    "io.sluice.bootstrap.SluiceMain");
            assertThat((String) event.get("message")).contains("listening on 127.0.0.1:" + port);
            assertThat(sluice.stdout).allSatisfy(line -> assertThat(Json.parseObject(line)).containsKey("message"));
            assertThat(sluice.terminate()).isEqualTo(143);
        }
    }

    @Test
    void anOpenAddressWithTheShippedPasswordRefusesToStart() throws Exception {
        Path conf = writeConf("conf-open", backendConfig().replace("address: 127.0.0.1", "address: 0.0.0.0"));

        Result start = script("start.sh", String.valueOf(freePort()), conf.toString());

        assertThat(start.status).as(start.output).isEqualTo(1);
        assertThat(start.output).contains("server.address 0.0.0.0 accepts clients from other hosts, and root@% (the"
                + " default password \"root\") can be guessed: refusing to start");
        assertThat(home.resolve("sluice.pid")).doesNotExist();
    }

    @Test
    void hashPasswordPrintsBothFormsAProxyUserCanUse() throws Exception {
        Result hash = run(List.of("bash", "-c", "printf secret | bin/hash-password.sh"), home);

        assertThat(hash.status).as(hash.output).isZero();
        assertThat(hash.output).containsPattern("passwordHash: '\\$A\\$005\\$.{63}'")
                .contains("passwordHash: '*14E65567ABDB5135D0CFD9A70B3032C179A49EE7'");
    }

    @Test
    void stopLetsAnOpenTransactionCommitRefusesNewConnectionsAndThenExits() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        String database = mariaDb.createDatabase("sluice_dist_drain");
        try {
            mariaDb.execute("CREATE TABLE `" + database + "`.t (id INT PRIMARY KEY) ENGINE=InnoDB");
            int adminPort = freePort();
            Path conf = writeConf("conf-drain", withAdmin(backendConfig(), adminPort)
                    + "shutdown:\n  gracefulWaitBeforeShutdownMilliseconds: 500\n"
                    + "  gracefulCloseTimeoutMilliseconds: 20000\n");
            int port = freePort();
            Result start = script("start.sh", String.valueOf(port), conf.toString());
            assertThat(start.status).as(start.output).isZero();
            long pid = Long.parseLong(Files.readString(home.resolve("sluice.pid")).trim());
            String url = "jdbc:mariadb://127.0.0.1:" + port + "/" + database + "?user=root&password=root";
            AdminClient admin = new AdminClient("127.0.0.1", adminPort);

            try (Connection transaction = DriverManager.getConnection(url)) {
                transaction.setAutoCommit(false);
                transaction.createStatement().executeUpdate("INSERT INTO t VALUES (1)");

                Process stop = scriptInBackground("stop.sh");

                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (admin.get("/health").status() != 503) {
                    assertThat(System.nanoTime()).as("/health turns 503").isLessThan(deadline);
                    Thread.sleep(20);
                }
                SQLException refused = null;
                while (refused == null || refused.getErrorCode() != 1053) {
                    assertThat(System.nanoTime()).as("new connections refused, last: %s", refused)
                            .isLessThan(deadline);
                    try (Connection late = DriverManager.getConnection(url)) {
                        Thread.sleep(50); // still inside gracefulWaitBeforeShutdown: served
                    } catch (SQLException e) {
                        // A client that logged in just before refusing began is closed once idle, which can fall
                        // inside the driver's own connect-time queries (-1): only a later attempt shows the refusal.
                        refused = e;
                    }
                }
                assertThat(refused.getErrorCode()).isEqualTo(1053);
                assertThat(refused.getMessage()).contains("Server shutdown in progress");
                assertThat(stop.isAlive()).as("stop.sh waits for the transaction").isTrue();

                transaction.commit();

                assertThat(stop.waitFor(30, TimeUnit.SECONDS)).as("stop.sh finishes after the commit").isTrue();
                String stopOutput = new String(stop.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertThat(stop.exitValue()).as(stopOutput).isZero();
                assertThat(stopOutput).contains("stopped");
            }
            assertThat(isRunning(pid)).isFalse();
            try (Connection root = mariaDb.rootConnection(); Statement s = root.createStatement();
                    ResultSet rows = s.executeQuery("SELECT COUNT(*) FROM `" + database + "`.t")) {
                rows.next();
                assertThat(rows.getInt(1)).as("the transaction open at SIGTERM committed").isEqualTo(1);
            }
            assertThat(Files.readString(home.resolve("logs/sluice.log"))).contains("Graceful shutdown")
                    .contains("every session ended");
        } finally {
            mariaDb.dropDatabase(database);
        }
    }

    @Test
    void invalidConfigRefusesToStartNamingLineAndKey() throws Exception {
        String config = backendConfig().replace("maxPoolSize: 10", "maxPoolSize: ten");
        Path conf = writeConf("conf-bad", config);

        Result start = script("start.sh", String.valueOf(freePort()), conf.toString());

        assertThat(start.status).as(start.output).isNotZero();
        assertThat(start.output).contains("config.yaml line " + lineOf(config, "maxPoolSize")
                + ": dataSources.ds_0.maxPoolSize: \"ten\" (expected: an integer)");
        assertThat(home.resolve("sluice.pid")).doesNotExist();
    }

    @Test
    void takenPortRefusesToStartNamingThePort() throws Exception {
        Path conf = writeConf("conf-taken", backendConfig());
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("0.0.0.0"))) {
            int port = taken.getLocalPort();

            Result start = script("start.sh", String.valueOf(port), conf.toString());

            assertThat(start.status).as(start.output).isNotZero();
            assertThat(start.output).contains(String.valueOf(port));
            assertThat(home.resolve("sluice.pid")).doesNotExist();
        }
    }

    @Test
    void normalSchedulingIsOneVariableAway() throws Exception {
        Path conf = writeConf("conf-normal", backendConfig());
        int port = freePort();

        Result start = run(List.of(home.resolve("bin/start.sh").toString(), String.valueOf(port), conf.toString()),
                home, "SLUICE_CPU_SCHEDULING", "normal");

        assertThat(start.status).as(start.output).isZero();
        long pid = Long.parseLong(Files.readString(home.resolve("sluice.pid")).trim());
        assertThat(schedulingPolicies(pid)).as("policies of pid %d's threads", pid).containsOnly(SCHED_OTHER);
        try (Connection connection = DriverManager.getConnection(
                        "jdbc:mariadb://127.0.0.1:" + port + "/?user=root&password=root");
                Statement statement = connection.createStatement();
                ResultSet rows = statement.executeQuery("SELECT 2")) {
            assertThat(rows.next()).isTrue();
            assertThat(rows.getInt(1)).isEqualTo(2);
        }
    }

    @Test
    void unknownSchedulingPolicyRefusesToStart() throws Exception {
        Result start = run(List.of(home.resolve("bin/start.sh").toString()), home, "SLUICE_CPU_SCHEDULING", "fifo");

        assertThat(start.status).as(start.output).isEqualTo(2);
        assertThat(start.output).contains("sluice: SLUICE_CPU_SCHEDULING: fifo (expected: batch or normal)");
        assertThat(home.resolve("sluice.pid")).doesNotExist();
    }

    @Test
    void badPortArgumentRefusesToStart() throws Exception {
        Result start = script("start.sh", "not-a-port");

        assertThat(start.status).as(start.output).isNotZero();
        assertThat(start.output).contains("sluice: port: not-a-port (expected: a number in 0..65535)");
        assertThat(home.resolve("sluice.pid")).doesNotExist();
    }

    @Test
    void stopWhenNotRunningSaysSoAndSucceeds() throws Exception {
        Result stop = script("stop.sh");

        assertThat(stop.status).as(stop.output).isZero();
        assertThat(stop.output).contains("not running");
    }

    @Test
    void stopRemovesAStalePidFileWithoutSignallingAnyone() throws Exception {
        // A pid that is certainly not Sluice: this test JVM's own.
        Files.writeString(home.resolve("sluice.pid"), ProcessHandle.current().pid() + "\n");

        Result stop = script("stop.sh");

        assertThat(stop.status).as(stop.output).isZero();
        assertThat(stop.output).contains("not running").contains("stale");
        assertThat(home.resolve("sluice.pid")).doesNotExist();
    }

    /** The config an operator would write for the tests' MariaDB (local, or embedded where none runs). */
    private static String backendConfig() {
        TestMariaDb mariaDb = TestMariaDb.get();
        return """
                databaseName: sharding_db
                dataSources:
                  ds_0:
                    url: jdbc:mysql://%s:%d/
                    username: root""".formatted(mariaDb.host(), mariaDb.port()) + """

                    password:
                    maxPoolSize: 10
                    minPoolSize: 1
                rules: []
                server:
                  address: 127.0.0.1
                  workerThreads: 1
                authority:
                  users:
                    - user: root@%
                      password: root
                admin:
                  enabled: false
                """;
    }

    /** The config with the admin port on a port of the test's own, so runs never compete for 3080. */
    private static String withAdmin(String config, int port) {
        return config.replace("admin:\n  enabled: false\n", "admin:\n  address: 127.0.0.1\n  port: " + port + "\n");
    }

    /** Whether {@code chrt --batch 0} works here, which is start.sh's own test before it uses it. */
    private static boolean machineAllowsSchedBatch() throws Exception {
        try {
            return run(List.of("chrt", "--batch", "0", "true"), null).status == 0;
        } catch (IOException noChrt) {
            return false;
        }
    }

    /**
     * The scheduling policy of each of a process's threads: field 41 of /proc/PID/task/TID/stat (0 SCHED_OTHER,
     * 3 SCHED_BATCH). Threads that exit while being read are skipped.
     */
    private static List<Integer> schedulingPolicies(long pid) throws IOException {
        List<Integer> policies = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc", String.valueOf(pid), "task"))) {
            for (Path task : tasks.toList()) {
                String text;
                try {
                    text = Files.readString(task.resolve("stat"));
                } catch (IOException e) {
                    continue;
                }
                // Fields after "(comm)" start at field 3, so field 41 is index 38 of the rest.
                String[] fields = text.substring(text.lastIndexOf(')') + 2).split(" ");
                policies.add(Integer.parseInt(fields[38]));
            }
        }
        assertThat(policies).as("threads of pid %d", pid).isNotEmpty();
        return policies;
    }

    /** The session id of a process: field 6 of /proc/PID/stat, counted after the command name. */
    private static long sessionId(long pid) throws IOException {
        String text = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
        // "pid (comm) state ppid pgrp session ...": comm may hold spaces and parentheses, so read after the last ')'.
        String[] fields = text.substring(text.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[3]);
    }

    /**
     * Whether a process runs, zombies excluded: after start.sh exits the JVM is re-parented, and a dead one may stay
     * a zombie until its new parent reaps it.
     */
    private static boolean isRunning(long pid) throws IOException {
        Path stat = Path.of("/proc", String.valueOf(pid), "stat");
        if (!Files.exists(stat)) {
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        }
        String text;
        try {
            text = Files.readString(stat);
        } catch (IOException e) {
            return false; // exited between the two calls
        }
        // "pid (comm) state ...": comm may hold spaces and parentheses, so read after the last ')'.
        char state = text.substring(text.lastIndexOf(')') + 2).charAt(0);
        return state != 'Z' && state != 'X';
    }

    private static int lineOf(String text, String key) {
        String[] lines = text.split("\n");
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].trim().startsWith(key + ":")) {
                return i + 1;
            }
        }
        throw new AssertionError(key + " not in config");
    }

    private static Path writeConf(String name, String config) throws IOException {
        Path conf = work.resolve(name);
        Files.createDirectories(conf);
        Files.writeString(conf.resolve("config.yaml"), config);
        return conf;
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    private static Result script(String name, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(home.resolve("bin").resolve(name).toString());
        command.addAll(List.of(args));
        return run(command, home);
    }

    /** Starts a script without waiting; its output is merged and read by the caller. */
    private static Process scriptInBackground(String name) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(home.resolve("bin").resolve(name).toString())
                .redirectErrorStream(true).directory(home.toFile());
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        return builder.start();
    }

    /** Runs a command; {@code environment} holds extra variables as name, value pairs. */
    private static Result run(List<String> command, Path directory, String... environment) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        if (directory != null) {
            builder.directory(directory.toFile());
        }
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("JAVA_OPTS", JAVA_OPTS);
        for (int i = 0; i < environment.length; i += 2) {
            builder.environment().put(environment[i], environment[i + 1]);
        }
        Process process = builder.start();
        // start.sh redirects java's output to a file, so this stream ends when the script does.
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!process.waitFor(SCRIPT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new AssertionError(command + " did not finish within " + SCRIPT_TIMEOUT + ": " + output);
        }
        return new Result(process.exitValue(), output);
    }

    private static void deleteRecursively(Path path) throws IOException {
        if (!Files.exists(path)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(path)) {
            for (Path p : paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).toList()) {
                Files.delete(p);
            }
        }
    }

    private record Result(int status, String output) {
    }

    /** Sluice run by {@code start.sh --foreground}: its stdout line by line, its stderr apart. */
    private static final class Foreground implements AutoCloseable {
        final Process process;
        final List<String> stdout = new CopyOnWriteArrayList<>();
        final StringBuffer stderr = new StringBuffer();
        private final Thread[] readers;

        private Foreground(Process process) {
            this.process = process;
            readers = new Thread[] {
                    reader(process.getInputStream(), stdout::add),
                    reader(process.getErrorStream(), line -> stderr.append(line).append('\n'))};
        }

        /** {@code environment}: extra variables as name, value pairs. */
        static Foreground start(Path conf, int port, String... environment) throws IOException {
            ProcessBuilder builder = new ProcessBuilder(home.resolve("bin/start.sh").toString(), "--foreground",
                    String.valueOf(port), conf.toString()).directory(home.toFile());
            builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
            builder.environment().put("JAVA_OPTS", JAVA_OPTS);
            for (int i = 0; i < environment.length; i += 2) {
                builder.environment().put(environment[i], environment[i + 1]);
            }
            return new Foreground(builder.start());
        }

        private static Thread reader(java.io.InputStream in, java.util.function.Consumer<String> lines) {
            Thread thread = new Thread(() -> {
                try (java.io.BufferedReader reader = new java.io.BufferedReader(
                        new java.io.InputStreamReader(in, StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = reader.readLine()) != null) {
                        lines.accept(line);
                    }
                } catch (IOException e) {
                    // the process ended
                }
            }, "foreground-output");
            thread.setDaemon(true);
            thread.start();
            return thread;
        }

        /** The first stdout line containing {@code text}, once printed; fails when the process ends first. */
        String awaitLine(String text) throws InterruptedException {
            long deadline = System.nanoTime() + SCRIPT_TIMEOUT.toNanos();
            while (System.nanoTime() < deadline) {
                for (String line : stdout) {
                    if (line.contains(text)) {
                        return line;
                    }
                }
                if (!process.isAlive()) {
                    throw new AssertionError("Sluice exited (" + process.exitValue() + ") before printing \"" + text
                            + "\": " + output());
                }
                Thread.sleep(50);
            }
            throw new AssertionError("no \"" + text + "\" within " + SCRIPT_TIMEOUT + ": " + output());
        }

        /** SIGTERM, as systemd or a container runtime sends; returns the exit status once the output is read. */
        int terminate() throws InterruptedException {
            // SIGTERM on Linux. Through the handle: Process.destroy() would also close our end of its stdout, and
            // lose the lines of the graceful shutdown.
            process.toHandle().destroy();
            if (!process.waitFor(SCRIPT_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
                throw new AssertionError("still running after SIGTERM: " + output());
            }
            for (Thread reader : readers) {
                reader.join(TimeUnit.SECONDS.toMillis(10));
            }
            return process.exitValue();
        }

        String output() {
            return String.join("\n", stdout) + "\n[stderr]\n" + stderr;
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }
}
