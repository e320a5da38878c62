package io.sluice.relay;

import io.netty.buffer.ByteBuf;
import io.netty.util.ByteProcessor;

/**
 * A 64-bit digest (FNV-1a) of the column definition packets of one response, fed as their bytes stream past (by the
 * {@link ResponseTracker}) or from whole packets (a prepare of Sluice's own): both give the same value for the same
 * definitions. MariaDB's metadata caching (decision 062) lets a server leave the definitions out of an execute's result
 * when the client last received the same ones on that connection; before a session moves, the digest of what its
 * client last received is compared with what the new server would answer (issue #31). A digest, not the bytes: a
 * session keeps one {@code long} per statement. Not thread-safe; one per tracker, reused.
 */
public final class ColumnDefinitionsDigest implements ByteProcessor {
    /** The digest of no definitions at all (a statement without result columns). */
    public static final long NONE = 0xcbf29ce484222325L;
    private static final long PRIME = 0x100000001b3L;

    private long value = NONE;

    /** Back to no definitions: a response begins. */
    public void reset() {
        value = NONE;
    }

    /** A definition packet of {@code payloadLength} bytes begins: its length goes in, so packets cannot run together. */
    public void beginPacket(int payloadLength) {
        value = (value ^ payloadLength) * PRIME;
    }

    /** Bytes of the definition packet being read. */
    public void update(ByteBuf buf, int index, int length) {
        if (length > 0) {
            buf.forEachByte(index, length, this);
        }
    }

    /** One whole definition packet's payload (not its header), from its reader index on. */
    public void packet(ByteBuf payload) {
        beginPacket(payload.readableBytes());
        update(payload, payload.readerIndex(), payload.readableBytes());
    }

    /** The digest of what went in since the last {@link #reset}. */
    public long value() {
        return value;
    }

    @Override
    public boolean process(byte b) {
        value = (value ^ (b & 0xFF)) * PRIME;
        return true;
    }
}
