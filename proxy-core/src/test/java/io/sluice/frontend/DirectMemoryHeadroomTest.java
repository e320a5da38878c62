package io.sluice.frontend;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.metrics.DirectMemory;
import org.junit.jupiter.api.Test;

class DirectMemoryHeadroomTest {
    private static final long MIB = 1L << 20;

    @Test
    void admitsWhileMoreThanTheReserveIsFree() {
        assertThat(new DirectMemoryHeadroom(() -> 400 * MIB, () -> 512 * MIB).admitsNewSession()).isTrue();
        assertThat(new DirectMemoryHeadroom(() -> 480 * MIB, () -> 512 * MIB).admitsNewSession())
                .as("32 MiB free: the reserve, kept for the sessions open").isFalse();
        assertThat(new DirectMemoryHeadroom(() -> 512 * MIB, () -> 512 * MIB).admitsNewSession()).isFalse();
    }

    @Test
    void theReserveIsFivePercentOfALargeLimit() {
        long eightGiB = 8192 * MIB;
        assertThat(DirectMemoryHeadroom.reserve(eightGiB)).isEqualTo(eightGiB / 100 * 5);
        assertThat(new DirectMemoryHeadroom(() -> eightGiB - 400 * MIB, () -> eightGiB).admitsNewSession()).isFalse();
        assertThat(new DirectMemoryHeadroom(() -> eightGiB - 500 * MIB, () -> eightGiB).admitsNewSession()).isTrue();
    }

    @Test
    void admitsWhenTheCountIsUnknown() {
        assertThat(new DirectMemoryHeadroom(() -> -1, () -> 512 * MIB).admitsNewSession()).isTrue();
        assertThat(new DirectMemoryHeadroom(() -> 0, () -> -1).admitsNewSession()).isTrue();
    }

    @Test
    void thisJvmsDirectMemoryIsCountedAndTheFailuresOfRunningOutAreRecognized() {
        assertThat(DirectMemory.max()).isPositive();
        assertThat(DirectMemory.used()).isBetween(0L, DirectMemory.max());
        assertThat(DirectMemory.ranOut(new OutOfMemoryError("Cannot reserve 16777216 bytes of direct buffer memory"
                + " (allocated: 520093696, limit: 536870912)"))).isTrue();
        assertThat(DirectMemory.ranOut(new RuntimeException(new OutOfMemoryError("Direct buffer memory")))).isTrue();
        assertThat(DirectMemory.ranOut(new io.netty.handler.codec.DecoderException(
                new OutOfMemoryError("Cannot reserve 8 bytes of direct buffer memory")))).isTrue();
        assertThat(DirectMemory.ranOut(new OutOfMemoryError("Java heap space"))).isFalse();
    }
}
