package io.sluice.protocol;

import static io.sluice.protocol.Capabilities.CLIENT_PLUGIN_AUTH;
import static io.sluice.protocol.Capabilities.CLIENT_PROTOCOL_41;
import static io.sluice.protocol.Capabilities.CLIENT_SECURE_CONNECTION;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.testing.MySqlWire;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * COM_CHANGE_USER payloads written here as clients write them, then parsed.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_com_change_user.html">COM_CHANGE_USER</a>
 */
class ComChangeUserTest {
    private static final int CAPS = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH;

    /** Writes a COM_CHANGE_USER payload; {@code charset} < 0 and {@code plugin == null} leave those fields out. */
    private static byte[] write(int caps, String user, byte[] auth, String database, int charset, String plugin,
            byte[] attributes) {
        MySqlWire.Payload p = MySqlWire.payload().int1(MySqlWire.COM_CHANGE_USER).strNul(user);
        if ((caps & CLIENT_SECURE_CONNECTION) != 0) {
            p.int1(auth.length).bytes(auth);
        } else {
            p.bytes(auth).int1(0);
        }
        p.strNul(database);
        if (charset >= 0) {
            p.int2(charset);
            if (plugin != null) {
                p.strNul(plugin);
            }
            if (attributes != null) {
                p.lenencBytes(attributes);
            }
        }
        return p.toBytes();
    }

    private static ComChangeUser parse(byte[] payload, int caps) {
        ByteBuf buf = Unpooled.wrappedBuffer(payload);
        try {
            ComChangeUser parsed = ComChangeUser.parse(buf, caps);
            assertThat(buf.readerIndex()).as("parse borrows: the index stays").isZero();
            return parsed;
        } finally {
            buf.release();
        }
    }

    @Test
    void parsesAllFields() {
        byte[] auth = Scramble.cachingSha2Password("secret", Scramble.nonce());

        ComChangeUser c = parse(write(CAPS, "bob", auth, "shop", 255, "caching_sha2_password", null), CAPS);

        assertThat(c.user()).isEqualTo("bob");
        assertThat(c.authResponse()).isEqualTo(auth);
        assertThat(c.database()).isEqualTo("shop");
        assertThat(c.collationId()).isEqualTo(255);
        assertThat(c.authPluginName()).isEqualTo("caching_sha2_password");
    }

    @Test
    void ignoresConnectionAttributesAfterThePlugin() {
        byte[] attrs = "\u000c_client_name\u0008libmysql".getBytes(StandardCharsets.UTF_8);

        ComChangeUser c = parse(write(CAPS, "bob", new byte[20], "", 0x2D, "mysql_native_password", attrs), CAPS);

        assertThat(c.collationId()).isEqualTo(45);
        assertThat(c.authPluginName()).isEqualTo("mysql_native_password");
        assertThat(c.database()).isNull();
    }

    @Test
    void aCharsetWithoutPluginLeavesThePluginAbsent() {
        ComChangeUser c = parse(write(CAPS, "bob", new byte[20], "db", 0x0121, null, null), CAPS);

        assertThat(c.collationId()).isEqualTo(0x0121);
        assertThat(c.authPluginName()).isNull();
    }

    @Test
    void anOldClientSendsNeitherCharsetNorPlugin() {
        ComChangeUser c = parse(write(CAPS, "bob", new byte[20], "db", -1, null, null), CAPS);

        assertThat(c.user()).isEqualTo("bob");
        assertThat(c.authResponse()).hasSize(20);
        assertThat(c.database()).isEqualTo("db");
        assertThat(c.collationId()).isEqualTo(-1);
        assertThat(c.authPluginName()).isNull();
    }

    @Test
    void thePluginIsReadOnlyWithClientPluginAuth() {
        int caps = CLIENT_PROTOCOL_41 | CLIENT_SECURE_CONNECTION;

        ComChangeUser c = parse(write(caps, "bob", new byte[20], "db", 33, "mysql_native_password", null), caps);

        assertThat(c.collationId()).isEqualTo(33);
        assertThat(c.authPluginName()).isNull();
    }

    @Test
    void anEmptyPasswordAndEmptyDatabase() {
        ComChangeUser c = parse(write(CAPS, "nopass", new byte[0], "", 255, "mysql_native_password", null), CAPS);

        assertThat(c.authResponse()).isEmpty();
        assertThat(c.database()).isNull();
    }

    @Test
    void withoutSecureConnectionTheAuthResponseIsNulTerminated() {
        int caps = CLIENT_PROTOCOL_41;

        ComChangeUser c = parse(write(caps, "bob", "scrambled".getBytes(StandardCharsets.UTF_8), "db", 8, null, null),
                caps);

        assertThat(c.authResponse()).asString(StandardCharsets.UTF_8).isEqualTo("scrambled");
        assertThat(c.database()).isEqualTo("db");
        assertThat(c.collationId()).isEqualTo(8);
    }

    @Test
    void aDatabaseRunningToTheEndWithoutItsNulIsRead() {
        byte[] payload = write(CAPS, "bob", new byte[] {1, 2}, "db", -1, null, null);

        ComChangeUser c = parse(java.util.Arrays.copyOf(payload, payload.length - 1), CAPS);

        assertThat(c.database()).isEqualTo("db");
    }

    @Test
    void rejectsAnAuthResponseLongerThanThePacket() {
        byte[] payload = {0x11, 'b', 'o', 'b', 0, 20, 1, 2, 3};

        assertThatThrownBy(() -> parse(payload, CAPS)).isInstanceOf(ProtocolException.class)
                .hasMessageContaining("COM_CHANGE_USER");
    }

    @Test
    void rejectsAPacketEndingAfterTheUser() {
        byte[] payload = {0x11, 'b', 'o', 'b', 0};

        assertThatThrownBy(() -> parse(payload, CAPS)).isInstanceOf(ProtocolException.class);
    }
}
