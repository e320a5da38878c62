package io.sluice.layering;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.library.Architectures;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Sluice's package layering, as rules (decision 065). Bottom first:
 *
 * <pre>
 * protocol
 *   &larr; foundation: api, auth, balancer, config, json, metrics, readwrite, rules, slowlog, sql, state, statistics,
 *   tls, transport
 *   &larr; codec &larr; relay &larr; capture &larr; backend &larr; backend.pool &larr; pooling &larr; routing
 *   &larr; frontend
 *   &larr; io.sluice (Sluice and its start-up)
 *   &larr; ops.metrics (the exporter) and admin, which reach the proxy only through api's views
 *   &larr; ops (SluiceServer, the composition root)
 *   &larr; replay &larr; bootstrap                                   (proxy-bootstrap)
 * </pre>
 *
 * Each layer may use the layers below it (fewer for the exporter, admin and replay: {@link #NARROWER}) and none above.
 * Inside the foundation, packages may use each other but never in a cycle ({@link #freeOfCycles}). Every class must
 * sit in a layer, so a new package has to be placed here before it can be used.
 */
public final class Layers {

    /** A layer: its name and its packages, relative to the root ({@code ""} is the root package itself). */
    private record Layer(String name, boolean optional, String... packages) {
        Layer(String name, String... packages) {
            this(name, false, packages);
        }
    }

    /** Bottom first. */
    private static final List<Layer> ORDER = List.of(
            new Layer("protocol", "protocol.."),
            new Layer("foundation", "api..", "auth..", "balancer..", "config..", "json..", "metrics..", "readwrite..",
                    "rules..", "slowlog..", "sql..", "state..", "statistics..", "tls..", "transport.."),
            new Layer("codec", "codec.."),
            new Layer("relay", "relay.."),
            new Layer("capture", "capture.."),
            new Layer("backend", "backend"),
            new Layer("backend.pool", "backend.pool.."),
            new Layer("pooling", "pooling.."),
            new Layer("routing", "routing.."),
            new Layer("frontend", "frontend.."),
            new Layer("proxy", ""),
            new Layer("exporter", "ops.metrics.."),
            new Layer("admin", "admin.."),
            new Layer("operations", "ops"),
            // proxy-bootstrap's: absent when proxy-core is checked on its own
            new Layer("replay", true, "replay.."),
            new Layer("bootstrap", true, "bootstrap.."));

    /**
     * Layers that may use only some of the layers below them. The exporter and the admin API see the proxy through
     * {@code api.MetricSources} and {@code api.ProxyControl} only; replay is a client of capture files and speaks
     * the protocol, it needs nothing of the proxy.
     */
    private static final Map<String, List<String>> NARROWER = Map.of(
            "exporter", List.of("protocol", "foundation"),
            "admin", List.of("protocol", "foundation", "capture", "exporter"),
            "replay", List.of("protocol", "foundation", "codec", "relay", "capture"));

    private Layers() {
    }

    /** The layered architecture of the packages under {@code root} (Sluice's is {@code io.sluice}). */
    public static LayeredArchitecture architecture(String root) {
        LayeredArchitecture rule = Architectures.layeredArchitecture().consideringOnlyDependenciesInLayers()
                .ensureAllClassesAreContainedInArchitecture();
        for (Layer layer : ORDER) {
            String[] packages = new String[layer.packages().length];
            for (int i = 0; i < packages.length; i++) {
                packages[i] = layer.packages()[i].isEmpty() ? root : root + "." + layer.packages()[i];
            }
            rule = (layer.optional() ? rule.optionalLayer(layer.name()) : rule.layer(layer.name()))
                    .definedBy(packages);
        }
        rule = rule.whereLayer(ORDER.get(0).name()).mayNotAccessAnyLayer();
        List<String> below = new ArrayList<>();
        for (Layer layer : ORDER) {
            if (!below.isEmpty()) {
                List<String> allowed = NARROWER.getOrDefault(layer.name(), below);
                rule = rule.whereLayer(layer.name()).mayOnlyAccessLayers(allowed.toArray(String[]::new));
            }
            below.add(layer.name());
        }
        return rule.as("Sluice's packages are layered: " + describe());
    }

    /** The order, bottom first, for the rule's description. */
    static String describe() {
        List<String> names = new ArrayList<>();
        for (Layer layer : ORDER) {
            names.add(layer.name());
        }
        return String.join(" <- ", names);
    }

    /** No two packages under {@code root} depend on each other, even through others (the foundation's order). */
    public static ArchRule freeOfCycles(String root) {
        SliceAssignment byPackage = new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
                String name = javaClass.getPackageName();
                return name.equals(root) || name.startsWith(root + ".") ? SliceIdentifier.of(name)
                        : SliceIdentifier.ignore();
            }

            @Override
            public String getDescription() {
                return "the packages under " + root;
            }
        };
        return slices().assignedFrom(byPackage).should().beFreeOfCycles();
    }

    /** Libraries that one package wraps, and that the others reach only through it. */
    public static List<ArchRule> confinedLibraries(String root) {
        return List.of(
                confined(root + ".protocol..", "org.apache.shardingsphere.."),
                confined(root + ".ops.metrics..", "io.micrometer..", "io.prometheus.."),
                confined(root + ".admin..", "com.sun.net.httpserver.."),
                noClasses().that().resideInAPackage(root + ".balancer..").should().dependOnClassesThat()
                        .resideInAPackage("io.netty..").as("the balancer has no Netty types"));
    }

    private static ArchRule confined(String owner, String... libraries) {
        return noClasses().that().resideOutsideOfPackage(owner)
                .should().dependOnClassesThat().resideInAnyPackage(libraries)
                .as(String.join(", ", libraries) + " only in " + owner);
    }

    /**
     * The main classes under {@code io.sluice} on the class path: not test classes, neither this module's nor those of
     * proxy-core's test-jar.
     */
    public static JavaClasses mainClasses() {
        Set<String> testLocations = Set.of("/test-classes/", "-tests.jar");
        ImportOption mainOnly = location -> testLocations.stream().noneMatch(location::contains);
        return new ClassFileImporter().withImportOption(mainOnly).importPackages("io.sluice");
    }
}
