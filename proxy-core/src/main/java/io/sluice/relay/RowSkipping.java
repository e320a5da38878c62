package io.sluice.relay;

import io.netty.buffer.ByteBuf;
import io.netty.util.internal.PlatformDependent;
import io.sluice.protocol.Packets;

/**
 * The hot loop of a large result: rows lying wholly inside a read buffer are passed over after reading only their
 * length and first byte, since a row never starts with 0xFE (unless it is 16 MiB long) or 0xFF. It stops at anything
 * else (a terminator, an ERR, a packet cut by the buffer's end, a 16 MiB frame), which the tracker reads the general
 * way.
 */
final class RowSkipping {
    /** From how many bytes of rows on the buffer's memory is read directly. */
    private static final int DIRECT_READ_MIN_BYTES = 2048;
    /** Whether the buffer's memory can be read by address (Netty's access to Unsafe; true on HotSpot). */
    private static final boolean DIRECT_READS = PlatformDependent.hasUnsafe();

    private RowSkipping() {
    }

    /** The index part of {@link #skip}'s result. */
    static int index(long skipped) {
        return (int) skipped;
    }

    /** The row count part of {@link #skip}'s result. */
    static int rows(long skipped) {
        return (int) (skipped >>> 32);
    }

    /**
     * Passes over the whole rows of {@code buf} (borrowed) from {@code i} to {@code end}.
     *
     * @return the index of the first byte not passed over and the rows passed over, packed in one long (read with
     *     {@link #index} and {@link #rows}) so that the loop allocates nothing
     */
    static long skip(ByteBuf buf, int i, int end) {
        if (DIRECT_READS && end - i >= DIRECT_READ_MIN_BYTES && buf.hasMemoryAddress()) {
            // Straight from the buffer's memory: ByteBuf's getters go through two or three calls per read in
            // Netty's adaptive buffers, and the buffer's NIO view, used before, allocated a ByteBuffer per read of
            // a large result (the relay's only garbage: it made the heap cycle through new regions during
            // range_10000, growing the RSS). Only worth it for many rows; a point select's one row stays below.
            return skip(buf.memoryAddress(), i, end);
        }
        int passed = 0;
        while (end - i > Packets.HEADER_SIZE) {
            int length = buf.getUnsignedMediumLE(i);
            if (length == 0 || length >= Packets.MAX_PAYLOAD || end - i - Packets.HEADER_SIZE < length) {
                break;
            }
            int first = buf.getUnsignedByte(i + Packets.HEADER_SIZE);
            if (first == Packets.EOF_HEADER || first == Packets.ERR_HEADER) {
                break;
            }
            i += Packets.HEADER_SIZE + length;
            passed++;
        }
        return (long) passed << 32 | i;
    }

    /**
     * {@link #skip(ByteBuf, int, int)} reading the memory at {@code address} (the buffer's index 0). Every read is
     * inside {@code [i, end)}, the buffer's readable bytes, which the caller's buffer keeps alive: the 4 bytes of a
     * header only while more than 4 remain, a row's first byte only once the whole row is known to be there.
     */
    private static long skip(long address, int i, int end) {
        int passed = 0;
        while (end - i > Packets.HEADER_SIZE) {
            int header = PlatformDependent.getInt(address + i); // 3 length bytes (little-endian), then the sequence id
            int length = (PlatformDependent.BIG_ENDIAN_NATIVE_ORDER ? Integer.reverseBytes(header) : header) & 0xFFFFFF;
            if (length == 0 || length >= Packets.MAX_PAYLOAD || end - i - Packets.HEADER_SIZE < length) {
                break;
            }
            int first = PlatformDependent.getByte(address + i + Packets.HEADER_SIZE) & 0xFF;
            if (first == Packets.EOF_HEADER || first == Packets.ERR_HEADER) {
                break;
            }
            i += Packets.HEADER_SIZE + length;
            passed++;
        }
        return (long) passed << 32 | i;
    }
}
