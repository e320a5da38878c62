package io.sluice.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;
import org.apache.shardingsphere.db.protocol.mysql.packet.handshake.MySQLHandshakeResponse41Packet;
import org.apache.shardingsphere.db.protocol.mysql.payload.MySQLPacketPayload;

/**
 * The client's answer to the greeting. Sluice reads it from clients with the protocol library's parser and writes it
 * to backends itself: the library's writer turns the binary auth response into a {@code String}, which corrupts
 * scrambles.
 *
 * @param capabilities the client's capability flags
 * @param maxPacketSize the largest packet the client accepts
 * @param collationId the client's character set (collation id)
 * @param user the user name
 * @param authResponse the scrambled password
 * @param database the schema the client asks for, or {@code null}
 * @param authPluginName the plugin that produced {@code authResponse}, or {@code null} if the client has none
 * @param mariaDbCapabilities MariaDB extended capabilities (0 when CLIENT_LONG_PASSWORD is set)
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_handshake_response.html">Protocol::HandshakeResponse41</a>
 */
public record HandshakeResponse41(int capabilities, int maxPacketSize, int collationId, String user,
        byte[] authResponse, String database, String authPluginName, int mariaDbCapabilities) {

    /** A response without MariaDB extended capabilities. */
    public HandshakeResponse41(int capabilities, int maxPacketSize, int collationId, String user,
            byte[] authResponse, String database, String authPluginName) {
        this(capabilities, maxPacketSize, collationId, user, authResponse, database, authPluginName, 0);
    }

    /** Offset of MariaDB's extended capabilities: the last 4 bytes of the 23-byte filler. */
    private static final int MARIADB_CAPABILITIES_OFFSET = 28;

    /** The length of an SSLRequest: the first 32 bytes of a HandshakeResponse41 with CLIENT_SSL set. */
    public static final int SSL_REQUEST_LENGTH = 32;

    /**
     * Parses the payload (borrowed, not released).
     *
     * @throws ProtocolException when the payload is not a HandshakeResponse41
     */
    public static HandshakeResponse41 parse(ByteBuf payload) {
        if (payload.readableBytes() < SSL_REQUEST_LENGTH) {
            throw new ProtocolException("handshake response: " + payload.readableBytes()
                    + " bytes (expected: >= " + SSL_REQUEST_LENGTH + ")");
        }
        int capabilities = payload.getIntLE(payload.readerIndex());
        if (!Capabilities.has(capabilities, Capabilities.CLIENT_PROTOCOL_41)) {
            throw new ProtocolException("client capabilities: CLIENT_PROTOCOL_41 missing (expected: protocol 4.1)");
        }
        if (Capabilities.has(capabilities, Capabilities.CLIENT_SSL) && payload.readableBytes() == SSL_REQUEST_LENGTH) {
            throw new ProtocolException("SSLRequest: TLS is not enabled on this listener (expected: a plain handshake)");
        }
        checkAuthResponseFits(payload, capabilities);
        try {
            MySQLHandshakeResponse41Packet packet = new MySQLHandshakeResponse41Packet(
                    new MySQLPacketPayload(payload.duplicate(), StandardCharsets.UTF_8));
            String database = packet.getDatabase();
            String plugin = packet.getAuthPluginName();
            int mariaDb = Capabilities.has(capabilities, Capabilities.CLIENT_LONG_PASSWORD) ? 0
                    : payload.getIntLE(payload.readerIndex() + MARIADB_CAPABILITIES_OFFSET);
            return new HandshakeResponse41(packet.getCapabilityFlags(), packet.getMaxPacketSize(),
                    packet.getCharacterSet(), packet.getUsername(), packet.getAuthResponse(),
                    database == null || database.isEmpty() ? null : database,
                    plugin == null || plugin.isEmpty() ? null : plugin, mariaDb);
        } catch (IndexOutOfBoundsException | NegativeArraySizeException e) {
            // the library reads a missing NUL as length -1
            throw new ProtocolException("handshake response: truncated (expected: HandshakeResponse41)");
        }
    }

    /**
     * Checks that the user name is NUL-terminated and that the auth response's announced length fits in the packet,
     * before the library allocates an array of that length: the client is not authenticated yet, and a length-encoded
     * integer may announce up to 2^64 bytes.
     */
    private static void checkAuthResponseFits(ByteBuf payload, int capabilities) {
        int end = payload.writerIndex();
        int userEnd = payload.indexOf(payload.readerIndex() + SSL_REQUEST_LENGTH, end, (byte) 0);
        if (userEnd < 0) {
            throw new ProtocolException("handshake response: truncated (expected: a NUL-terminated user name)");
        }
        int pos = userEnd + 1;
        long length;
        if (Capabilities.has(capabilities, Capabilities.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)) {
            if (pos >= end) {
                throw new ProtocolException("handshake response: truncated (expected: an auth response length)");
            }
            int first = payload.getUnsignedByte(pos);
            int size = first < 0xFB ? 1 : first == 0xFC ? 3 : first == 0xFD ? 4 : first == 0xFE ? 9 : -1;
            if (size < 0 || pos + size > end) {
                throw new ProtocolException("handshake response: bad auth response length (expected: a lenenc)");
            }
            length = first < 0xFB ? first : size == 3 ? payload.getUnsignedShortLE(pos + 1)
                    : size == 4 ? payload.getUnsignedMediumLE(pos + 1) : payload.getLongLE(pos + 1);
            pos += size;
        } else if (Capabilities.has(capabilities, Capabilities.CLIENT_SECURE_CONNECTION)) {
            if (pos >= end) {
                throw new ProtocolException("handshake response: truncated (expected: an auth response length)");
            }
            length = payload.getUnsignedByte(pos++);
        } else {
            return; // NUL-terminated: the library reads no further than the packet
        }
        if (length < 0 || length > end - pos) {
            throw new ProtocolException("handshake response: auth response of " + Long.toUnsignedString(length)
                    + " bytes (expected: <= " + (end - pos) + ", the rest of the packet)");
        }
    }

    /** Writes this response, framed with {@code sequenceId}, for a backend. The caller owns the buffer. */
    public ByteBuf write(ByteBufAllocator alloc, int sequenceId) {
        byte[] userBytes = user.getBytes(StandardCharsets.UTF_8);
        byte[] dbBytes = database == null ? null : database.getBytes(StandardCharsets.UTF_8);
        ByteBuf buf = Packets.startFrame(alloc, 64 + userBytes.length + authResponse.length
                + (dbBytes == null ? 0 : dbBytes.length));
        buf.writeIntLE(capabilities);
        buf.writeIntLE(maxPacketSize);
        buf.writeByte(collationId);
        buf.writeZero(19);
        buf.writeIntLE(mariaDbCapabilities); // zero unless both sides speak MariaDB's extended capabilities
        buf.writeBytes(userBytes).writeByte(0);
        // Scrambles are 20 or 32 bytes: a one-byte length serves both CLIENT_SECURE_CONNECTION and lenenc.
        buf.writeByte(authResponse.length);
        buf.writeBytes(authResponse);
        if (dbBytes != null && Capabilities.has(capabilities, Capabilities.CLIENT_CONNECT_WITH_DB)) {
            buf.writeBytes(dbBytes).writeByte(0);
        }
        if (authPluginName != null && Capabilities.has(capabilities, Capabilities.CLIENT_PLUGIN_AUTH)) {
            buf.writeBytes(authPluginName.getBytes(StandardCharsets.US_ASCII)).writeByte(0);
        }
        return Packets.finishFrame(buf, sequenceId);
    }

    @Override
    public String toString() {
        return "HandshakeResponse41[user=" + user + ", database=" + database + ", plugin=" + authPluginName + "]";
    }
}
