package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Checks the greeting byte by byte against Protocol::HandshakeV10, read here as a client reads it.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_handshake_v10.html">Protocol::HandshakeV10</a>
 */
class HandshakeV10Test {
    private static final UnpooledByteBufAllocator ALLOC = new UnpooledByteBufAllocator(false);

    /** The greeting as a client parses it. */
    record Parsed(int sequenceId, int protocol, String version, long connectionId, byte[] part1, int filler,
            int capabilities, int collation, int status, int authDataLength, byte[] reserved, byte[] part2,
            String plugin, int trailing) {
    }

    private static Parsed writeAndParse(HandshakeV10 greeting) {
        ByteBuf buf = greeting.write(ALLOC);
        try {
            int length = buf.readUnsignedMediumLE();
            int sequenceId = buf.readUnsignedByte();
            assertThat(length).as("header length").isEqualTo(buf.readableBytes());
            int protocol = buf.readUnsignedByte();
            String version = readNul(buf);
            long connectionId = buf.readUnsignedIntLE();
            byte[] part1 = new byte[8];
            buf.readBytes(part1);
            int filler = buf.readUnsignedByte();
            int capsLow = buf.readUnsignedShortLE();
            int collation = buf.readUnsignedByte();
            int status = buf.readUnsignedShortLE();
            int capsHigh = buf.readUnsignedShortLE();
            int authDataLength = buf.readUnsignedByte();
            byte[] reserved = new byte[10];
            buf.readBytes(reserved);
            // auth-plugin-data-part-2: $len = MAX(13, auth_plugin_data_len - 8), the last byte a NUL
            byte[] part2 = new byte[Math.max(13, authDataLength - 8)];
            buf.readBytes(part2);
            String plugin = readNul(buf);
            return new Parsed(sequenceId, protocol, version, connectionId, part1, filler, capsHigh << 16 | capsLow,
                    collation, status, authDataLength, reserved, part2, plugin, buf.readableBytes());
        } finally {
            buf.release();
        }
    }

    private static String readNul(ByteBuf buf) {
        int nul = buf.indexOf(buf.readerIndex(), buf.writerIndex(), (byte) 0);
        assertThat(nul).as("NUL terminator").isNotNegative();
        String s = buf.toString(buf.readerIndex(), nul - buf.readerIndex(), StandardCharsets.UTF_8);
        buf.readerIndex(nul + 1);
        return s;
    }

    @Test
    void writesTheLayoutOfProtocolHandshakeV10() {
        byte[] nonce = Scramble.nonce();
        int caps = Capabilities.PROXY_SUPPORTED;
        HandshakeV10 greeting = new HandshakeV10("8.0.36-sluice", 0x01020304, nonce, caps, 255, 0x0002,
                Scramble.CACHING_SHA2_PASSWORD);

        Parsed p = writeAndParse(greeting);

        assertThat(p.sequenceId()).isZero();
        assertThat(p.protocol()).isEqualTo(10).isEqualTo(HandshakeV10.PROTOCOL_VERSION);
        assertThat(p.version()).isEqualTo("8.0.36-sluice");
        assertThat(p.connectionId()).isEqualTo(0x01020304);
        assertThat(p.part1()).isEqualTo(Arrays.copyOfRange(nonce, 0, 8));
        assertThat(p.filler()).isZero();
        assertThat(p.capabilities()).isEqualTo(caps);
        assertThat(p.collation()).isEqualTo(255);
        assertThat(p.status()).isEqualTo(0x0002);
        assertThat(p.authDataLength()).isEqualTo(21);
        assertThat(p.reserved()).containsOnly(0);
        assertThat(p.part2()).hasSize(13);
        assertThat(Arrays.copyOfRange(p.part2(), 0, 12)).isEqualTo(Arrays.copyOfRange(nonce, 8, 20));
        assertThat(p.part2()[12]).isZero();
        assertThat(p.plugin()).isEqualTo("caching_sha2_password");
        assertThat(p.trailing()).isZero();
    }

    @Test
    void splitsCapabilitiesIntoTheirLowerAndUpperHalves() {
        int caps = Capabilities.CLIENT_PROTOCOL_41 | Capabilities.CLIENT_PLUGIN_AUTH | Capabilities.CLIENT_DEPRECATE_EOF
                | Capabilities.CLIENT_SECURE_CONNECTION | Capabilities.CLIENT_LONG_PASSWORD;
        HandshakeV10 greeting = new HandshakeV10("5.7.44", 7, Scramble.nonce(), caps, 33, 0, "mysql_native_password");

        Parsed p = writeAndParse(greeting);

        assertThat(p.capabilities()).isEqualTo(caps);
        assertThat(p.capabilities() & 0xFFFF).isEqualTo(caps & 0xFFFF);
        assertThat(p.capabilities() >>> 16).isEqualTo(caps >>> 16).isNotZero();
        assertThat(p.plugin()).isEqualTo("mysql_native_password");
    }

    @Test
    void writesAnUnsignedConnectionIdAndAUtf8Version() {
        HandshakeV10 greeting = new HandshakeV10("10.11.6-MariaDB-ü", -2, Scramble.nonce(),
                Capabilities.PROXY_SUPPORTED, 45, 0x4002, Scramble.MYSQL_NATIVE_PASSWORD);

        Parsed p = writeAndParse(greeting);

        assertThat(p.connectionId()).isEqualTo(0xFFFF_FFFEL);
        assertThat(p.version()).isEqualTo("10.11.6-MariaDB-ü");
        assertThat(p.status()).isEqualTo(0x4002);
        assertThat(p.collation()).isEqualTo(45);
    }
}
