package io.sluice.layering;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.EvaluationResult;
import io.sluice.layering.cycle.frontend.ClientReader;
import io.sluice.layering.cycle.relay.ResponseReader;
import org.junit.jupiter.api.Test;

/**
 * The layering rules fail when a cycle comes back: the fixture packages under {@code io.sluice.layering.cycle} are a
 * {@code relay} and a {@code frontend} that use each other, and the same rules that pass on Sluice's packages
 * ({@link LayeringTest}) are applied to them.
 */
class LayeringRuleTest {
    private static final String ROOT = "io.sluice.layering.cycle";

    @Test
    void anUpwardDependencyBreaksTheLayering() {
        JavaClasses cycle = new ClassFileImporter().importPackages(ROOT);

        EvaluationResult result = Layers.architecture(ROOT).withOptionalLayers(true).evaluate(cycle);

        assertThat(result.hasViolation()).isTrue();
        // the call and the parameter type: the relay reaching up into the frontend, and nothing else
        assertThat(result.getFailureReport().getDetails()).isNotEmpty().allSatisfy(violation -> assertThat(violation)
                .startsWith("Method <" + ResponseReader.class.getName()).contains(ClientReader.class.getName()));
    }

    @Test
    void aCycleBetweenPackagesIsReported() {
        JavaClasses cycle = new ClassFileImporter().importPackages(ROOT);

        EvaluationResult result = Layers.freeOfCycles(ROOT).evaluate(cycle);

        assertThat(result.hasViolation()).isTrue();
        assertThat(String.join("\n", result.getFailureReport().getDetails()))
                .contains("Cycle detected").contains(ROOT + ".relay").contains(ROOT + ".frontend");
    }

    @Test
    void theDownwardHalfAlonePasses() {
        JavaClasses downward = new ClassFileImporter().importClasses(ClientReader.class);

        assertThat(Layers.architecture(ROOT).withOptionalLayers(true).evaluate(downward).hasViolation()).isFalse();
        assertThat(Layers.freeOfCycles(ROOT).evaluate(downward).hasViolation()).isFalse();
    }
}
