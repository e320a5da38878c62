package io.sluice.benchmark;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.sluice.codec.PacketFrameDecoder;
import io.sluice.config.ServerConfig;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseListener;
import io.sluice.relay.ResponseTracker;
import io.sluice.testing.MySqlWire;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
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
 * The relay of one text result set from a backend to a client: what BackendConnection does in RELAY mode for each
 * read buffer (ResponseTracker.scan, write the same buffer to the client channel with a void promise, check
 * writability, flush once per read), with the client pipeline Sluice builds (frame decoder + session handler).
 * One operation is one whole result set; the client side drains and releases after each flush, as a socket would.
 *
 * <p>The response is built once (column count, 5 column definitions, EOF unless CLIENT_DEPRECATE_EOF, {@code rows}
 * rows of 100 payload bytes, then EOF or OK) and cut into 64 KiB retained slices: the read buffers a socket would
 * deliver, without the kernel copy. The per-read steps repeat BackendConnection.relay, which is private; see the
 * README for the hook that would let this drive the real handler.
 *
 * <p>The {@code rows} and {@code bytes} counters are rates: rows/s and bytes/s relayed.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class ResultRelayBenchmark {
    static final int READ_SIZE = 64 * 1024;
    static final int COLUMNS = 5;
    /** 5 columns of a 19-byte value, each with its 1-byte length: 100 payload bytes per row. */
    static final String VALUE = "0123456789abcdefghi";
    /** Sluice's default connBufferSize: the client channel's high water mark. */
    static final int CONN_BUFFER_SIZE = 32 * 1024;

    /**
     * The response a server sends to sysbench's {@code SELECT} of {@code rows} rows: {@link #COLUMNS} VAR_STRING
     * columns of sbtest.sbtest1, each row {@link #VALUE} in every column, as frames from sequence id 1.
     */
    static byte[] textResultSet(int rows, boolean deprecateEof) {
        List<byte[]> columns = new ArrayList<>();
        for (int c = 0; c < COLUMNS; c++) {
            columns.add(MySqlWire.columnDefinition("sbtest", "sbtest1", "c" + c, MySqlWire.UTF8MB4_GENERAL_CI, 480,
                    MySqlWire.MYSQL_TYPE_VAR_STRING));
        }
        String[] values = new String[COLUMNS];
        Arrays.fill(values, VALUE);
        byte[] row = MySqlWire.textRow(values);
        return MySqlWire.frames(1, MySqlWire.resultSet(deprecateEof, columns, Collections.nCopies(rows, row),
                MySqlWire.SERVER_STATUS_AUTOCOMMIT));
    }

    @Param({"10", "100", "1000", "10000"})
    public int rows;

    @Param({"true", "false"})
    public boolean deprecateEof;

    private ByteBuf response;
    private int[] readOffsets;
    private int[] readLengths;
    private ResponseTracker tracker;
    private EmbeddedChannel client;
    private long completed;
    private long unwritable;

    /** Rows and bytes relayed, reported by JMH as rates next to the ops/s (result sets/s) score. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Relayed {
        public long rows;
        public long bytes;

        @Setup(Level.Iteration)
        public void reset() {
            rows = 0;
            bytes = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        response = PooledByteBufAllocator.DEFAULT.directBuffer();
        response.writeBytes(textResultSet(rows, deprecateEof));
        int reads = (response.readableBytes() + READ_SIZE - 1) / READ_SIZE;
        readOffsets = new int[reads];
        readLengths = new int[reads];
        for (int r = 0; r < reads; r++) {
            readOffsets[r] = r * READ_SIZE;
            readLengths[r] = Math.min(READ_SIZE, response.readableBytes() - r * READ_SIZE);
        }
        tracker = new ResponseTracker(deprecateEof, false, new ResponseListener() {
            @Override
            public void onLocalInfileRequest() {
                throw new IllegalStateException("no LOCAL INFILE in a result set");
            }

            @Override
            public void onResponseComplete() {
                completed++;
            }
        });
        client = new EmbeddedChannel(new PacketFrameDecoder(ServerConfig.DEFAULT_MAX_PACKET_SIZE),
                new ChannelInboundHandlerAdapter());
        client.config().setWriteBufferWaterMark(new WriteBufferWaterMark(CONN_BUFFER_SIZE / 2, CONN_BUFFER_SIZE));
        // One untimed pass proves the tracker sees exactly one whole response in the bytes built above.
        relayOne();
        if (completed != 1) {
            throw new IllegalStateException("rows " + rows + ", deprecateEof " + deprecateEof + ": " + completed
                    + " responses completed (expected: 1)");
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        client.finishAndReleaseAll();
        response.release();
    }

    @Benchmark
    public long relay(Relayed relayed) {
        relayOne();
        relayed.rows += rows;
        relayed.bytes += response.readableBytes();
        return unwritable;
    }

    /**
     * Baseline: only what the harness adds to {@link #relay}, making and releasing the read slices. Subtract its
     * time and {@code gc.alloc.rate.norm} from relay's to get the relay's own.
     */
    @Benchmark
    public int readsOnly() {
        int sum = 0;
        for (int r = 0; r < readOffsets.length; r++) {
            ByteBuf read = response.retainedSlice(readOffsets[r], readLengths[r]);
            sum += read.readableBytes();
            read.release();
        }
        return sum;
    }

    private void relayOne() {
        tracker.begin(ResponseKind.RESULT); // as a backend connection's in-flight queue begins the COM_QUERY's response
        Channel ch = client;
        for (int r = 0; r < readOffsets.length; r++) {
            ByteBuf buf = response.retainedSlice(readOffsets[r], readLengths[r]);
            // BackendConnection.relay: look, then hand the same buffer on (taken by the client channel)
            tracker.scan(buf);
            ch.write(buf, ch.voidPromise());
            if (!ch.isWritable()) {
                unwritable++; // the relay would stop reading the backend here until the client drains
            }
            // BackendConnection.channelReadComplete: one flush per read
            ch.flush();
            drain();
        }
        if (!tracker.isIdle()) {
            throw new IllegalStateException("tracker not idle after a whole result set");
        }
    }

    /** The client socket's side: what was flushed leaves, and its buffers are released. */
    private void drain() {
        for (Object msg; (msg = client.readOutbound()) != null; ) {
            ReferenceCountUtil.release(msg);
        }
    }
}
