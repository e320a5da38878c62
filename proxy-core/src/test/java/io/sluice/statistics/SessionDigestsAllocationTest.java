package io.sluice.statistics;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.sluice.protocol.Command;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The statistics' share of the command path, in the steady state (every shape seen before): finding a COM_QUERY's
 * entry by the shape of its bytes, a COM_STMT_EXECUTE's by its statement id, and counting the outcome allocate
 * nothing.
 */
class SessionDigestsAllocationTest {

    private static final String[] QUERIES = {
        "SELECT c FROM sbtest1 WHERE id=%d",
        "SELECT c FROM sbtest1 WHERE id BETWEEN %d AND 100",
        "UPDATE sbtest1 SET k=k+1 WHERE id=%d",
        "INSERT INTO sbtest1 (id, k, c, pad) VALUES (%d, 1, 'c', 'pad'), (2, 3, 'c', 'pad')",
        "SELECT * FROM t WHERE id IN (%d, 2, 3, 4) /* a comment */ AND b IS NULL",
    };

    @Test
    void findingAndCountingAKnownStatementAllocatesNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        DigestStatistics statistics = new DigestStatistics(100);
        SessionDigests session = statistics.forSession(ImmediateEventExecutor.INSTANCE);
        String user = "app";
        String schema = "sbtest";
        String group = "ds_0";
        ByteBuf[] frames = new ByteBuf[QUERIES.length * 2 + 1];
        for (int k = 0; k < QUERIES.length; k++) {
            frames[2 * k] = frame(Command.COM_QUERY, String.format(QUERIES[k], 1 + k).getBytes(StandardCharsets.UTF_8));
            frames[2 * k + 1] = frame(Command.COM_QUERY,
                    String.format(QUERIES[k], 98765 + k).getBytes(StandardCharsets.UTF_8));
        }
        ByteBuf prepare = frame(Command.COM_STMT_PREPARE,
                "SELECT c FROM sbtest1 WHERE id=?".getBytes(StandardCharsets.UTF_8));
        session.onCommand(Command.COM_STMT_PREPARE, prepare, user, schema, group)
                .completed(1000, 1000, false, 0, 0, 0, 7, false);
        prepare.release();
        frames[frames.length - 1] = frame(Command.COM_STMT_EXECUTE, new byte[] {7, 0, 0, 0, 0, 1, 0, 0, 0});
        try {
            long counted = countAll(session, frames, user, schema, group, 20_000);
            long allocated = Long.MAX_VALUE;
            for (int round = 0; round < 3; round++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                counted += countAll(session, frames, user, schema, group, 20_000);
                allocated = Math.min(allocated, threads.getCurrentThreadAllocatedBytes() - before);
            }

            assertThat(allocated).as("bytes allocated by 220,000 statements").isLessThan(1_000);
            List<DigestSummary> rows = statistics.summaries();
            assertThat(rows).hasSize(QUERIES.length); // the prepared point select shares the text one's digest
            assertThat(rows.stream().mapToLong(DigestSummary::count).sum()).isEqualTo(counted);
            DigestSummary point = rows.stream()
                    .filter(r -> r.digestText().equals("select c from sbtest1 where id = ?")).findFirst().orElseThrow();
            assertThat(point.count()).isEqualTo(4 * 20_000 * 3); // two texts and one execute per round, 4 runs
            assertThat(point.user()).isEqualTo(user);
            assertThat(point.schema()).isEqualTo(schema);
            assertThat(point.group()).isEqualTo(group);
        } finally {
            for (ByteBuf frame : frames) {
                frame.release();
            }
        }
    }

    private static long countAll(SessionDigests session, ByteBuf[] frames, String user, String schema, String group,
            int rounds) {
        long counted = 0;
        for (int round = 0; round < rounds; round++) {
            for (ByteBuf frame : frames) {
                int command = frame.getUnsignedByte(4);
                StatementRecord record = session.onCommand(command, frame, user, schema, group);
                record.completed(250_000 + round, 1_000_000L + round, false, 0, 1, 0, 0, false);
                counted++;
            }
        }
        return counted;
    }

    private static ByteBuf frame(int command, byte[] argument) {
        int length = argument.length + 1;
        ByteBuf frame = Unpooled.buffer(4 + length);
        frame.writeMediumLE(length).writeByte(0).writeByte(command).writeBytes(argument);
        return frame;
    }
}
