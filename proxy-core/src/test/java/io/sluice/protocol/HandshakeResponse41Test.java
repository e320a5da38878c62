package io.sluice.protocol;

import static io.sluice.protocol.Capabilities.CLIENT_CONNECT_ATTRS;
import static io.sluice.protocol.Capabilities.CLIENT_CONNECT_WITH_DB;
import static io.sluice.protocol.Capabilities.CLIENT_DEPRECATE_EOF;
import static io.sluice.protocol.Capabilities.CLIENT_PLUGIN_AUTH;
import static io.sluice.protocol.Capabilities.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA;
import static io.sluice.protocol.Capabilities.CLIENT_PROTOCOL_41;
import static io.sluice.protocol.Capabilities.CLIENT_SECURE_CONNECTION;
import static io.sluice.protocol.Capabilities.CLIENT_SSL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

class HandshakeResponse41Test {
    private static final UnpooledByteBufAllocator ALLOC = new UnpooledByteBufAllocator(false);
    private static final int BASE = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_DEPRECATE_EOF;

    static Stream<HandshakeResponse41> responses() {
        byte[] native20 = Scramble.nativePassword("secret", Scramble.nonce());
        byte[] sha32 = Scramble.cachingSha2Password("secret", Scramble.nonce());
        return Stream.of(
                new HandshakeResponse41(BASE | CLIENT_PLUGIN_AUTH | CLIENT_CONNECT_WITH_DB, 1 << 24, 255, "app",
                        native20, "shop", Scramble.MYSQL_NATIVE_PASSWORD),
                new HandshakeResponse41(BASE | CLIENT_PLUGIN_AUTH | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA, 0x7FFF_FFFF,
                        45, "app", sha32, null, Scramble.CACHING_SHA2_PASSWORD),
                new HandshakeResponse41(BASE, 65536, 33, "old_client", native20, null, null),
                new HandshakeResponse41(BASE | CLIENT_PLUGIN_AUTH | CLIENT_CONNECT_WITH_DB, 1 << 24, 255, "nopass",
                        new byte[0], "db", Scramble.MYSQL_NATIVE_PASSWORD),
                new HandshakeResponse41(BASE | CLIENT_CONNECT_WITH_DB | CLIENT_PLUGIN_AUTH, 1 << 24, 224, "ünïcode",
                        sha32, "schéma", Scramble.CACHING_SHA2_PASSWORD));
    }

    private static HandshakeResponse41 roundTrip(HandshakeResponse41 response, int sequenceId) {
        ByteBuf frame = response.write(ALLOC, sequenceId);
        try {
            assertThat(frame.getUnsignedMediumLE(0)).isEqualTo(frame.readableBytes() - 4);
            assertThat(frame.getUnsignedByte(3)).isEqualTo((short) sequenceId);
            ByteBuf payload = frame.slice(4, frame.readableBytes() - 4);
            HandshakeResponse41 parsed = HandshakeResponse41.parse(payload);
            assertThat(payload.readerIndex()).as("parse borrows: the index stays").isZero();
            return parsed;
        } finally {
            frame.release();
        }
    }

    @ParameterizedTest
    @MethodSource("responses")
    void writeThenParseGivesTheSameResponse(HandshakeResponse41 response) {
        HandshakeResponse41 parsed = roundTrip(response, 1);

        assertThat(parsed.capabilities()).isEqualTo(response.capabilities());
        assertThat(parsed.maxPacketSize()).isEqualTo(response.maxPacketSize());
        assertThat(parsed.collationId()).isEqualTo(response.collationId());
        assertThat(parsed.user()).isEqualTo(response.user());
        assertThat(parsed.authResponse()).isEqualTo(response.authResponse());
        assertThat(parsed.database()).isEqualTo(response.database());
        assertThat(parsed.authPluginName()).isEqualTo(response.authPluginName());
    }

    @Test
    void leavesOutTheDatabaseAndPluginWhenTheirCapabilitiesAreOff() {
        HandshakeResponse41 response = new HandshakeResponse41(BASE, 1 << 24, 255, "app", new byte[20], "shop",
                Scramble.MYSQL_NATIVE_PASSWORD);

        HandshakeResponse41 parsed = roundTrip(response, 3);

        assertThat(parsed.database()).isNull();
        assertThat(parsed.authPluginName()).isNull();
    }

    @Test
    void writesTheFixedPartAtItsOffsets() {
        HandshakeResponse41 response = new HandshakeResponse41(BASE | CLIENT_PLUGIN_AUTH, 0x0100_0000, 0x21, "u",
                new byte[] {9, 8, 7}, null, "p");
        ByteBuf frame = response.write(ALLOC, 2);
        try {
            ByteBuf p = frame.slice(4, frame.readableBytes() - 4);
            assertThat(p.getIntLE(0)).isEqualTo(BASE | CLIENT_PLUGIN_AUTH);
            assertThat(p.getIntLE(4)).isEqualTo(0x0100_0000);
            assertThat(p.getUnsignedByte(8)).isEqualTo((short) 0x21);
            for (int i = 9; i < 32; i++) {
                assertThat(p.getByte(i)).as("filler byte %d", i).isZero();
            }
            byte[] rest = new byte[p.readableBytes() - 32];
            p.getBytes(32, rest);
            assertThat(rest).containsExactly('u', 0, 3, 9, 8, 7, 'p', 0);
        } finally {
            frame.release();
        }
    }

    /** A HandshakeResponse41 as a client writes it, connection attributes included. */
    @Test
    void parsesAClientResponseWithConnectionAttributes() {
        int caps = BASE | CLIENT_PLUGIN_AUTH | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | CLIENT_CONNECT_WITH_DB
                | CLIENT_CONNECT_ATTRS;
        byte[] auth = Scramble.nativePassword("pw", Scramble.nonce());
        ByteArrayOutputStream p = new ByteArrayOutputStream();
        int4(p, caps);
        int4(p, 16_777_216);
        p.write(255);
        p.writeBytes(new byte[23]);
        p.writeBytes("root\0".getBytes(StandardCharsets.UTF_8));
        p.write(auth.length);
        p.writeBytes(auth);
        p.writeBytes("test\0".getBytes(StandardCharsets.UTF_8));
        p.writeBytes("mysql_native_password\0".getBytes(StandardCharsets.UTF_8));
        byte[] attrs = "\u000c_client_name\u0008libmysql".getBytes(StandardCharsets.UTF_8);
        p.write(attrs.length);
        p.writeBytes(attrs);

        HandshakeResponse41 parsed = parse(p.toByteArray());

        assertThat(parsed.user()).isEqualTo("root");
        assertThat(parsed.authResponse()).isEqualTo(auth);
        assertThat(parsed.database()).isEqualTo("test");
        assertThat(parsed.authPluginName()).isEqualTo("mysql_native_password");
    }

    @Test
    void readsAnEmptyDatabaseAndPluginAsAbsent() {
        ByteArrayOutputStream p = fixedPart(BASE | CLIENT_CONNECT_WITH_DB | CLIENT_PLUGIN_AUTH);
        p.writeBytes("u\0".getBytes(StandardCharsets.UTF_8));
        p.write(0);
        p.writeBytes(new byte[] {0, 0});

        HandshakeResponse41 parsed = parse(p.toByteArray());

        assertThat(parsed.database()).isNull();
        assertThat(parsed.authPluginName()).isNull();
        assertThat(parsed.authResponse()).isEmpty();
    }

    @Test
    void rejectsAShortPayload() {
        assertThatThrownBy(() -> parse(new byte[31])).isInstanceOf(ProtocolException.class)
                .hasMessage("handshake response: 31 bytes (expected: >= 32)");
        assertThatThrownBy(() -> parse(new byte[0])).isInstanceOf(ProtocolException.class);
    }

    @Test
    void rejectsAResponseWithoutProtocol41() {
        ByteArrayOutputStream p = fixedPart(CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH);
        p.writeBytes("u\0\0".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(() -> parse(p.toByteArray())).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("CLIENT_PROTOCOL_41");
    }

    @Test
    void rejectsAnSslRequest() {
        byte[] sslRequest = fixedPart(BASE | CLIENT_SSL).toByteArray();
        assertThat(sslRequest).hasSize(HandshakeResponse41.SSL_REQUEST_LENGTH);

        assertThatThrownBy(() -> parse(sslRequest)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("SSLRequest");
    }

    @Test
    void rejectsAnAuthResponseLongerThanThePacket() {
        ByteArrayOutputStream p = fixedPart(BASE | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA);
        p.writeBytes("u\0".getBytes(StandardCharsets.UTF_8));
        p.writeBytes(new byte[] {(byte) 0xFC, 0x00, 0x10, 1, 2, 3}); // 4096 bytes announced, 3 sent

        assertThatThrownBy(() -> parse(p.toByteArray())).isInstanceOf(ProtocolException.class)
                .hasMessageStartingWith("handshake response: ");
    }

    /** A client can cut the packet right after the fixed part, or in the middle of the user name. */
    @Test
    void rejectsAUserNameWithoutItsNul() {
        byte[] justTheFixedPart = fixedPart(BASE).toByteArray();
        ByteArrayOutputStream cut = fixedPart(BASE);
        cut.writeBytes("roo".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(() -> parse(justTheFixedPart)).isInstanceOf(ProtocolException.class);
        assertThatThrownBy(() -> parse(cut.toByteArray())).isInstanceOf(ProtocolException.class);
    }

    /** A length-encoded auth response whose 8-byte length is negative as an int must not reach an allocation. */
    @Test
    void rejectsANegativeLengthEncodedAuthResponse() {
        ByteArrayOutputStream p = fixedPart(BASE | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA);
        p.writeBytes("u\0".getBytes(StandardCharsets.UTF_8));
        p.write(0xFE);
        p.writeBytes(new byte[] {-1, -1, -1, -1, -1, -1, -1, -1});

        assertThatThrownBy(() -> parse(p.toByteArray())).isInstanceOf(ProtocolException.class);
    }

    /** Nor a length the packet cannot hold: the parser must not allocate what the client announces. */
    @Test
    void rejectsAHugeLengthEncodedAuthResponseWithoutAllocatingIt() {
        ByteArrayOutputStream p = fixedPart(BASE | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA);
        p.writeBytes("u\0".getBytes(StandardCharsets.UTF_8));
        p.write(0xFE);
        p.writeBytes(new byte[] {-1, -1, -1, 0x7F, 0, 0, 0, 0}); // Integer.MAX_VALUE

        assertThatThrownBy(() -> parse(p.toByteArray())).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("2147483647 bytes");
    }

    @Test
    void rejectsADatabaseWithoutItsNul() {
        ByteArrayOutputStream p = fixedPart(BASE | CLIENT_CONNECT_WITH_DB);
        p.writeBytes("u\0".getBytes(StandardCharsets.UTF_8));
        p.write(0);
        p.writeBytes("sho".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(() -> parse(p.toByteArray())).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("truncated");
    }

    @Test
    void toStringLeavesOutTheAuthResponse() {
        HandshakeResponse41 response = new HandshakeResponse41(BASE, 0, 0, "app", new byte[] {1, 2}, "db", "plugin");

        assertThat(response.toString()).contains("app", "db", "plugin").doesNotContain("[1, 2]", "authResponse");
    }

    private static HandshakeResponse41 parse(byte[] payload) {
        ByteBuf buf = Unpooled.wrappedBuffer(payload);
        try {
            return HandshakeResponse41.parse(buf);
        } finally {
            buf.release();
        }
    }

    private static ByteArrayOutputStream fixedPart(int caps) {
        ByteArrayOutputStream p = new ByteArrayOutputStream();
        int4(p, caps);
        int4(p, 1 << 24);
        p.write(255);
        p.writeBytes(new byte[23]);
        return p;
    }

    private static void int4(ByteArrayOutputStream p, int v) {
        p.write(v);
        p.write(v >>> 8);
        p.write(v >>> 16);
        p.write(v >>> 24);
    }
}
