package io.sluice.codec;

import static io.sluice.testing.MySqlWire.MAX_PAYLOAD;
import static io.sluice.testing.MySqlWire.comPing;
import static io.sluice.testing.MySqlWire.comQuery;
import static io.sluice.testing.MySqlWire.concat;
import static io.sluice.testing.MySqlWire.frame;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;
import io.sluice.protocol.PacketTooLargeException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PacketFrameDecoderTest {
    private EmbeddedChannel channel;

    @AfterEach
    void finish() {
        if (channel != null) {
            assertThat(channel.finish()).as("messages left in the channel").isFalse();
        }
    }

    private EmbeddedChannel channel(int maxPacketSize) {
        channel = new EmbeddedChannel(new PacketFrameDecoder(maxPacketSize));
        return channel;
    }

    private static byte[] payload(int length, int fill) {
        byte[] payload = new byte[length];
        Arrays.fill(payload, (byte) fill);
        return payload;
    }

    /** Reads every frame the channel emitted, releasing each. */
    private List<byte[]> readFrames() {
        List<byte[]> frames = new ArrayList<>();
        for (ByteBuf buf; (buf = channel.readInbound()) != null; ) {
            try {
                byte[] bytes = new byte[buf.readableBytes()];
                buf.getBytes(buf.readerIndex(), bytes);
                frames.add(bytes);
            } finally {
                // a retained slice: it may share its memory with other frames, so release() need not free it
                assertThat(buf.refCnt()).as("the frame is the reader's to release").isPositive();
                buf.release();
            }
        }
        return frames;
    }

    /** Writes {@code bytes} in pieces of at most {@code piece} bytes, each in its own buffer. */
    private void writeInPieces(byte[] bytes, int piece) {
        for (int pos = 0; pos < bytes.length; pos += piece) {
            channel.writeInbound(Unpooled.wrappedBuffer(bytes, pos, Math.min(piece, bytes.length - pos)));
        }
    }

    @Test
    void emitsAWholeFrameHeaderIncluded() {
        channel(1024);
        byte[] ping = frame(0, comPing());

        channel.writeInbound(Unpooled.wrappedBuffer(ping));

        assertThat(readFrames()).containsExactly(ping);
    }

    @Test
    void emitsAnEmptyFrame() {
        channel(1024);
        byte[] empty = frame(3, new byte[0]);

        channel.writeInbound(Unpooled.wrappedBuffer(empty));

        assertThat(readFrames()).containsExactly(empty);
    }

    @Test
    void assemblesAFrameFedOneByteAtATime() {
        channel(1024);
        byte[] query = frame(0, comQuery("SELECT 1"));

        for (int i = 0; i < query.length - 1; i++) {
            channel.writeInbound(Unpooled.wrappedBuffer(query, i, 1));
            assertThat(readFrames()).as("after %d bytes", i + 1).isEmpty();
        }
        channel.writeInbound(Unpooled.wrappedBuffer(query, query.length - 1, 1));

        assertThat(readFrames()).containsExactly(query);
    }

    @Test
    void splitsSeveralFramesInOneBuffer() {
        channel(1024);
        byte[] a = frame(0, comPing());
        byte[] b = frame(0, comQuery("SELECT 2"));
        byte[] c = frame(0, new byte[] {0x01});

        ByteBuf in = Unpooled.wrappedBuffer(concat(a, b, c));

        channel.writeInbound(in);

        assertThat(readFrames()).containsExactly(a, b, c);
        assertThat(in.refCnt()).as("frames are slices of the input: freed once all are released").isZero();
    }

    @Test
    void splitsFramesWhateverTheBufferBoundaries() {
        byte[] a = frame(0, payload(300, 'a'));
        byte[] b = frame(1, payload(2, 'b'));
        byte[] c = frame(0, payload(70_000, 'c'));
        byte[] stream = concat(a, b, c);
        for (int piece : new int[] {1, 2, 3, 4, 5, 7, 301, 4096}) {
            channel(100_000);

            writeInPieces(stream, piece);

            assertThat(readFrames()).as("pieces of %d", piece).containsExactly(a, b, c);
            assertThat(channel.finish()).isFalse();
        }
        channel = null;
    }

    @Test
    void passesA16MiBPacketInFramesWhenUnderTheLimit() {
        channel(MAX_PAYLOAD + 1000);
        byte[] first = frame(0, payload(MAX_PAYLOAD, 'x'));
        byte[] rest = frame(1, payload(1000, 'y'));
        byte[] next = frame(0, payload(MAX_PAYLOAD, 'z')); // a new packet: the count starts again

        writeInPieces(concat(first, rest), 1 << 20);
        List<byte[]> frames = readFrames();
        channel.writeInbound(Unpooled.wrappedBuffer(next));
        frames.addAll(readFrames());

        assertThat(frames).hasSize(3);
        assertThat(frames.get(0)).isEqualTo(first);
        assertThat(frames.get(1)).isEqualTo(rest);
        assertThat(frames.get(2)).hasSize(4 + MAX_PAYLOAD);
    }

    @Test
    void passesAPacketOfExactly16MiBMinus1EndedByAnEmptyFrame() {
        channel(MAX_PAYLOAD);
        byte[] first = frame(0, payload(MAX_PAYLOAD, 'x'));
        byte[] empty = frame(1, new byte[0]);

        channel.writeInbound(Unpooled.wrappedBuffer(concat(first, empty)));

        List<byte[]> frames = readFrames();
        assertThat(frames).hasSize(2);
        assertThat(frames.get(1)).isEqualTo(empty);
    }

    @Test
    void acceptsAPacketOfExactlyTheLimit() {
        channel(100);
        byte[] packet = frame(0, payload(100, 'a'));

        channel.writeInbound(Unpooled.wrappedBuffer(packet));

        assertThat(readFrames()).containsExactly(packet);
    }

    @Test
    void refusesAnOversizedPacketAsSoonAsItsHeaderArrives() {
        channel(100);
        byte[] packet = frame(0, payload(101, 'a'));

        assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(packet, 0, 4)))
                .isInstanceOf(DecoderException.class)
                .cause().isInstanceOf(PacketTooLargeException.class)
                .hasMessage("packet: 101 bytes (expected: <= 100, server.maxPacketSize)");
        assertThat(readFrames()).isEmpty();
    }

    @Test
    void refusesA16MiBPacketOverTheLimitAtItsContinuationHeader() {
        channel(MAX_PAYLOAD + 10);
        byte[] first = frame(0, payload(MAX_PAYLOAD, 'x'));
        byte[] rest = frame(1, payload(11, 'y'));

        channel.writeInbound(Unpooled.wrappedBuffer(first));
        assertThat(readFrames()).hasSize(1);

        assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(rest, 0, 4)))
                .isInstanceOf(DecoderException.class)
                .cause().isInstanceOf(PacketTooLargeException.class)
                .hasMessageContaining("packet: " + (MAX_PAYLOAD + 11L) + " bytes");
        assertThat(readFrames()).isEmpty();
    }

    @Test
    void refusesAnOversizedPacketThatFollowsGoodFramesInTheSameBuffer() {
        channel(100);
        byte[] good = frame(0, payload(10, 'a'));
        byte[] bad = frame(0, payload(200, 'b'));

        assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(concat(good, bad))))
                .isInstanceOf(DecoderException.class)
                .cause().isInstanceOf(PacketTooLargeException.class);
        assertThat(readFrames()).containsExactly(good);
    }

    @Test
    void passesOnAReadOfOneWholeFrameAsItIs() {
        channel(1024);
        ByteBuf in = Unpooled.wrappedBuffer(frame(0, comQuery("SELECT 1")));

        channel.writeInbound(in);

        ByteBuf out = channel.readInbound();
        try {
            assertThat(out).as("the read itself, not a slice of it").isSameAs(in);
            assertThat(out.refCnt()).isEqualTo(1);
        } finally {
            out.release();
        }
    }

    @Test
    void keepsFramesInOrderWhenAWholeFrameFollowsBufferedBytes() {
        channel(1024);
        byte[] a = frame(0, comQuery("SELECT 1"));
        byte[] b = frame(0, comPing());
        byte[] c = frame(0, comQuery("SELECT 2"));

        channel.writeInbound(Unpooled.wrappedBuffer(a, 0, 5)); // a's header and one byte: buffered
        channel.writeInbound(Unpooled.wrappedBuffer(a, 5, a.length - 5)); // a's rest: decoded from the buffer
        channel.writeInbound(Unpooled.wrappedBuffer(b)); // whole, nothing buffered: passed on
        channel.writeInbound(Unpooled.wrappedBuffer(concat(c, new byte[] {1, 0}))); // c and a partial header
        ByteBuf rest = Unpooled.wrappedBuffer(frame(0, new byte[] {0x01}));
        rest.skipBytes(2);
        channel.writeInbound(rest); // the header's rest: decoded from the buffer, not passed on

        assertThat(readFrames()).containsExactly(a, b, c, frame(0, new byte[] {0x01}));
    }

    @Test
    void refusesAWholeFrameOverTheLimitReadAtOnce() {
        channel(100);
        byte[] packet = frame(0, payload(101, 'a'));

        assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(packet)))
                .isInstanceOf(DecoderException.class)
                .cause().isInstanceOf(PacketTooLargeException.class);
        assertThat(readFrames()).isEmpty();
    }

    @Test
    void countsAWholeContinuationFrameReadAtOnceAgainstTheLimit() {
        channel(MAX_PAYLOAD + 10);
        channel.writeInbound(Unpooled.wrappedBuffer(frame(0, payload(MAX_PAYLOAD, 'x'))));
        assertThat(readFrames()).hasSize(1);

        assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(frame(1, payload(11, 'y')))))
                .isInstanceOf(DecoderException.class)
                .cause().isInstanceOf(PacketTooLargeException.class);
        assertThat(readFrames()).isEmpty();
    }

    @Test
    void refusesAPacketOverTheLoginLimitNamingIt() {
        channel = new EmbeddedChannel(new PacketFrameDecoder(100, "the limit before login"));
        byte[] packet = frame(1, payload(101, 'a'));

        assertThatThrownBy(() -> channel.writeInbound(Unpooled.wrappedBuffer(packet, 0, 4)))
                .isInstanceOf(DecoderException.class)
                .cause().isInstanceOf(PacketTooLargeException.class)
                .hasMessage("packet: 101 bytes (expected: <= 100, the limit before login)");
        assertThat(readFrames()).isEmpty();
    }

    @Test
    void aRaisedLimitAppliesFromTheNextHeader() {
        channel = new EmbeddedChannel(new PacketFrameDecoder(100, "the limit before login"));
        byte[] small = frame(1, payload(100, 'a'));
        byte[] large = frame(0, payload(5_000, 'b'));
        channel.writeInbound(Unpooled.wrappedBuffer(small));
        assertThat(readFrames()).containsExactly(small);

        decoder().limit(10_000, "server.maxPacketSize");
        writeInPieces(large, 1_000);

        assertThat(readFrames()).containsExactly(large);
    }

    @Test
    void aFrameNotWholeWithinTheReadTimeoutIsReported() {
        channel(1024);
        decoder().readTimeout(1_000);
        channel.freezeTime();
        byte[] query = frame(0, comQuery("SELECT 1"));

        channel.writeInbound(Unpooled.wrappedBuffer(query, 0, 5)); // the header and the command byte
        channel.advanceTimeBy(600, TimeUnit.MILLISECONDS);
        channel.writeInbound(Unpooled.wrappedBuffer(query, 5, 1)); // a drip: a byte, but still no whole frame
        channel.runScheduledPendingTasks();
        channel.checkException();
        channel.advanceTimeBy(401, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();

        assertThatThrownBy(channel::checkException).isInstanceOf(NetReadTimeoutException.class)
                .hasMessageContaining("1000 ms");
        assertThat(readFrames()).isEmpty();
    }

    @Test
    void aSlowUploadWhoseFramesEachArriveInTimeGoesOn() {
        channel(1024);
        decoder().readTimeout(1_000);
        channel.freezeTime();
        byte[] frames = concat(frame(0, payload(100, 'a')), frame(1, payload(100, 'b')), frame(2, payload(100, 'c')));

        // 60 bytes every 400 ms: a frame is always incomplete, but each one is whole within the timeout.
        for (int pos = 0; pos < frames.length; pos += 60) {
            channel.writeInbound(Unpooled.wrappedBuffer(frames, pos, Math.min(60, frames.length - pos)));
            channel.advanceTimeBy(400, TimeUnit.MILLISECONDS);
            channel.runScheduledPendingTasks();
            channel.checkException();
        }
        channel.advanceTimeBy(2_000, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        channel.checkException();

        assertThat(readFrames()).hasSize(3);
    }

    @Test
    void timeWhileReadingIsPausedDoesNotCountAgainstTheClient() {
        channel(1024);
        decoder().readTimeout(1_000);
        channel.freezeTime();
        byte[] query = frame(0, comQuery("SELECT 1"));
        channel.writeInbound(Unpooled.wrappedBuffer(query, 0, 6));

        channel.config().setAutoRead(false); // Sluice stopped reading (its backend is full, say)
        channel.advanceTimeBy(1_001, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();
        channel.checkException();
        channel.config().setAutoRead(true);
        channel.advanceTimeBy(1_001, TimeUnit.MILLISECONDS);
        channel.runScheduledPendingTasks();

        assertThatThrownBy(channel::checkException).isInstanceOf(NetReadTimeoutException.class);
    }

    @Test
    void withoutAReadTimeoutAnIncompleteFrameWaits() {
        channel(1024);
        channel.freezeTime();
        byte[] query = frame(0, comQuery("SELECT 1"));
        channel.writeInbound(Unpooled.wrappedBuffer(query, 0, 6));
        channel.advanceTimeBy(1, TimeUnit.HOURS);
        channel.runScheduledPendingTasks();
        channel.checkException();
        channel.writeInbound(Unpooled.wrappedBuffer(query, 6, query.length - 6));

        assertThat(readFrames()).containsExactly(query);
    }

    private PacketFrameDecoder decoder() {
        return channel.pipeline().get(PacketFrameDecoder.class);
    }
}
