package io.sluice.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The docs name only classes that exist (decision 123). Every class name in backquotes in the README and under
 * {@code docs/} (a CamelCase word such as {@code CommandRelayHandler}, alone or in {@code frontend/ClientErrors} or
 * {@code BackendLease.acquire}) must be a type declared in this repository's sources (main or test, any module), a
 * class of the JDK or of a jar on the test class path, or a name of another project on {@link #OTHERS}. A doc that
 * records history names a class since removed by listing it on a line of its own that starts with
 * {@code Removed since:}; such a name must really be gone.
 */
class DocClassNamesTest {

    /**
     * Names that look like classes but are none of ours and are on no class path here: products, units, Prometheus
     * alerts, systemd settings, JVM flags written without their {@code -XX:}, Kubernetes kinds, classes of libraries
     * Sluice does not use (or no longer does), and fragments of test method names.
     */
    private static final Set<String> OTHERS = Set.of(
            // products and units
            "MariaDB", "ShardingSphere", "MiB",
            // Prometheus alerts (deploy/) and rules, systemd settings, Kubernetes kinds
            "SluiceBackendDown", "SluiceClientConnectionsRejected", "SluiceCommandErrors", "SluiceDown",
            "SluiceNoBackendUp", "SluicePoolExhausted", "SluiceSessionsPinned", "SluiceReadWriteSplitBrain",
            "SluiceReadWriteGroupWithoutPrimary", "SluiceReadWriteFailover", "SluiceReadWriteServerFenced",
            "PrometheusRule", "ProtectSystem",
            "LoadCredential", "SuccessExitStatus", "TimeoutStopSec",
            // JVM options quoted without -XX:
            "AlwaysPreTouch", "CompileCommand", "FreqInlineSize", "MaxDirectMemorySize", "MaxGCPauseMillis",
            "MaxNewSize", "PrintCompilation", "UseG1GC",
            // cipher padding (RSA/ECB/OAEPWith...AndMGF1Padding, AES/GCM/NoPadding)
            "NoPadding",
            // Micrometer, the JCTools queue and zstd-jni: named in decisions that weighed or dropped them
            "PrometheusMeterRegistry", "MultiCollector", "TimeWindowMax", "MpscArrayQueue", "ZstdCompressCtx",
            // Netty classes from releases or transports not on this class path
            "EpollStreamUnsafe", "OptionalSslHandler", "SelfSignedCertificate", "AdaptiveByteBuf",
            // Apache Commons Lang, named for a CVE (decision 064); Netty's HTTP codec, dropped by decision 060;
            // picocli's, on proxy-bootstrap's class path only
            "ClassUtils", "FullHttpResponse", "HttpObjectAggregator", "HttpServerCodec", "ParameterException",
            // ends of test method names shortened with an ellipsis: `…WaitsForItAndGoesThrough`
            "AnotherIsRefused", "TurnComesAfterItsHandshakeTimeout", "WaitsForItAndGoesThrough");

    /** A class-like word: a capital, lower-case letters or digits, then another capital (two humps at least). */
    private static final Pattern CLASS_LIKE = Pattern.compile("(?<![\\w$\\-:+=])[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*");
    private static final Pattern BACKQUOTED = Pattern.compile("`([^`\\n]+)`");
    private static final Pattern FENCED = Pattern.compile("(?ms)^\\s*```.*?^\\s*```");
    private static final Pattern DECLARED =
            Pattern.compile("\\b(?:class|interface|enum|record|@interface)\\s+([A-Z]\\w*)");
    private static final String REMOVED_SINCE = "Removed since:";

    private static Path root;
    private static Set<String> ours;
    private static Set<String> known;

    @BeforeAll
    static void readSourcesAndClassPath() throws IOException {
        root = repositoryRoot();
        ours = declaredTypes(root);
        known = new HashSet<>(ours);
        known.addAll(OTHERS);
        addJdkClasses(known);
        addClassPathClasses(known);
    }

    @Test
    void docsNameOnlyClassesThatExist() throws IOException {
        TreeMap<String, Set<String>> missing = new TreeMap<>();
        TreeMap<String, Set<String>> notRemoved = new TreeMap<>();
        for (Path doc : docs(root)) {
            String text = Files.readString(doc, StandardCharsets.UTF_8);
            Set<String> removed = removedSince(text);
            for (String name : removed) {
                if (ours.contains(name)) {
                    notRemoved.computeIfAbsent(name, n -> new TreeSet<>()).add(root.relativize(doc).toString());
                }
            }
            for (String name : classNames(text)) {
                if (!known.contains(name) && !removed.contains(name)) {
                    missing.computeIfAbsent(name, n -> new TreeSet<>()).add(root.relativize(doc).toString());
                }
            }
        }
        assertThat(missing).as("class names in docs that no class has: rename them, or list them on a line"
                + " '" + REMOVED_SINCE + " `Name`' where the doc records history, or add another project's"
                + " class to OTHERS").isEmpty();
        assertThat(notRemoved).as("names listed as '" + REMOVED_SINCE + "' that still exist").isEmpty();
    }

    /** The checker itself: what it reads as a class name, and what it leaves alone. */
    @Test
    void readsClassNamesInBackquotesOnly() {
        String doc = """
                The `frontend/CommandRelayHandler.onCommandFrame` relays, `BackendLease` leases; a Foo in prose
                and `-XX:MaxNewSize=1g`, `-DskipTests`, `maxPoolSize` are no classes.
                ```java
                FencedCodeIsSkipped x;
                ```
                Removed since: `OldThing`, `OlderThing`
                """;
        assertThat(classNames(doc)).containsExactlyInAnyOrder("CommandRelayHandler", "BackendLease", "OldThing",
                "OlderThing");
        assertThat(removedSince(doc)).containsExactlyInAnyOrder("OldThing", "OlderThing");
        assertThat(ours).contains("CommandRelayHandler", "DocClassNamesTest").doesNotContain("FrontendSession");
        assertThat(known).contains("SslHandler", "ConcurrentHashMap", "MySQLErrPacket");
    }

    static Set<String> classNames(String markdown) {
        Set<String> names = new TreeSet<>();
        Matcher span = BACKQUOTED.matcher(FENCED.matcher(markdown).replaceAll(""));
        while (span.find()) {
            Matcher word = CLASS_LIKE.matcher(span.group(1));
            while (word.find()) {
                names.add(word.group());
            }
        }
        return names;
    }

    /** The names on the doc's lines that begin with {@value #REMOVED_SINCE}. */
    static Set<String> removedSince(String markdown) {
        Set<String> names = new TreeSet<>();
        for (String line : markdown.split("\n")) {
            if (line.strip().startsWith(REMOVED_SINCE)) {
                names.addAll(classNames(line));
            }
        }
        return names;
    }

    private static Path repositoryRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("README.md")) && Files.isDirectory(dir.resolve("docs"))
                    && Files.isDirectory(dir.resolve("proxy-core"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no repository root above " + Path.of("").toAbsolutePath());
    }

    private static List<Path> docs(Path root) throws IOException {
        List<Path> docs = new ArrayList<>();
        docs.add(root.resolve("README.md"));
        try (Stream<Path> files = Files.walk(root.resolve("docs"))) {
            files.filter(f -> f.toString().endsWith(".md")).sorted().forEach(docs::add);
        }
        return docs;
    }

    /** Every type declared in a module's Java sources (main and test), nested ones included, and every file's name. */
    private static Set<String> declaredTypes(Path root) throws IOException {
        Set<String> names = new HashSet<>();
        List<Path> sourceTrees;
        try (Stream<Path> modules = Files.list(root)) {
            sourceTrees = modules.map(module -> module.resolve("src")).filter(Files::isDirectory).toList();
        }
        for (Path sources : sourceTrees) {
            try (Stream<Path> files = Files.walk(sources)) {
                for (Path file : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".java"))::iterator) {
                    String fileName = file.getFileName().toString();
                    names.add(fileName.substring(0, fileName.length() - ".java".length()));
                    Matcher declared = DECLARED.matcher(Files.readString(file, StandardCharsets.UTF_8));
                    while (declared.find()) {
                        names.add(declared.group(1));
                    }
                }
            }
        }
        return names;
    }

    private static void addJdkClasses(Set<String> names) throws IOException {
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        try (Stream<Path> files = Files.walk(jrt.getPath("/modules"))) {
            files.forEach(f -> addSimpleName(f.getFileName() == null ? "" : f.getFileName().toString(), names));
        }
    }

    private static void addClassPathClasses(Set<String> names) throws IOException {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        for (String entry : classPath.split(java.io.File.pathSeparator)) {
            Path path = Path.of(entry);
            if (entry.endsWith(".jar") && Files.isRegularFile(path)) {
                try (ZipFile jar = new ZipFile(path.toFile())) {
                    jar.stream().map(ZipEntry::getName).forEach(name -> addSimpleName(name, names));
                }
            } else if (Files.isDirectory(path)) {
                try (Stream<Path> files = Files.walk(path)) {
                    files.forEach(f -> addSimpleName(f.getFileName().toString(), names));
                }
            }
        }
    }

    /** {@code a/b/Outer$Inner.class} adds {@code Outer} and {@code Inner}. */
    private static void addSimpleName(String path, Set<String> names) {
        if (!path.endsWith(".class")) {
            return;
        }
        String binary = path.substring(path.lastIndexOf('/') + 1, path.length() - ".class".length());
        for (String part : binary.split("\\$")) {
            if (!part.isEmpty() && Character.isUpperCase(part.charAt(0))) {
                names.add(part);
            }
        }
    }
}
