package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.sluice.testing.TestMariaDb;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Reads a backend's greeting as Sluice does before it logs in: first the real bytes of the tests' MariaDB, checked
 * against what the same server reports over SQL and by logging in with the parsed nonce; then greetings written
 * byte by byte for the cases that server cannot show (MySQL, older servers, truncation).
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_connection_phase_packets_protocol_handshake_v10.html">Protocol::HandshakeV10</a>
 */
@Tag("server")
class HandshakeV10ParseTest {
    private static final UnpooledByteBufAllocator ALLOC = new UnpooledByteBufAllocator(false);
    private static final String USER = "sluice_greeting";
    private static final String PASSWORD = "greeting-Secret-1";
    private static final int MYSQL_8_CAPABILITIES = 0xDFFFFFFF; // what MySQL 8.0 offers, CLIENT_LONG_PASSWORD with it

    @Test
    void readsTheServersGreetingAsTheServerDescribesItself() throws Exception {
        TestMariaDb server = TestMariaDb.get();
        server.ensureUser(USER, PASSWORD);
        try (Socket socket = new Socket(); Connection sql = server.rootConnection()) {
            socket.connect(new InetSocketAddress(server.host(), server.port()), 5_000);
            socket.setSoTimeout(15_000);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            byte[] payload = readPayload(in);
            ByteBuf buf = Unpooled.wrappedBuffer(payload);

            HandshakeV10 greeting = HandshakeV10.parse(buf);

            assertThat(buf.readerIndex()).as("parse borrows: the index stays").isZero();
            // MariaDB before 11.3 prefixes "5.5.5-" so that MySQL 5.x clients do not take it for MySQL 10.
            assertThat(greeting.serverVersion()).endsWith(queryString(sql, "SELECT VERSION()"));
            assertThat(queryString(sql, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = "
                    + Integer.toUnsignedString(greeting.connectionId()))).as("the connection id names this socket")
                    .isEqualTo("1");
            assertThat(greeting.collationId()).as("the low byte of the server's default collation")
                    .isEqualTo(Integer.parseInt(queryString(sql, "SELECT ID FROM information_schema.COLLATIONS"
                            + " WHERE COLLATION_NAME = @@global.collation_server")) & 0xFF);
            assertThat(Capabilities.has(greeting.statusFlags(), ServerStatus.SERVER_STATUS_AUTOCOMMIT))
                    .isEqualTo("1".equals(queryString(sql, "SELECT @@global.autocommit")));
            assertThat(greeting.capabilities()).matches(caps -> Capabilities.has(caps, Capabilities.CLIENT_PROTOCOL_41)
                    && Capabilities.has(caps, Capabilities.CLIENT_SECURE_CONNECTION)
                    && Capabilities.has(caps, Capabilities.CLIENT_PLUGIN_AUTH), "protocol 4.1 with plugin auth");
            // MariaDB leaves CLIENT_MYSQL unset and sends its extended capabilities; 10.6+ caches metadata.
            assertThat(Capabilities.has(greeting.capabilities(), Capabilities.CLIENT_LONG_PASSWORD)).isFalse();
            assertThat(greeting.mariaDbCapabilities()).matches(caps -> (caps & Capabilities.MARIADB_PROXY_SUPPORTED)
                    == Capabilities.MARIADB_PROXY_SUPPORTED, "extended and cached metadata");
            assertThat(greeting.authPluginName()).isEqualTo(Scramble.MYSQL_NATIVE_PASSWORD);
            assertThat(greeting.nonce()).hasSize(Scramble.NONCE_LENGTH);

            // The nonce is right only if the server accepts a scramble made from it.
            int capabilities = Capabilities.CLIENT_LONG_PASSWORD | Capabilities.CLIENT_PROTOCOL_41
                    | Capabilities.CLIENT_SECURE_CONNECTION | Capabilities.CLIENT_PLUGIN_AUTH;
            ByteBuf response = new HandshakeResponse41(capabilities, 1 << 24, 45, USER,
                    Scramble.nativePassword(PASSWORD, greeting.nonce()), null, Scramble.MYSQL_NATIVE_PASSWORD)
                    .write(ALLOC, 1);
            try {
                byte[] frame = new byte[response.readableBytes()];
                response.readBytes(frame);
                socket.getOutputStream().write(frame);
            } finally {
                response.release();
            }
            byte[] reply = readPayload(in);
            assertThat(reply[0] & 0xFF).as("login with the parsed nonce: %s",
                    new String(reply, StandardCharsets.UTF_8)).isEqualTo(Packets.OK_HEADER);
        }
    }

    @Test
    void readsAMySqlGreetingWithoutMariaDbCapabilities() {
        byte[] nonce = nonce();
        // Status 0: autocommit off. The protocol library refused any status word that is not exactly one flag.
        HandshakeV10 written = new HandshakeV10("8.4.3", 0x8000_0001, nonce, MYSQL_8_CAPABILITIES, 255, 0,
                Scramble.CACHING_SHA2_PASSWORD, 0x1C);

        HandshakeV10 parsed = HandshakeV10.parse(payloadOf(written));

        assertThat(parsed.serverVersion()).isEqualTo("8.4.3");
        assertThat(parsed.connectionId()).isEqualTo(0x8000_0001);
        assertThat(parsed.nonce()).isEqualTo(nonce);
        assertThat(parsed.capabilities()).isEqualTo(MYSQL_8_CAPABILITIES);
        assertThat(parsed.collationId()).isEqualTo(255);
        assertThat(parsed.statusFlags()).isZero();
        assertThat(parsed.authPluginName()).isEqualTo(Scramble.CACHING_SHA2_PASSWORD);
        assertThat(parsed.mariaDbCapabilities()).as("reserved bytes, since CLIENT_MYSQL is set").isZero();
    }

    @Test
    void keepsNulBytesInsideTheNonceAndCombinedStatusFlags() {
        byte[] nonce = nonce();
        nonce[3] = 0; // auth-plugin-data-part-1 is 8 bytes, not a string
        int capabilities = Capabilities.PROXY_SUPPORTED & ~Capabilities.CLIENT_LONG_PASSWORD;
        int status = ServerStatus.SERVER_STATUS_AUTOCOMMIT | ServerStatus.SERVER_SESSION_STATE_CHANGED;

        HandshakeV10 parsed = HandshakeV10.parse(payloadOf(new HandshakeV10("5.5.5-10.11.19-MariaDB", 42, nonce,
                capabilities, 45, status, Scramble.MYSQL_NATIVE_PASSWORD, Capabilities.MARIADB_PROXY_SUPPORTED)));

        assertThat(parsed.nonce()).isEqualTo(nonce);
        assertThat(parsed.statusFlags()).isEqualTo(status);
        assertThat(parsed.mariaDbCapabilities()).isEqualTo(Capabilities.MARIADB_PROXY_SUPPORTED);
    }

    @Test
    void readsAPluginNameThatRunsToTheEndOfThePacket() {
        ByteBuf payload = payloadOf(new HandshakeV10("5.5.9", 1, nonce(), MYSQL_8_CAPABILITIES, 8, 2,
                Scramble.MYSQL_NATIVE_PASSWORD));
        ByteBuf withoutFinalNul = payload.slice(0, payload.readableBytes() - 1); // MySQL before 5.5.10, Bug#59453

        assertThat(HandshakeV10.parse(withoutFinalNul).authPluginName()).isEqualTo(Scramble.MYSQL_NATIVE_PASSWORD);
    }

    @Test
    void readsAGreetingThatEndsAfterTheLowerCapabilityFlags() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(10);
        out.writeBytes("4.0.30\0".getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(new byte[] {7, 0, 0, 0}); // connection id
        out.writeBytes(Arrays.copyOf(nonce(), 8));
        out.write(0); // filler
        out.writeBytes(new byte[] {(byte) 0x2C, (byte) 0x82}); // CLIENT_SECURE_CONNECTION among the lower flags

        HandshakeV10 parsed = HandshakeV10.parse(Unpooled.wrappedBuffer(out.toByteArray()));

        assertThat(parsed.serverVersion()).isEqualTo("4.0.30");
        assertThat(parsed.connectionId()).isEqualTo(7);
        assertThat(parsed.nonce()).isEqualTo(Arrays.copyOf(nonce(), 8));
        assertThat(parsed.capabilities()).isEqualTo(0x822C);
        assertThat(parsed.collationId()).isZero();
        assertThat(parsed.authPluginName()).isNull();
        assertThat(parsed.mariaDbCapabilities()).isZero();
    }

    @Test
    void refusesWhatIsNotAWholeProtocol10Greeting() {
        ByteBuf whole = payloadOf(new HandshakeV10("8.4.3", 1, nonce(), MYSQL_8_CAPABILITIES, 255, 2,
                Scramble.CACHING_SHA2_PASSWORD));

        assertThatThrownBy(() -> HandshakeV10.parse(Unpooled.wrappedBuffer(new byte[] {9, '3', '.', '2', 0})))
                .isInstanceOf(ProtocolException.class).hasMessage("greeting protocol version: 9 (expected: 10)");
        assertThatThrownBy(() -> HandshakeV10.parse(whole.slice(0, 1 + "8.4.3".length())))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("server version: no NUL terminator");
        assertThatThrownBy(() -> HandshakeV10.parse(whole.slice(0, 40))) // inside auth-plugin-data-part-2
                .isInstanceOf(ProtocolException.class).hasMessageContaining("greeting: truncated");
        assertThatThrownBy(() -> HandshakeV10.parse(Unpooled.EMPTY_BUFFER))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("greeting: truncated");
    }

    /** 20 bytes without NUL, as servers generate them. */
    private static byte[] nonce() {
        byte[] nonce = new byte[Scramble.NONCE_LENGTH];
        for (int i = 0; i < nonce.length; i++) {
            nonce[i] = (byte) ('A' + i);
        }
        return nonce;
    }

    /** The payload of {@code greeting} as Sluice writes it, without the frame header. */
    private static ByteBuf payloadOf(HandshakeV10 greeting) {
        ByteBuf frame = greeting.write(ALLOC);
        try {
            byte[] payload = new byte[frame.readableBytes() - Packets.HEADER_SIZE];
            frame.getBytes(Packets.HEADER_SIZE, payload);
            return Unpooled.wrappedBuffer(payload);
        } finally {
            frame.release();
        }
    }

    private static byte[] readPayload(DataInputStream in) throws IOException {
        byte[] header = new byte[Packets.HEADER_SIZE];
        in.readFully(header);
        byte[] payload = new byte[(header[0] & 0xFF) | (header[1] & 0xFF) << 8 | (header[2] & 0xFF) << 16];
        in.readFully(payload);
        return payload;
    }

    private static String queryString(Connection sql, String query) throws Exception {
        try (Statement statement = sql.createStatement(); ResultSet rows = statement.executeQuery(query)) {
            assertThat(rows.next()).as(query).isTrue();
            return rows.getString(1);
        }
    }
}
