package io.sluice.benchmark;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOutboundHandlerAdapter;
import io.netty.channel.ChannelPromise;
import io.netty.channel.ChannelPipeline;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.ReferenceCountUtil;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BorrowingSession;
import io.sluice.backend.SessionKey;
import io.sluice.codec.PacketFrameDecoder;
import io.sluice.config.ServerConfig;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.SessionStateFilter;
import io.sluice.testing.MySqlWire;
import java.util.concurrent.TimeUnit;
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
 * The same result set relay as {@link ResultRelayBenchmark}, but through the real, private
 * {@code BackendConnection.channelRead} / {@code relay} / {@code channelReadComplete}: a pooled connection to a
 * real server (see {@link PoolBenchmark} for the server params) is lent to a session whose client is an
 * {@code EmbeddedChannel}, and the prepared read buffers are fired into the backend channel's pipeline on its loop,
 * as its socket would deliver them. The server itself sends nothing during the measurement.
 *
 * <p>Differences from {@link ResultRelayBenchmark}: this includes the handler's mode switch and, like
 * CommandRelayHandler, resumes reading the backend ({@code resumeReading}, an epoll interest change on a real socket)
 * whenever the drained client becomes writable again. Compare the two within one run.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms512m", "-Xmx512m"})
public class BackendRelayBenchmark {

    @Param({"10", "100", "1000", "10000"})
    public int rows;

    @Param({"true", "false"})
    public boolean deprecateEof;

    /**
     * Whether the connection is lent as to a client without CLIENT_SESSION_TRACK in transaction pooling: OK packets
     * that carry session state are then rewritten (decision 069). The result relayed carries none, so this measures
     * what the rewriter's watch costs a plain result.
     */
    @Param({"false", "true"})
    public boolean rewriteOks;

    @Param("jdbc:mysql://127.0.0.1:3306/")
    public String url;

    @Param("root")
    public String user;

    @Param("")
    public String password;

    private LoopPool pool;
    private EmbeddedChannel client;
    private BorrowingSession session;
    private BackendConnection connection;
    private ChannelPipeline backend;
    private ByteBuf response;
    private ByteBuf query;
    private int[] readOffsets;
    private int[] readLengths;

    @Setup(Level.Trial)
    public void setUp() {
        response = PooledByteBufAllocator.DEFAULT.directBuffer();
        response.writeBytes(ResultRelayBenchmark.textResultSet(rows, deprecateEof));
        int size = ResultRelayBenchmark.READ_SIZE;
        int reads = (response.readableBytes() + size - 1) / size;
        readOffsets = new int[reads];
        readLengths = new int[reads];
        for (int r = 0; r < reads; r++) {
            readOffsets[r] = r * size;
            readLengths[r] = Math.min(size, response.readableBytes() - r * size);
        }

        client = new EmbeddedChannel(new PacketFrameDecoder(ServerConfig.DEFAULT_MAX_PACKET_SIZE),
                new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
                        // as CommandRelayHandler: the client drained, so read the backend again
                        if (ctx.channel().isWritable() && connection != null) {
                            connection.resumeReading();
                        }
                        ctx.fireChannelWritabilityChanged();
                    }
                });
        int connBufferSize = ResultRelayBenchmark.CONN_BUFFER_SIZE;
        client.config().setWriteBufferWaterMark(new WriteBufferWaterMark(connBufferSize / 2, connBufferSize));
        session = LoopPool.session(client);
        int capabilities = deprecateEof ? Capabilities.PROXY_SUPPORTED
                : Capabilities.PROXY_SUPPORTED & ~Capabilities.CLIENT_DEPRECATE_EOF;
        pool = new LoopPool(url, user, password, new SessionKey(capabilities, MySqlWire.UTF8MB4_GENERAL_CI), 1, session);
        connection = pool.takeIdle();
        connection.bind(session, null, null, rewriteOks ? SessionStateFilter.WITHOUT_SESSION_TRACK : null);
        backend = connection.channel().pipeline();
        // The command each operation forwards is swallowed before the socket: the server must send nothing, since the
        // benchmark fires the response in itself. Outbound writes start at the pipeline's tail, so this comes first.
        backend.addLast("swallow-commands", new ChannelOutboundHandlerAdapter() {
            @Override
            public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
                ReferenceCountUtil.release(msg);
            }

            @Override
            public void flush(ChannelHandlerContext ctx) {
            }
        });
        query = Packets.command(PooledByteBufAllocator.DEFAULT, Command.COM_QUERY, "SELECT * FROM t");
        // One untimed pass proves the handler followed exactly one whole response and is ready for the next command.
        relayOne();
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        pool.checkOwner();
        backend.remove("swallow-commands");
        pool.local.resetAndReturn(connection); // reset round trip: a clean connection goes back idle
        connection = null;
        pool.driveUntil(() -> pool.local.idleCount() == 1, "the connection reset and idle");
        pool.close();
        client.finishAndReleaseAll();
        response.release();
        query.release();
    }

    @Benchmark
    public boolean relay(ResultRelayBenchmark.Relayed relayed) {
        relayOne();
        relayed.rows += rows;
        relayed.bytes += response.readableBytes();
        return client.isWritable();
    }

    private void relayOne() {
        // As a session forwards a COM_QUERY: its entry in the in-flight queue, the write (swallowed), the flush.
        connection.forward(query.retainedSlice(), ResponseKind.RESULT);
        connection.flush();
        for (int r = 0; r < readOffsets.length; r++) {
            // a read as the socket would deliver it; the handler passes it to the client channel, which takes it
            backend.fireChannelRead(response.retainedSlice(readOffsets[r], readLengths[r]));
            backend.fireChannelReadComplete();
            drain();
        }
        if (!connection.isBetweenCommands()) {
            throw new IllegalStateException("backend connection not between commands after a whole result set: "
                    + connection);
        }
    }

    /** The client socket's side: what was flushed leaves, and its buffers are released. */
    private void drain() {
        for (Object msg; (msg = client.readOutbound()) != null; ) {
            ReferenceCountUtil.release(msg);
        }
    }
}
