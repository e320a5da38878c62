package io.sluice.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import org.apache.shardingsphere.db.protocol.mysql.packet.MySQLPacket;
import org.apache.shardingsphere.db.protocol.mysql.packet.generic.MySQLErrPacket;
import org.apache.shardingsphere.db.protocol.mysql.packet.generic.MySQLOKPacket;
import org.apache.shardingsphere.db.protocol.mysql.payload.MySQLPacketPayload;

/**
 * Framing of MySQL packets: a 3-byte little-endian payload length, a 1-byte sequence id, then the payload.
 * Packets Sluice writes itself are small and written once per connection or per error; the relay never builds
 * packets.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_packets.html">MySQL packets</a>
 */
public final class Packets {
    /** Bytes in a packet header. */
    public static final int HEADER_SIZE = 4;
    /** The largest payload one frame carries; a frame this long is continued by the next one. */
    public static final int MAX_PAYLOAD = 0xFFFFFF;

    public static final int OK_HEADER = 0x00;
    public static final int EOF_HEADER = 0xFE;
    public static final int ERR_HEADER = 0xFF;
    public static final int LOCAL_INFILE_HEADER = 0xFB;

    private Packets() {
    }

    /** Payload length from the header at {@code index}. */
    public static int payloadLength(ByteBuf buf, int index) {
        return buf.getUnsignedMediumLE(index);
    }

    /** Sequence id from the header at {@code index}. */
    public static int sequenceId(ByteBuf buf, int index) {
        return buf.getUnsignedByte(index + 3);
    }

    /**
     * Frames a packet written by one of the protocol library's packet classes. The header is written as a
     * placeholder and patched once the payload length is known, so no second buffer is needed.
     *
     * @return a new buffer owned by the caller
     */
    public static ByteBuf frame(ByteBufAllocator alloc, int sequenceId, MySQLPacket packet) {
        ByteBuf buf = alloc.ioBuffer();
        buf.writeZero(HEADER_SIZE);
        packet.write(new MySQLPacketPayload(buf, StandardCharsets.UTF_8));
        return finishFrame(buf, sequenceId);
    }

    /** Starts a frame: allocates a buffer and reserves the header. Finish it with {@link #finishFrame}. */
    public static ByteBuf startFrame(ByteBufAllocator alloc, int sizeHint) {
        ByteBuf buf = alloc.ioBuffer(HEADER_SIZE + sizeHint);
        buf.writeZero(HEADER_SIZE);
        return buf;
    }

    /** Patches the header of a buffer begun with {@link #startFrame}. Payloads must stay below 16 MiB. */
    public static ByteBuf finishFrame(ByteBuf buf, int sequenceId) {
        int payload = buf.writerIndex() - buf.readerIndex() - HEADER_SIZE;
        if (payload >= MAX_PAYLOAD) {
            buf.release();
            throw new IllegalArgumentException("payload: " + payload + " (expected: < " + MAX_PAYLOAD + ")");
        }
        buf.setMediumLE(buf.readerIndex(), payload);
        buf.setByte(buf.readerIndex() + 3, sequenceId);
        return buf;
    }

    /** An ERR packet of one of Sluice's own errors. */
    public static ByteBuf err(ByteBufAllocator alloc, int sequenceId, ErrorCode error, String message) {
        return frame(alloc, sequenceId, new MySQLErrPacket(new SQLException(message, error.sqlState(), error.code())));
    }

    /** An ERR packet with a code and state from elsewhere (a backend's error, re-sequenced for the client). */
    public static ByteBuf err(ByteBufAllocator alloc, int sequenceId, int code, String sqlState, String message) {
        return frame(alloc, sequenceId, new MySQLErrPacket(new SQLException(message, sqlState, code)));
    }

    /** An OK packet with no affected rows, as sent at the end of authentication. */
    public static ByteBuf ok(ByteBufAllocator alloc, int sequenceId, int statusFlags) {
        return frame(alloc, sequenceId, new MySQLOKPacket(0, 0, statusFlags, 0, ""));
    }

    /** A command packet: one command byte and an argument (a SQL text or a schema name). */
    public static ByteBuf command(ByteBufAllocator alloc, int command, String argument) {
        return command(alloc, command, argument, StandardCharsets.UTF_8);
    }

    /** A command packet whose argument is encoded in {@code charset} (a client's text read a byte per character). */
    public static ByteBuf command(ByteBufAllocator alloc, int command, String argument, Charset charset) {
        byte[] bytes = argument == null ? new byte[0] : argument.getBytes(charset);
        ByteBuf buf = startFrame(alloc, 1 + bytes.length);
        buf.writeByte(command);
        buf.writeBytes(bytes);
        return finishFrame(buf, 0);
    }

    /** The payload of a whole frame, as a slice (borrowed: not retained, indexes of {@code frame} untouched). */
    public static ByteBuf payload(ByteBuf frame) {
        return frame.slice(frame.readerIndex() + HEADER_SIZE, frame.readableBytes() - HEADER_SIZE);
    }

    /** Whether a payload is an ERR packet. */
    public static boolean isErr(ByteBuf payload) {
        return payload.isReadable() && payload.getUnsignedByte(payload.readerIndex()) == ERR_HEADER;
    }

    /**
     * Parses an ERR packet's payload (borrowed, not released): 0xFF, the error code (2 bytes), then {@code '#'} and a
     * 5-character SQLSTATE, then the message. The marker and SQLSTATE are missing from an ERR a server sends before
     * the handshake (MariaDB's "Too many connections" in place of a greeting) and from one to a client without
     * CLIENT_PROTOCOL_41: the SQLSTATE is then the one that goes with the code ({@link ErrorCode#sqlStateOf}).
     *
     * @return the error code, SQLSTATE and message
     * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_basic_err_packet.html">ERR_Packet</a>
     */
    public static BackendError parseErr(ByteBuf payload) {
        int start = payload.readerIndex();
        int length = payload.readableBytes();
        if (length < 3) {
            return new BackendError(0, "HY000", "");
        }
        int code = payload.getUnsignedShortLE(start + 1);
        if (length >= 9 && payload.getByte(start + 3) == '#') {
            String sqlState = payload.toString(start + 4, 5, StandardCharsets.US_ASCII);
            return new BackendError(code, sqlState, payload.toString(start + 9, length - 9, StandardCharsets.UTF_8));
        }
        return new BackendError(code, ErrorCode.sqlStateOf(code),
                payload.toString(start + 3, length - 3, StandardCharsets.UTF_8));
    }

    /**
     * Reads a length-encoded integer.
     *
     * @return the value, or -1 for the NULL marker 0xFB
     */
    public static long readLenenc(ByteBuf buf) {
        int first = buf.readUnsignedByte();
        if (first < 0xFB) {
            return first;
        }
        switch (first) {
            case 0xFB:
                return -1;
            case 0xFC:
                return buf.readUnsignedShortLE();
            case 0xFD:
                return buf.readUnsignedMediumLE();
            case 0xFE:
                return buf.readLongLE();
            default:
                throw new ProtocolException("lenenc: 0xff (expected: a length-encoded integer)");
        }
    }

    /** Reads a length-encoded string; {@code null} for SQL NULL. */
    public static String readLenencString(ByteBuf buf) {
        long length = readLenenc(buf);
        if (length < 0) {
            return null;
        }
        String value = buf.toString(buf.readerIndex(), (int) length, StandardCharsets.UTF_8);
        buf.skipBytes((int) length);
        return value;
    }

    /** An error a backend answered with. */
    public record BackendError(int code, String sqlState, String message) {
        @Override
        public String toString() {
            return code + " (" + sqlState + "): " + message;
        }
    }
}
