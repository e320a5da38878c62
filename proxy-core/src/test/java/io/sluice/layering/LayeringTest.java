package io.sluice.layering;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.lang.ArchRule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * proxy-core's (and proxy-balancer's) main classes keep the layering of {@link Layers}; proxy-bootstrap checks its
 * own classes against the same rules.
 */
class LayeringTest {
    private static final String ROOT = "io.sluice";
    /** The modules with main classes of Sluice's. */
    private static final List<String> MODULES = List.of("proxy-balancer", "proxy-core", "proxy-bootstrap", "benchmark");
    /** The size a main class must stay within (issue #43). */
    private static final int MAX_LINES = 600;

    private static JavaClasses classes;

    @BeforeAll
    static void importClasses() {
        classes = Layers.mainClasses();
    }

    @Test
    void packagesDependOnlyOnLayersBelowThem() {
        Layers.architecture(ROOT).check(classes);
    }

    @Test
    void noPackagesDependOnEachOther() {
        Layers.freeOfCycles(ROOT).check(classes);
    }

    @Test
    void wrappedLibrariesAreUsedOnlyByTheirWrapper() {
        for (ArchRule rule : Layers.confinedLibraries(ROOT)) {
            rule.check(classes);
        }
    }

    /** Each package says in its package-info.java what it is and where it sits; the rules above enforce it. */
    @Test
    void everyPackageHasAPackageInfo() throws IOException {
        List<Path> missing = new ArrayList<>();
        for (String module : MODULES) {
            Path sources = Path.of("..", module, "src", "main", "java");
            try (Stream<Path> directories = Files.walk(sources)) {
                for (Path directory : directories.filter(Files::isDirectory).toList()) {
                    if (hasJavaSource(directory) && !Files.exists(directory.resolve("package-info.java"))) {
                        missing.add(directory);
                    }
                }
            }
        }
        assertThat(missing).as("packages without a package-info.java").isEmpty();
    }

    /**
     * No main source file of any module is over {@value #MAX_LINES} lines (issue #43): a class that grows past it has
     * a job to give to a class of its own, rather than lines to squeeze.
     */
    @Test
    void noMainClassIsOverSixHundredLines() throws IOException {
        Map<String, Integer> over = new TreeMap<>();
        for (String module : MODULES) {
            Path sources = Path.of("..", module, "src", "main", "java");
            try (Stream<Path> files = Files.walk(sources)) {
                for (Path file : files.filter(f -> f.toString().endsWith(".java")).toList()) {
                    int lines = Files.readAllLines(file).size();
                    if (lines > MAX_LINES) {
                        over.put(sources.relativize(file).toString(), lines);
                    }
                }
            }
        }
        assertThat(over).as("main classes over %d lines", MAX_LINES).isEmpty();
    }

    private static boolean hasJavaSource(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.anyMatch(f -> f.toString().endsWith(".java")
                    && !f.getFileName().toString().equals("package-info.java"));
        }
    }
}
