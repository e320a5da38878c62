package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.sql.StatementScan;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The classifier runs on the event loop for every COM_QUERY: it must allocate nothing, hinted or not. */
class StatementClassifierAllocationTest {
    /** Reused, as a session's policy reuses its scan. */
    private static final StatementScan SCAN = new StatementScan();


    private static final String[] STATEMENTS = {
        "SELECT c FROM sbtest1 WHERE id=5012",
        "/* sluice: primary */ SELECT c FROM t WHERE id = 1 FOR UPDATE",
        "UPDATE sbtest1 SET k=k+1 WHERE id=5012",
        "START TRANSACTION READ ONLY",
        "SET autocommit = 0",
        "SELECT GET_LOCK('a', 1), LAST_INSERT_ID(), @@warning_count; SELECT 2",
        "SET STATEMENT max_statement_time = 1 FOR SELECT * FROM t",
        "SELECT CONCAT(a, 'x'), COALESCE(b, 0), DATE_FORMAT(NOW(), '%Y') FROM t WHERE c IN (1, 2)",
        "SELECT `GET_LOCK`('x', 0), add_row(1)",
        "/*!99999 SELECT 1 */ DELETE FROM t",
        "SELECT 1 /*M!100000 , 2 */",
        "SET SESSION TRANSACTION READ WRITE",
    };

    @Test
    void allocatesNothingPerStatement() {
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        ByteBuf[] packets = new ByteBuf[STATEMENTS.length];
        for (int i = 0; i < packets.length; i++) {
            // Not from an allocator: the tests' PARANOID leak detector records a stack trace at every byte read of a
            // buffer it tracks, which is the detector's allocation, not the classifier's.
            byte[] bytes = STATEMENTS[i].getBytes(StandardCharsets.UTF_8);
            packets[i] = Unpooled.wrappedBuffer(ByteBuffer.allocateDirect(bytes.length).put(bytes).flip());
        }
        TransactionState state = new TransactionState(true);
        try {
            long sink = run(packets, state, 20_000); // warm up: class loading, the JIT
            long before = threads.getCurrentThreadAllocatedBytes();
            sink += run(packets, state, 20_000);
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            assertThat(sink).isNotZero();
            // 240,000 statements: a single allocation each would be megabytes; allow the measurement's own noise
            assertThat(allocated).as("bytes allocated for 240,000 statements").isLessThan(4096);
        } finally {
            for (ByteBuf packet : packets) {
                packet.release();
            }
        }
    }

    private static long run(ByteBuf[] packets, TransactionState state, int rounds) {
        long sink = 0;
        for (int round = 0; round < rounds; round++) {
            for (ByteBuf packet : packets) {
                int statementClass = StatementClassifier.classify(SCAN, StatementClassifier.BYTES, packet, 0, packet.writerIndex());
                sink += statementClass + state.route(statementClass).ordinal();
            }
        }
        return sink;
    }
}
