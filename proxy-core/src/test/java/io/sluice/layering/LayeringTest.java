package io.sluice.layering;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.lang.ArchRule;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * proxy-core's (and proxy-balancer's) main classes keep the layering of {@link Layers}; proxy-bootstrap checks its
 * own classes against the same rules.
 */
class LayeringTest {
    private static final String ROOT = "io.sluice";

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
        for (String module : List.of("proxy-balancer", "proxy-core", "proxy-bootstrap", "benchmark")) {
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

    private static boolean hasJavaSource(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.anyMatch(f -> f.toString().endsWith(".java")
                    && !f.getFileName().toString().equals("package-info.java"));
        }
    }
}
