package io.sluice.relay;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ProtocolException;

/**
 * The first bytes of the packet the {@link ResponseTracker} is reading, copied as they stream past (at most
 * {@link #MAX}): enough to classify the packet and to read the header fields of an OK, EOF, ERR or
 * COM_STMT_PREPARE_OK packet, or a column count. One per tracker, reused for every packet.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_ok_packet.html">OK packet</a>
 */
final class PacketHead {
    /** Enough for an OK packet's header byte, two 9-byte lenencs and the status flags. */
    static final int MAX = 32;

    final byte[] bytes = new byte[MAX];
    /** How many bytes of the packet are in {@link #bytes}. */
    int fill;
    /** How many the tracker wants for this packet: 0 for packets it does not look into. */
    int wanted;

    /** The packet's first byte, or -1 when none was copied. */
    int first() {
        return fill > 0 ? bytes[0] & 0xFF : -1;
    }

    int u16(int pos) {
        return (bytes[pos] & 0xFF) | (bytes[pos + 1] & 0xFF) << 8;
    }

    /** The size of the length-encoded integer at {@code pos}, 1 when it lies beyond what was copied. */
    int lenencSize(int pos) {
        if (pos >= fill) {
            return 1;
        }
        int b = bytes[pos] & 0xFF;
        return b < 0xFB ? 1 : b == 0xFC ? 3 : b == 0xFD ? 4 : b == 0xFE ? 9 : 1;
    }

    /**
     * A length-encoded integer that must be whole (a column count).
     *
     * @throws ProtocolException when it is cut off
     */
    long lenenc(int pos) {
        int b = bytes[pos] & 0xFF;
        if (b < 0xFB) {
            return b;
        }
        int size = lenencSize(pos);
        if (pos + size > fill) {
            throw new ProtocolException("column count: truncated (expected: a length-encoded integer)");
        }
        return multiByte(pos, size);
    }

    /** A length-encoded integer, 0 when it is cut off. */
    long lenencOrZero(int pos) {
        int size = lenencSize(pos);
        if (size == 1) {
            return pos < fill ? bytes[pos] & 0xFF : 0;
        }
        return pos + size > fill ? 0 : multiByte(pos, size);
    }

    private long multiByte(int pos, int size) {
        long value = 0;
        for (int k = size - 1; k >= 1; k--) {
            value = value << 8 | (bytes[pos + k] & 0xFF);
        }
        return value;
    }

    /** Affected rows of an OK packet, 0 when the packet is too short to hold them. */
    long okAffectedRows() {
        return fill > lenencSize(1) ? lenenc(1) : 0;
    }

    /** The last-insert id of an OK packet, 0 when cut off. */
    long okLastInsertId() {
        int at = 1 + lenencSize(1);
        return at < fill ? lenencOrZero(at) : 0;
    }

    /** Status flags of an OK packet (header, affected rows, last insert id, then status), or {@code otherwise}. */
    int okStatus(int otherwise) {
        int pos = 1;
        pos += lenencSize(pos);
        pos += lenencSize(pos);
        return pos + 2 <= fill ? (bytes[pos] & 0xFF) | (bytes[pos + 1] & 0xFF) << 8 : otherwise;
    }

    /** The warning count of an OK packet (after its status flags), 0 when cut off. */
    int okWarnings() {
        int pos = 1;
        pos += lenencSize(pos);
        pos += lenencSize(pos);
        return pos + 4 <= fill ? u16(pos + 2) : 0;
    }

    /** The warning count of an EOF packet (header, warnings, status), 0 when cut off. */
    int eofWarnings() {
        return fill >= 3 ? u16(1) : 0;
    }

    /** Status flags of an EOF packet (header, warnings, status), or {@code otherwise}. */
    int eofStatus(int otherwise) {
        return fill >= 5 ? u16(3) : otherwise;
    }

    /**
     * The "metadata follows" byte after a column count (MARIADB_CLIENT_CACHE_METADATA). A count packet without it
     * (not sent by MariaDB once the capability is on) is read as one with its metadata.
     */
    boolean metadataFollows() {
        int at = lenencSize(0);
        return at >= fill || bytes[at] != 0;
    }

    /**
     * Overwrites bytes 1-4 of a COM_STMT_PREPARE_OK payload (the statement id) with {@code statementId}, for the
     * {@code n} bytes just copied from {@code buf} at {@code at} into this head (before {@link #fill} counts them).
     * Byte 0 has been copied by then (it comes first), so an ERR (whose bytes 1-4 are its code and SQLSTATE marker) is
     * left alone. The bytes are changed in the buffer being relayed: the client sees the new id without a copy.
     */
    void overwriteStatementId(ByteBuf buf, int at, int n, int statementId) {
        if ((bytes[0] & 0xFF) != Packets.OK_HEADER) {
            return;
        }
        for (int p = Math.max(1, fill); p < Math.min(5, fill + n); p++) {
            buf.setByte(at + p - fill, statementId >>> (8 * (p - 1)));
        }
    }
}
