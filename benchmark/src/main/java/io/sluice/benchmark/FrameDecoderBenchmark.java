package io.sluice.benchmark;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.codec.PacketFrameDecoder;
import io.sluice.config.ServerConfig;
import io.sluice.testing.MySqlWire;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
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
 * {@link PacketFrameDecoder} on a client's byte stream, as the client pipeline sees it: one operation is one socket
 * read (or, for the 1 MiB query, the 17 reads that carry it), each followed by channelReadComplete. The next handler
 * releases every frame at once, as CommandRelayHandler does once it has forwarded it.
 *
 * <p>Reads are retained slices of a pooled direct buffer built in setup, so the score is the decoder's own cost
 * (header checks, slicing, cumulating frames that straddle reads) and not the kernel's copy into the read buffer.
 * {@code -prof gc} gives {@code gc.alloc.rate.norm}, the bytes allocated per read.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class FrameDecoderBenchmark {

    /** Socket read size for the large query: Netty's adaptive allocator settles near 64 KiB on a busy stream. */
    static final int READ_SIZE = 64 * 1024;

    /**
     * POINT_SELECT: one ~60-byte COM_QUERY per read (an OLTP client waiting for each answer);
     * POINT_SELECT_BATCH_16: 16 of them pipelined in one read; QUERY_1MIB: one COM_QUERY of 1 MiB in 64 KiB reads.
     */
    @Param({"POINT_SELECT", "POINT_SELECT_BATCH_16", "QUERY_1MIB"})
    public String workload;

    private EmbeddedChannel channel;
    private ChannelPipeline pipeline;
    private ByteBuf stream;
    private int[] readOffsets;
    private int[] readLengths;
    private Sink sink;

    /** Frames and bytes decoded, reported by JMH as rates next to the ops/s (reads/s) score. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Decoded {
        public long frames;
        public long bytes;

        @Setup(Level.Iteration)
        public void reset() {
            frames = 0;
            bytes = 0;
        }
    }

    /** Stands in for CommandRelayHandler: takes each frame and releases it. */
    static final class Sink extends ChannelInboundHandlerAdapter {
        long frames;
        long bytes;

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            frames++;
            bytes += frame.readableBytes();
            frame.release(); // taken from the decoder: the session would forward it, here it ends
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        stream = PooledByteBufAllocator.DEFAULT.directBuffer();
        switch (workload) {
            case "POINT_SELECT":
                pointSelects(1);
                readOffsets = new int[] {0};
                readLengths = new int[] {stream.readableBytes()};
                break;
            case "POINT_SELECT_BATCH_16":
                pointSelects(16);
                readOffsets = new int[] {0};
                readLengths = new int[] {stream.readableBytes()};
                break;
            case "QUERY_1MIB":
                largeQuery(1024 * 1024);
                int reads = (stream.readableBytes() + READ_SIZE - 1) / READ_SIZE;
                readOffsets = new int[reads];
                readLengths = new int[reads];
                for (int r = 0; r < reads; r++) {
                    readOffsets[r] = r * READ_SIZE;
                    readLengths[r] = Math.min(READ_SIZE, stream.readableBytes() - r * READ_SIZE);
                }
                break;
            default:
                throw new IllegalArgumentException("workload: " + workload);
        }
        sink = new Sink();
        channel = new EmbeddedChannel(new PacketFrameDecoder(ServerConfig.DEFAULT_MAX_PACKET_SIZE), sink);
        pipeline = channel.pipeline();
        // One untimed pass proves the stream decodes into whole frames and nothing is left behind.
        long framesBefore = sink.frames;
        read();
        if (sink.frames == framesBefore || sink.bytes % stream.readableBytes() != 0) {
            throw new IllegalStateException("workload " + workload + ": decoded " + sink.frames + " frames, "
                    + sink.bytes + " bytes (expected: the whole stream of " + stream.readableBytes() + " bytes)");
        }
    }

    private void pointSelects(int count) {
        for (int i = 0; i < count; i++) {
            // ~60-byte payload, sysbench oltp_point_select with the column list spelled out
            stream.writeBytes(MySqlWire.frame(0,
                    MySqlWire.comQuery("SELECT id, k, c, pad FROM sbtest1 WHERE id = " + (4_999_000 + i) + " LIMIT 1")));
        }
    }

    private void largeQuery(int payloadBytes) {
        StringBuilder sql = new StringBuilder(payloadBytes).append("INSERT INTO blobs VALUES ('");
        while (sql.length() < payloadBytes - 3) {
            sql.append('x');
        }
        sql.append("')");
        stream.writeBytes(MySqlWire.frame(0, MySqlWire.comQuery(sql.toString())));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (channel.finish()) {
            throw new IllegalStateException("frames left in the channel");
        }
        stream.release();
    }

    @Benchmark
    public long decode(Decoded decoded) {
        long frames = sink.frames;
        long bytes = sink.bytes;
        read();
        decoded.frames += sink.frames - frames;
        decoded.bytes += sink.bytes - bytes;
        return sink.frames;
    }

    /**
     * Baseline: only what the harness adds to {@link #decode}, making and releasing the read slices. Subtract its
     * time and {@code gc.alloc.rate.norm} from decode's to get the decoder's own.
     */
    @Benchmark
    public int readsOnly() {
        int sum = 0;
        for (int r = 0; r < readOffsets.length; r++) {
            ByteBuf read = stream.retainedSlice(readOffsets[r], readLengths[r]);
            sum += read.readableBytes();
            read.release();
        }
        return sum;
    }

    private void read() {
        for (int r = 0; r < readOffsets.length; r++) {
            // a retained slice: the decoder takes it and releases it once every frame in it is sliced off
            pipeline.fireChannelRead(stream.retainedSlice(readOffsets[r], readLengths[r]));
            pipeline.fireChannelReadComplete();
        }
        channel.checkException();
    }
}
