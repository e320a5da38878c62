package io.sluice.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.opentest4j.TestAbortedException;

/** A missing prerequisite skips a test on a developer's machine and fails it on CI, naming what to install. */
class PrerequisitesTest {

    @Test
    void aPrerequisiteThatIsMetLetsTheTestRunEitherWay() {
        assertThatCode(() -> Prerequisites.require(true, "the frobnicator", "apt-get install frob", true))
                .doesNotThrowAnyException();
        assertThatCode(() -> Prerequisites.require(true, "the frobnicator", "apt-get install frob", false))
                .doesNotThrowAnyException();
    }

    @Test
    void aMissingPrerequisiteSkipsWithTheRemedyOutsideCi() {
        assertThatThrownBy(() -> Prerequisites.require(false, "the frobnicator", "apt-get install frob", false))
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("needs the frobnicator (apt-get install frob)");
    }

    @Test
    void aMissingPrerequisiteFailsOnCi() {
        assertThatThrownBy(() -> Prerequisites.require(false, "the frobnicator", "apt-get install frob", true))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("needs the frobnicator (apt-get install frob)")
                .hasMessageContaining(".ci/run");
    }

    /** On CI every tool is there: .ci/run installs them. Elsewhere a missing one is skipped by path() itself. */
    @Test
    @Tag("tools")
    void everyToolIsFoundAsAnExecutable() {
        for (Tool tool : Tool.values()) {
            assertThat(Files.isExecutable(tool.path())).as("%s", tool).isTrue();
        }
    }
}
