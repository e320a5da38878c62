package io.sluice.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Proves the leak check is not a no-op: a deliberately dropped buffer must fail it, with where it was allocated. */
@ExtendWith(LeakDetection.class)
class LeakDetectionTest {

    @Test
    void reportsAnUnreleasedPooledBuffer() {
        LeakDetection.assertNoLeaks("a clean start");

        leakOneBuffer();

        assertThatThrownBy(() -> LeakDetection.assertNoLeaks("leakOneBuffer"))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("LEAK: ByteBuf.release() was not called")
                .hasMessageContaining("leakOneBuffer"); // the allocation site is in the record
        // Reported once and forgotten, so the class itself ends clean.
        assertThat(LeakDetection.collectLeaks()).isEmpty();
    }

    @Test
    void releasedBuffersAreNotReported() {
        for (int i = 0; i < 100; i++) {
            ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer();
            buf.writeCharSequence("fine", StandardCharsets.US_ASCII);
            buf.release();
        }
        assertThat(LeakDetection.collectLeaks()).isEmpty();
    }

    private static void leakOneBuffer() {
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.buffer();
        buf.writeCharSequence("leaked on purpose", StandardCharsets.US_ASCII);
        buf.toString(StandardCharsets.US_ASCII); // an access, so the record has a touch point too
    }
}
