package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.sql.HiddenCodeNames;
import io.sluice.sql.StatementScan;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The one scan ({@link StatementScan}) runs on the event loop for every COM_QUERY in transaction pooling, and
 * {@link HiddenStateFilter#mayCallLockFunction} for every one in session pooling: they must not allocate.
 */
class StatementScanAllocationTest {

    /**
     * The one scan, as transaction pooling runs it on a packet: reused, so that it allocates nothing, also when it
     * looks up names of tables and views with hidden code (decision 200), one of them non-ASCII.
     */
    private static final HiddenCodeNames NAMES = HiddenCodeNames.of(List.of("sbtest1", "lt", "naïve", "audit_v"));
    private static final StatementScan SCAN = new StatementScan(() -> NAMES);

    static int sniff(ByteBuf buf, int from, int to) {
        return SCAN.scan(StatementClassifier.BYTES, buf, from, to).effects();
    }

    private static final String[] STATEMENTS = {
        "SELECT c FROM sbtest1 WHERE id = 42",
        "/*!40101 SET @OLD_CHARSET=@@CHARACTER_SET_CLIENT */",
        "SELECT 'me@example.com', `a@b`, LAST_INSERT_ID ( ) FROM t /* @x */ -- @y\n",
        "XA START 'x'",
        "UPDATE seq SET id = LAST_INSERT_ID(id + 1), v = 0x1F + 1.5e3 WHERE k <=> NULL",
        "CREATE TEMPORARY TABLE tmp (id INT) # naïve",
        "INSERT INTO `naïve` (a) SELECT b FROM other_t JOIN Audit_V USING (c)",
    };

    @Test
    void sniffingAllocatesNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        ByteBuf[] buffers = new ByteBuf[STATEMENTS.length];
        for (int k = 0; k < STATEMENTS.length; k++) {
            buffers[k] = Unpooled.copiedBuffer("\3" + STATEMENTS[k], StandardCharsets.UTF_8);
        }
        try {
            int flags = sniffAll(buffers, 20_000); // past the JIT's first compilations
            // The least of three rounds: a late compilation or a JVM-internal allocation on this thread can land in
            // one round (1,016 bytes once); one object per sniff would be 1.9 MB in each.
            long allocated = Long.MAX_VALUE;
            for (int round = 0; round < 3; round++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                flags |= sniffAll(buffers, 20_000);
                allocated = Math.min(allocated, threads.getCurrentThreadAllocatedBytes() - before);
            }

            assertThat(flags).isNotZero();
            assertThat(allocated).as("bytes allocated by 120,000 sniffs").isLessThan(1_000);
        } finally {
            for (ByteBuf buffer : buffers) {
                buffer.release();
            }
        }
    }

    private static int sniffAll(ByteBuf[] buffers, int rounds) {
        int flags = 0;
        for (int round = 0; round < rounds; round++) {
            for (ByteBuf buffer : buffers) {
                flags |= sniff(buffer, 1, buffer.writerIndex());
                if (HiddenStateFilter.mayCallLockFunction(buffer, 1, buffer.writerIndex())) { // session pooling's filter
                    flags |= 1 << 30;
                }
            }
        }
        return flags;
    }
}
