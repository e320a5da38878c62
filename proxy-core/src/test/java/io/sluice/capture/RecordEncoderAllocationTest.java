package io.sluice.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.capture.CaptureRecord.Outcome;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.Test;

/**
 * The relay's path into the capture allocates nothing per command once its array is large enough (decision 053):
 * the event loops encode every command of a running capture.
 */
class RecordEncoderAllocationTest {

    @Test
    void encodingACommandFromItsFieldsAllocatesNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        RecordEncoder encoder = new RecordEncoder(1 << 20);
        byte[] payload = "SELECT c FROM sbtest1 WHERE id = 4242".getBytes();
        int commands = 200_000;
        encodeCommands(encoder, payload, commands); // warm up: the JIT's own work is not the encoder's

        long before = threads.getCurrentThreadAllocatedBytes();
        assertThat(before).as("this JVM counts allocations per thread").isPositive();
        encodeCommands(encoder, payload, commands);
        long allocated = threads.getCurrentThreadAllocatedBytes() - before;

        assertThat(allocated).as("bytes allocated for %d commands", commands).isLessThan(4096);
    }

    private static void encodeCommands(RecordEncoder encoder, byte[] payload, int commands) {
        for (int i = 0; i < commands; i++) {
            if (encoder.size() > (1 << 20) - 1024) {
                encoder.clear(); // as a handed-over chunk would, without the new array
            }
            encoder.addCommand(i, i * 1000L, 250, 3, payload, false, Outcome.OK, 0, 1, 1, 0);
        }
    }
}
