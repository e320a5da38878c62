package io.sluice.backend;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.sluice.config.SslMode;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.HandshakeV10;
import org.junit.jupiter.api.Test;

/**
 * A backend connection is refused when the server's greeting lacks a MariaDB capability in the session key: the
 * client was offered a result format that server cannot send (a MariaDB 10.5 added by a reload next to the 10.11
 * Sluice started with, decision 062). The greetings are scripted, since such a server cannot be started on demand.
 */
class BackendCapabilityCheckTest {

    private static final int SERVER = Capabilities.CLIENT_PROTOCOL_41 | Capabilities.CLIENT_SECURE_CONNECTION
            | Capabilities.CLIENT_PLUGIN_AUTH | Capabilities.CLIENT_TRANSACTIONS;
    private static final SessionKey KEY = new SessionKey(
            Capabilities.CLIENT_PROTOCOL_41 | Capabilities.CLIENT_TRANSACTIONS, 45,
            Capabilities.MARIADB_CLIENT_EXTENDED_METADATA | Capabilities.MARIADB_CLIENT_CACHE_METADATA);

    @Test
    void aServerWithoutAnOfferedCapabilityIsRefused() {
        ByteBuf greeting = greeting("5.5.5-10.5.27-MariaDB", Capabilities.MARIADB_CLIENT_EXTENDED_METADATA);
        try {
            BackendAuthentication login = new BackendAuthentication("app", "", KEY, null, SslMode.DISABLED);
            assertThatThrownBy(() -> login.onPacket(greeting, UnpooledByteBufAllocator.DEFAULT))
                    .isInstanceOf(BackendException.class)
                    .hasMessageContaining("10.5.27")
                    .hasMessageContaining("0x10");
        } finally {
            greeting.release();
        }
    }

    @Test
    void aServerWithEveryOfferedCapabilityGetsTheHandshakeResponse() throws Exception {
        ByteBuf greeting = greeting("5.5.5-10.11.19-MariaDB", KEY.mariaDbCapabilities() | 1 /* progress */);
        try {
            BackendAuthentication login = new BackendAuthentication("app", "", KEY, null, SslMode.DISABLED);
            assertThat(login.onPacket(greeting, UnpooledByteBufAllocator.DEFAULT))
                    .isEqualTo(BackendAuthentication.Step.CONTINUE);
            ByteBuf response = login.takeReply();
            try {
                // HandshakeResponse41 after the frame header: capabilities 4, max packet 4, collation 1, then 19
                // zero bytes and MariaDB's extended capabilities: those of the key, not the server's progress bit.
                assertThat(response.getIntLE(4 + 4 + 4 + 1 + 19)).isEqualTo(KEY.mariaDbCapabilities());
            } finally {
                response.release();
            }
        } finally {
            greeting.release();
        }
    }

    private static ByteBuf greeting(String version, int mariaDb) {
        byte[] nonce = new byte[20];
        for (int i = 0; i < nonce.length; i++) {
            nonce[i] = (byte) ('a' + i);
        }
        return new HandshakeV10(version, 7, nonce, SERVER, 45, 2, "mysql_native_password", mariaDb)
                .write(UnpooledByteBufAllocator.DEFAULT);
    }
}
