package io.sluice.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;

class ThreadDumpOnTimeoutTest {

    private final ThreadDumpOnTimeout extension = new ThreadDumpOnTimeout();

    @Test
    void aTimeoutCarriesEveryThreadsStack() {
        TimeoutException timeout = new TimeoutException("test() timed out after 3 minutes");

        assertThatThrownBy(() -> extension.handleTestExecutionException(null, timeout))
                .isSameAs(timeout)
                .satisfies(thrown -> assertThat(thrown.getSuppressed()).singleElement()
                        .extracting(Throwable::getMessage).asString()
                        .contains("threads at the timeout")
                        .contains('"' + Thread.currentThread().getName() + '"')
                        .contains("ThreadDumpOnTimeoutTest.aTimeoutCarriesEveryThreadsStack"));
    }

    @Test
    void anyOtherFailureIsRethrownUnchanged() {
        AssertionError failure = new AssertionError("expected 1 but was 2");

        assertThatThrownBy(() -> extension.handleAfterAllMethodExecutionException(null, failure))
                .isSameAs(failure)
                .satisfies(thrown -> assertThat(thrown.getSuppressed()).isEmpty());
    }
}
