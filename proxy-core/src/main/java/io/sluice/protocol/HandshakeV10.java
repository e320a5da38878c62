package io.sluice.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;

/**
 * The server's greeting, both ways: the one Sluice {@linkplain #write writes} to a client (protocol 10 with a 20-byte
 * nonce) and the one it {@linkplain #parse reads} from a backend. Sluice's own code in both directions: the protocol
 * library's greeting hard-codes a ShardingSphere version string, and clients must see the backend's; its parser reads
 * auth-plugin-data-part-1 up to a NUL rather than as 8 bytes and rejects any status word that is not exactly one flag.
 *
 * @param serverVersion the version string clients see
 * @param connectionId the connection's id: Sluice's for a client connection, the server's as {@code CONNECTION_ID()}
 *     reports it for a backend one
 * @param nonce the auth-plugin-data, 20 bytes from Sluice and from current servers, without its trailing NUL
 * @param capabilities the capability flags offered
 * @param collationId the default collation (character set) id
 * @param statusFlags server status flags
 * @param authPluginName the default authentication plugin; {@code null} in a parsed greeting without
 *     CLIENT_PLUGIN_AUTH (servers older than MySQL 5.5)
 * @param mariaDbCapabilities MariaDB extended capabilities, present only when CLIENT_LONG_PASSWORD is unset
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_handshake_v10.html">Protocol::HandshakeV10</a>
 */
public record HandshakeV10(String serverVersion, int connectionId, byte[] nonce, int capabilities, int collationId,
        int statusFlags, String authPluginName, int mariaDbCapabilities) {

    public static final int PROTOCOL_VERSION = 10;

    /** A greeting without MariaDB extended capabilities. */
    public HandshakeV10(String serverVersion, int connectionId, byte[] nonce, int capabilities, int collationId,
            int statusFlags, String authPluginName) {
        this(serverVersion, connectionId, nonce, capabilities, collationId, statusFlags, authPluginName, 0);
    }

    /** The length of auth-plugin-data-part-1, which every greeting carries whole. */
    private static final int NONCE_PART_1_LENGTH = 8;
    /** The least length of auth-plugin-data-part-2 on the wire, its trailing NUL included. */
    private static final int MIN_NONCE_PART_2_LENGTH = 13;

    /**
     * Parses a server's greeting from its payload (borrowed, not released; its reader index does not move).
     *
     * <p>Fields follow Protocol::HandshakeV10. A greeting may end after the lower capability flags (the protocol
     * allows it; servers since 4.1 never do): it then parses with collation, status and the upper flags zero, an
     * 8-byte nonce and no plugin. MariaDB's extended capabilities are read from the last 4 of the 10
     * reserved bytes, and only when the server leaves CLIENT_LONG_PASSWORD ("CLIENT_MYSQL") unset: a MySQL server
     * keeps those bytes zero.
     *
     * @throws ProtocolException when the payload is not a protocol 10 greeting or ends inside a field
     */
    public static HandshakeV10 parse(ByteBuf payload) {
        ByteBuf in = payload.duplicate();
        try {
            int protocol = in.readUnsignedByte();
            if (protocol != PROTOCOL_VERSION) {
                throw new ProtocolException("greeting protocol version: " + protocol + " (expected: 10)");
            }
            String serverVersion = readNulTerminated(in, "server version", StandardCharsets.UTF_8);
            int connectionId = in.readIntLE();
            byte[] part1 = new byte[NONCE_PART_1_LENGTH];
            in.readBytes(part1);
            in.skipBytes(1); // filler
            int capabilities = in.readUnsignedShortLE();
            if (!in.isReadable()) {
                return new HandshakeV10(serverVersion, connectionId, part1, capabilities, 0, 0, null, 0);
            }
            int collationId = in.readUnsignedByte();
            int statusFlags = in.readUnsignedShortLE();
            capabilities |= in.readUnsignedShortLE() << 16;
            int authPluginDataLength = in.readUnsignedByte();
            in.skipBytes(6); // reserved
            int reservedOrMariaDb = in.readIntLE();
            int mariaDbCapabilities = Capabilities.has(capabilities, Capabilities.CLIENT_LONG_PASSWORD)
                    ? 0 : reservedOrMariaDb;
            byte[] nonce = part1;
            if (Capabilities.has(capabilities, Capabilities.CLIENT_SECURE_CONNECTION)) {
                nonce = withPart2(part1, in, Math.max(MIN_NONCE_PART_2_LENGTH,
                        authPluginDataLength - NONCE_PART_1_LENGTH));
            }
            String authPluginName = null;
            if (Capabilities.has(capabilities, Capabilities.CLIENT_PLUGIN_AUTH)) {
                // MySQL before 5.5.10 (Bug#59453) ends the packet without the name's NUL: the name runs to the end.
                authPluginName = in.bytesBefore((byte) 0) < 0
                        ? in.readCharSequence(in.readableBytes(), StandardCharsets.US_ASCII).toString()
                        : readNulTerminated(in, "auth plugin name", StandardCharsets.US_ASCII);
            }
            return new HandshakeV10(serverVersion, connectionId, nonce, capabilities, collationId, statusFlags,
                    authPluginName, mariaDbCapabilities);
        } catch (IndexOutOfBoundsException e) {
            throw new ProtocolException("greeting: truncated after " + in.readerIndex() + " of "
                    + payload.readableBytes() + " bytes (expected: a whole HandshakeV10)");
        }
    }

    /** Part 1 followed by part 2, whose wire length is {@code length}, without part 2's trailing NUL. */
    private static byte[] withPart2(byte[] part1, ByteBuf in, int length) {
        byte[] part2 = new byte[length];
        in.readBytes(part2);
        int kept = part2[length - 1] == 0 ? length - 1 : length;
        byte[] nonce = new byte[part1.length + kept];
        System.arraycopy(part1, 0, nonce, 0, part1.length);
        System.arraycopy(part2, 0, nonce, part1.length, kept);
        return nonce;
    }

    private static String readNulTerminated(ByteBuf in, String field, Charset charset) {
        int length = in.bytesBefore((byte) 0);
        if (length < 0) {
            throw new ProtocolException("greeting " + field + ": no NUL terminator (expected: a NUL-terminated string)");
        }
        String value = in.readCharSequence(length, charset).toString();
        in.skipBytes(1);
        return value;
    }

    /** Writes the framed greeting (sequence id 0). The caller owns the returned buffer. */
    public ByteBuf write(ByteBufAllocator alloc) {
        byte[] version = serverVersion.getBytes(StandardCharsets.UTF_8);
        ByteBuf buf = Packets.startFrame(alloc, 80 + version.length);
        buf.writeByte(PROTOCOL_VERSION);
        buf.writeBytes(version).writeByte(0);
        buf.writeIntLE(connectionId);
        buf.writeBytes(nonce, 0, 8); // auth-plugin-data-part-1
        buf.writeByte(0); // filler
        buf.writeShortLE(capabilities & 0xFFFF);
        buf.writeByte(collationId);
        buf.writeShortLE(statusFlags);
        buf.writeShortLE(capabilities >>> 16);
        buf.writeByte(nonce.length + 1); // auth_plugin_data_len, counting the trailing NUL
        buf.writeZero(6); // reserved
        buf.writeIntLE(mariaDbCapabilities); // MariaDB's extended capabilities; zero (reserved) for MySQL
        buf.writeBytes(nonce, 8, nonce.length - 8).writeByte(0); // auth-plugin-data-part-2
        buf.writeBytes(authPluginName.getBytes(StandardCharsets.US_ASCII)).writeByte(0);
        return Packets.finishFrame(buf, 0);
    }
}
