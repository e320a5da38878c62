package io.sluice.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * The greeting Sluice sends a client: protocol 10 with a 20-byte nonce. Written by Sluice rather than the protocol
 * library because the library's greeting hard-codes a ShardingSphere version string, and clients must see the
 * backend's.
 *
 * @param serverVersion the version string clients see
 * @param connectionId Sluice's id for the client connection
 * @param nonce 20 bytes of auth-plugin-data
 * @param capabilities the capability flags offered
 * @param collationId the default collation (character set) id
 * @param statusFlags server status flags
 * @param authPluginName the default authentication plugin
 * @param mariaDbCapabilities MariaDB extended capabilities, sent only when CLIENT_LONG_PASSWORD is unset
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

    /**
     * Reads MariaDB's extended capabilities from a greeting's payload (borrowed): the last 4 of the 10 reserved
     * bytes, meaningful only when the server leaves CLIENT_LONG_PASSWORD ("CLIENT_MYSQL") unset.
     */
    public static int mariaDbCapabilities(ByteBuf payload, int capabilities) {
        if (Capabilities.has(capabilities, Capabilities.CLIENT_LONG_PASSWORD)) {
            return 0;
        }
        int versionEnd = payload.indexOf(payload.readerIndex() + 1, payload.writerIndex(), (byte) 0);
        // version NUL, connection id 4, nonce part 1 8, filler 1, caps 2, charset 1, status 2, caps 2, length 1, 6
        int offset = versionEnd + 1 + 4 + 8 + 1 + 2 + 1 + 2 + 2 + 1 + 6;
        return versionEnd < 0 || offset + 4 > payload.writerIndex() ? 0 : payload.getIntLE(offset);
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
