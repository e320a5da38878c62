package io.sluice.codec;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.PacketTooLargeException;
import io.sluice.protocol.Packets;

/**
 * Cuts whole MySQL frames out of a byte stream that arrives in pieces: the one framing rule, shared by the client
 * pipeline's {@link PacketFrameDecoder} and by a backend connection reading its login and its own commands'
 * responses. A frame is a 3-byte little-endian payload length, a sequence id, then the payload; a logical packet of
 * 16 MiB or more comes as several frames, each but the last 16 MiB - 1 long.
 *
 * <p>It refuses a logical packet larger than the limit as soon as a header announces it, before its body is
 * buffered. It keeps no buffer itself: the caller accumulates the bytes and calls {@link #next} until it returns
 * {@code null}.
 */
public final class FrameReader {
    private int maxPacketSize;
    /** What sets the limit, for the error. */
    private String limitName = "server.maxPacketSize";
    /** Bytes of the logical packet so far, while its frames are 16 MiB - 1 long. */
    private long logicalLength;

    /** @param maxPacketSize the largest logical packet accepted, in bytes */
    public FrameReader(int maxPacketSize) {
        this.maxPacketSize = maxPacketSize;
    }

    /**
     * Changes the limit from the next header on: a client pipeline reads its login under a small one and raises it
     * to {@code server.maxPacketSize} once the client is authenticated.
     *
     * @param limitName what sets the limit, named in the error
     */
    public void limit(int newMaxPacketSize, String newLimitName) {
        this.maxPacketSize = newMaxPacketSize;
        this.limitName = newLimitName;
    }

    /**
     * The next whole frame of {@code in}, header included, as a retained slice the caller takes; {@code in}'s reader
     * index moves past it. {@code null} when the next frame has not fully arrived (nothing is consumed then).
     *
     * @throws PacketTooLargeException when a header announces a logical packet over the limit; the rest of {@code in}
     *     is skipped
     */
    public ByteBuf next(ByteBuf in) {
        if (in.readableBytes() < Packets.HEADER_SIZE) {
            return null;
        }
        int length = Packets.payloadLength(in, in.readerIndex());
        long total = logicalLength + length;
        if (total > maxPacketSize) {
            in.skipBytes(in.readableBytes());
            throw new PacketTooLargeException(total, maxPacketSize, limitName);
        }
        if (in.readableBytes() < Packets.HEADER_SIZE + length) {
            return null; // <header> <here: the rest of the payload has not arrived>
        }
        logicalLength = length == Packets.MAX_PAYLOAD ? total : 0;
        return in.readRetainedSlice(Packets.HEADER_SIZE + length);
    }

    /**
     * Whether {@code in} holds exactly one frame, whole, that {@link #next} would return as it is: not part of a
     * packet split into 16 MiB frames, and within the limit.
     */
    public boolean isOneWholeFrame(ByteBuf in) {
        int readable = in.readableBytes();
        if (readable < Packets.HEADER_SIZE || logicalLength != 0) {
            return false;
        }
        int length = Packets.payloadLength(in, in.readerIndex());
        return readable == Packets.HEADER_SIZE + length && length < Packets.MAX_PAYLOAD && length <= maxPacketSize;
    }
}
