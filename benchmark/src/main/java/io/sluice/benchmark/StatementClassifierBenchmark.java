package io.sluice.benchmark;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.readwrite.TransactionState;
import io.sluice.sql.StatementScan;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What read/write splitting's routing costs per COM_QUERY (issue #28): {@link StatementClassifier} over the SQL text
 * of a packet in a pooled direct buffer, as the policy will run it on the event loop, and with the session's
 * {@link TransactionState} after it. {@code -prof gc} should show {@code gc.alloc.rate.norm} of 0 B/op.
 *
 * <p>The statements are sysbench oltp_read_write's, plus a long one (a 2 KiB SELECT with a string literal) whose
 * cost is the lexer's walk over every byte.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class StatementClassifierBenchmark {

    @Param({"POINT_SELECT", "RANGE_SELECT", "UPDATE", "BEGIN", "HINTED", "LONG_SELECT"})
    public String statement;

    private ByteBuf packet;
    private int from;
    private int to;
    private TransactionState transaction;
    /** Reused, as a session's policy reuses its scan (decision 136): the path measured allocates nothing. */
    private final StatementScan scan = new StatementScan();

    @Setup
    public void setUp() {
        String sql = switch (statement) {
            case "POINT_SELECT" -> "SELECT c FROM sbtest1 WHERE id=5012";
            case "RANGE_SELECT" -> "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN 5012 AND 5111 ORDER BY c";
            case "UPDATE" -> "UPDATE sbtest1 SET k=k+1 WHERE id=5012";
            case "BEGIN" -> "BEGIN";
            case "HINTED" -> "/* sluice: primary */ SELECT c FROM sbtest1 WHERE id=5012";
            case "LONG_SELECT" -> "SELECT id FROM t WHERE note = '" + "x".repeat(2000) + "' AND id > 10";
            default -> throw new IllegalArgumentException(statement);
        };
        byte[] bytes = sql.getBytes(StandardCharsets.UTF_8);
        packet = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length + 5);
        packet.writeMediumLE(bytes.length + 1).writeByte(0).writeByte(3).writeBytes(bytes);
        from = 5;
        to = packet.writerIndex();
        transaction = new TransactionState(true);
    }

    @TearDown
    public void tearDown() {
        packet.release();
    }

    @Benchmark
    public int classify() {
        return StatementClassifier.classify(scan, StatementClassifier.BYTES, packet, from, to);
    }

    @Benchmark
    public Object classifyAndRoute() {
        return transaction.route(StatementClassifier.classify(scan, StatementClassifier.BYTES, packet, from, to));
    }
}
