package io.sluice.distribution;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.testing.Prerequisites;
import io.sluice.testing.TestMariaDb;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The tarball started on a conf dir it cannot write, as on Kubernetes (a ConfigMap mount) or from a read-only image,
 * with TLS on and no certificate configured: it starts, says at WARN that its generated certificates are kept in
 * memory, serves TLS with them, and writes nothing. The conf dir is a read-only bind mount in a mount namespace of
 * its own (unshare) when the test runs as root, whom file modes do not stop; as another user, a directory without
 * write permission.
 */
class ReadOnlyConfIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    private static Path home;
    private static Path work;

    @BeforeAll
    static void unpack() throws Exception {
        Path tarball = Path.of(System.getProperty("sluice.tarball"));
        work = Path.of(System.getProperty("sluice.it.dir")).resolveSibling("it-read-only-conf");
        deleteRecursively(work);
        Files.createDirectories(work);
        Process tar = new ProcessBuilder("tar", "-xzf", tarball.toString(), "-C", work.toString())
                .redirectErrorStream(true).start();
        assertThat(tar.waitFor(60, TimeUnit.SECONDS) && tar.exitValue() == 0).as("tar").isTrue();
        home = work.resolve("sluice-" + System.getProperty("sluice.version"));
    }

    @Test
    void aReadOnlyConfDirGetsCertificatesInMemoryAndStillServesTls() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        Path conf = Files.createDirectories(work.resolve("conf-read-only"));
        Files.writeString(conf.resolve("config.yaml"), """
                dataSources:
                  ds_0:
                    url: jdbc:mysql://%s:%d/
                    username: root
                    password:
                    maxPoolSize: 4
                rules: []
                server:
                  address: 127.0.0.1
                  workerThreads: 1
                  tls:
                    requireSecureTransport: true
                authority:
                  users:
                    - user: root@%%
                      password: root
                admin:
                  enabled: false
                """.formatted(mariaDb.host(), mariaDb.port()));
        int port = freePort();

        Process sluice = startOnReadOnly(conf, port);
        List<String> output = new CopyOnWriteArrayList<>();
        Thread reader = read(sluice, output);
        try {
            awaitLine(sluice, output, "listening on 127.0.0.1:" + port);

            assertThat(output).anySatisfy(line -> assertThat(line).contains("WARN")
                    .contains("TLS: " + conf + " is read-only, so the certificates Sluice generated are kept in"
                            + " memory")
                    .contains("set server.tls.certFile and keyFile"));
            // requireSecureTransport: only a TLS session logs in, so this login proves the in-memory certificate.
            String url = "jdbc:mariadb://127.0.0.1:" + port + "/?user=root&password=root";
            try (Connection tls = DriverManager.getConnection(url + "&sslMode=trust");
                    ResultSet rows = tls.createStatement().executeQuery("SELECT 7")) {
                rows.next();
                assertThat(rows.getInt(1)).isEqualTo(7);
            }
            assertThatThrownBy(() -> DriverManager.getConnection(url + "&sslMode=disable").close())
                    .isInstanceOf(SQLException.class).hasMessageContaining("secure transport");
            try (Stream<Path> files = Files.list(conf)) {
                assertThat(files.map(file -> file.getFileName().toString())).containsExactly("config.yaml");
            }

            sluice.toHandle().destroy(); // SIGTERM
            assertThat(sluice.waitFor(TIMEOUT.toSeconds(), TimeUnit.SECONDS)).as("stops on SIGTERM").isTrue();
            reader.join(TimeUnit.SECONDS.toMillis(10));
            assertThat(sluice.exitValue()).as(String.join("\n", output)).isEqualTo(143);
        } finally {
            sluice.destroyForcibly();
            Files.setPosixFilePermissions(conf, PosixFilePermissions.fromString("rwxr-xr-x")); // for the next run
        }
    }

    /**
     * {@code bin/start.sh --foreground PORT CONF} with CONF read-only for it: for root, a read-only bind mount in a
     * private mount namespace, which ends with the process and so needs no clean-up; for anyone else, mode r-x.
     */
    private static Process startOnReadOnly(Path conf, int port) throws IOException, InterruptedException {
        String start = home.resolve("bin/start.sh").toString();
        ProcessBuilder builder;
        if ("root".equals(System.getProperty("user.name"))) {
            Prerequisites.require(canMountReadOnly(), "unshare and mount in a private mount namespace (root)",
                    "apt-get install util-linux mount");
            builder = new ProcessBuilder("unshare", "--mount", "sh", "-c",
                    "mount --bind \"$1\" \"$1\" && mount -o remount,ro,bind \"$1\" \"$1\""
                            + " && exec \"$2\" --foreground \"$3\" \"$1\"",
                    "sh", conf.toString(), start, String.valueOf(port));
        } else {
            Files.setPosixFilePermissions(conf, PosixFilePermissions.fromString("r-xr-xr-x"));
            builder = new ProcessBuilder(start, "--foreground", String.valueOf(port), conf.toString());
        }
        builder.directory(home.toFile()).redirectErrorStream(true);
        builder.environment().put("JAVA_HOME", System.getProperty("java.home"));
        builder.environment().put("JAVA_OPTS", "-Xms32m -Xmx128m -XX:+UseSerialGC");
        builder.environment().put("SLUICE_CPU_SCHEDULING", "normal");
        return builder.start();
    }

    private static boolean canMountReadOnly() throws InterruptedException {
        try {
            Process probe = new ProcessBuilder("unshare", "--mount", "sh", "-c",
                    "mount --bind \"$1\" \"$1\" && mount -o remount,ro,bind \"$1\" \"$1\" && ! touch \"$1/probe\"",
                    "sh", work.toString()).redirectErrorStream(true).start();
            return probe.waitFor(30, TimeUnit.SECONDS) && probe.exitValue() == 0;
        } catch (IOException e) {
            return false;
        }
    }

    private static Thread read(Process process, List<String> lines) {
        Thread thread = new Thread(() -> {
            try (BufferedReader reader = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process ended
            }
        }, "read-only-conf-output");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static void awaitLine(Process process, List<String> lines, String text) throws InterruptedException {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (lines.stream().anyMatch(line -> line.contains(text))) {
                return;
            }
            if (!process.isAlive()) {
                throw new AssertionError("exited (" + process.exitValue() + ") before \"" + text + "\":\n"
                        + String.join("\n", lines));
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no \"" + text + "\" within " + TIMEOUT + ":\n" + String.join("\n", lines));
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
}
