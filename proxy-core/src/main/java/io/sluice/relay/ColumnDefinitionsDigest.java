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
 *
 * <p>Only what a client decodes rows by goes in: of each definition, everything after its six names (catalog,
 * schema, table, original table, name, original name), that is MariaDB's extended type information when sent, then
 * the character set, length, type, flags and decimals. The names are the client's labels, which it keeps: a table
 * whose schema is named differently on another server of the group (a {@code databaseName} alias over databases of
 * other names) reads the same there.
 */
public final class ColumnDefinitionsDigest implements ByteProcessor {
    /** The digest of no definitions at all (a statement without result columns). */
    public static final long NONE = 0xcbf29ce484222325L;
    private static final long PRIME = 0x100000001b3L;
    /** The names that open a definition, each a length-encoded string, not digested. */
    private static final int NAMES = 6;

    private long value = NONE;
    /** Names of the current definition still to skip. */
    private int namesLeft;
    /** Bytes of the length-encoded length being read still to come; 0 when a name's bytes (or a name) come next. */
    private int lengthBytesLeft;
    private int lengthShift;
    /** Bytes of the current name still to skip; -1 when its length comes next. */
    private long nameLeft = -1;

    /** Back to no definitions: a response begins. */
    public void reset() {
        value = NONE;
        namesLeft = 0;
    }

    /** A definition packet begins: a mark goes in, so packets cannot run together, then its bytes after its names. */
    public void beginPacket(int payloadLength) {
        value = (value ^ 0x100) * PRIME;
        namesLeft = NAMES;
        nameLeft = -1;
        lengthBytesLeft = 0;
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
        if (namesLeft == 0) {
            value = (value ^ (b & 0xFF)) * PRIME;
        } else if (lengthBytesLeft > 0) { // a 2-, 3- or 8-byte length, little-endian
            nameLeft |= (long) (b & 0xFF) << lengthShift;
            lengthShift += 8;
            if (--lengthBytesLeft == 0) {
                nameRead();
            }
        } else if (nameLeft < 0) { // the first byte of a name's length
            int first = b & 0xFF;
            if (first <= 0xFB || first == 0xFF) {
                nameLeft = first < 0xFB ? first : 0; // 0xFB: NULL
                nameRead();
            } else {
                nameLeft = 0;
                lengthShift = 0;
                lengthBytesLeft = first == 0xFC ? 2 : first == 0xFD ? 3 : 8;
            }
        } else if (--nameLeft == 0) {
            nameDone();
        }
        return true;
    }

    /** A name's length is read: its bytes come next, or, empty, the next name. */
    private void nameRead() {
        if (nameLeft == 0) {
            nameDone();
        }
    }

    private void nameDone() {
        namesLeft--;
        nameLeft = -1;
    }
}
