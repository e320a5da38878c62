package io.sluice.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class RateLimitedWarningTest {
    private final AtomicLong now = new AtomicLong(5_000_000_000L);
    private final RateLimitedWarning warning = new RateLimitedWarning(
            LoggerFactory.getLogger(RateLimitedWarningTest.class), TimeUnit.SECONDS.toNanos(60), now::get);

    @Test
    void oneWarningAPeriodAndTheRestCounted() {
        assertThat(warning.warn("client {}: lost", "a")).as("the first").isTrue();
        for (int i = 0; i < 2_400; i++) {
            assertThat(warning.warn("client {}: lost", i)).isFalse();
        }
        assertThat(warning.heldBack()).isEqualTo(2_400);

        now.addAndGet(TimeUnit.SECONDS.toNanos(60));
        assertThat(warning.warn("client {}: lost", "b")).as("the next period's first, with the count").isTrue();
        assertThat(warning.heldBack()).isZero();
        assertThat(warning.warn("client {}: lost", "c")).isFalse();
    }
}
