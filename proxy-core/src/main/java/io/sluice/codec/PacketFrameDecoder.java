package io.sluice.codec;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.sluice.protocol.PacketTooLargeException;
import io.sluice.protocol.Packets;
import java.util.List;

/**
 * Splits a client's byte stream into MySQL frames: each output is a retained slice of one whole frame, header
 * included, so the session can forward it without copying. Frames of a logical packet of 16 MiB or more come out
 * one by one; the decoder only adds up their length and refuses a packet larger than {@code maxPacketSize} as soon as
 * a header announces it, before its body is buffered.
 *
 * <p>Ownership: each emitted slice belongs to the next handler, which must release it or pass it on.
 */
public final class PacketFrameDecoder extends ByteToMessageDecoder {
    private final int maxPacketSize;
    /** Bytes of the logical packet so far, while its frames are 16 MiB - 1 long. */
    private long logicalLength;

    public PacketFrameDecoder(int maxPacketSize) {
        this.maxPacketSize = maxPacketSize;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        while (in.readableBytes() >= Packets.HEADER_SIZE) {
            int start = in.readerIndex();
            int length = Packets.payloadLength(in, start);
            long total = logicalLength + length;
            if (total > maxPacketSize) {
                in.skipBytes(in.readableBytes());
                throw new PacketTooLargeException(total, maxPacketSize);
            }
            if (in.readableBytes() < Packets.HEADER_SIZE + length) {
                return; // <header> <here: the rest of the payload has not arrived>
            }
            logicalLength = length == Packets.MAX_PAYLOAD ? total : 0;
            out.add(in.readRetainedSlice(Packets.HEADER_SIZE + length));
        }
    }
}
