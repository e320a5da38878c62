package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetricProvider;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.RawMySqlClient.Packet;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A client that reads slower than the backend sends must not make Sluice hold the result: the relay stops reading the
 * backend once about {@code connBufferSize} bytes wait for the client. Measured as the growth of Netty's direct memory
 * while a 100 MB result is pending and the client reads nothing.
 */
@Tag("server")
class FlowControlTest {

    private static final int ROWS = 100_000;
    private static final int ROW_BYTES = 1000;
    /** Far below the 100 MB result, far above connBufferSize (32 KiB) plus a read batch and allocator chunks. */
    private static final long BOUND = 24L << 20;

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults().sluiceOnly("measures the proxy's own memory");

    private static long usedDirectMemory() {
        return ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric().usedDirectMemory();
    }

    @Test
    void aClientThatStopsReadingDoesNotMakeSluiceBufferTheResult() throws Exception {
        assertThat(ByteBufAllocator.DEFAULT).isInstanceOf(ByteBufAllocatorMetricProvider.class);
        String db = TestMariaDb.get().createDatabase("sluice_it_flow"); // seq_1_to_N needs a selected database
        try (RawMySqlClient client = proxy.rawLogin(db)) {
            client.query("SELECT 1"); // the session now holds its backend connection
            long before = usedDirectMemory();
            client.sendQuery("SELECT REPEAT('x', " + ROW_BYTES + ") FROM seq_1_to_" + ROWS);
            long peak = before;
            for (int i = 0; i < 30; i++) { // 3 s: the backend could send the whole result many times over
                TimeUnit.MILLISECONDS.sleep(100);
                peak = Math.max(peak, usedDirectMemory());
            }
            assertThat(peak - before).as("direct memory held for a client that reads nothing").isLessThan(BOUND);

            // Reading resumes the relay, and every row arrives intact.
            Packet columnCount = client.readPacket();
            assertThat(columnCount.payload()).containsExactly(1);
            client.readPacket(); // column definition
            assertThat(client.readPacket().isEof()).isTrue();
            int rows = 0;
            while (true) {
                Packet packet = client.readPacket();
                if (packet.isEof()) {
                    break;
                }
                assertThat(packet.isErr()).as("an ERR instead of row %d", rows).isFalse();
                assertThat(packet.payload()).hasSize(3 + ROW_BYTES); // 0xFC, two length bytes, the value
                rows++;
            }
            assertThat(rows).isEqualTo(ROWS);
            assertThat(client.query("SELECT 'after'").rows()).containsExactly(java.util.List.of("after"));
        } finally {
            TestMariaDb.get().dropDatabase(db);
        }
    }
}
