package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Sluice;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.RawMySqlClient.Packet;
import io.sluice.testing.SluiceExtension;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Logging in to Sluice with caching_sha2_password's fast path (MySQL 8's default client plugin): the client's first
 * answer is a SHA-256 scramble, Sluice replies fast_auth_success (0x01 0x03) and then OK.
 */
@Tag("server")
class CachingSha2LoginTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults()
            .sluiceOnly("checks Sluice's own authentication");

    /**
     * MySQL Connector/J reads AuthMoreData correctly only from servers whose version is 5.5.16 or later, and
     * MariaDB's version string starts with "5.5.5-" (MariaDB itself has no caching_sha2_password). So Sluice presents
     * a MySQL version here ({@code server.serverVersion}), as it would in front of MySQL; 5.7.19 because Connector/J
     * then reads {@code tx_isolation}, which this MariaDB has, rather than MySQL 8's {@code transaction_isolation}.
     */
    @Test
    void mysqlConnectorJLogsInWithCachingSha2Password() throws SQLException {
        ProxyConfig base = ProxyUnderTest.builder().config();
        ServerConfig s0 = base.server();
        ProxyConfig config = base.withServer(new ServerConfig(s0.address(), 0, s0.workerThreads(), s0.connBufferSize(),
                s0.maxConnections(), "5.7.19-sluice-test", s0.maxPacketSize(), s0.transport()));
        String params = "sslMode=DISABLED&defaultAuthenticationPlugin=caching_sha2_password";
        try (Sluice sluice = Sluice.start(config)) {
            String url = "jdbc:mysql://127.0.0.1:" + sluice.port() + "/?" + params;
            try (Connection c = DriverManager.getConnection(url, ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
                 Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 6 * 7")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(42);
            }
            assertThatThrownBy(() -> DriverManager.getConnection(url, ProxyUnderTest.USER, "wrong"))
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(1045);
                        assertThat(e.getSQLState()).isEqualTo("28000");
                    });
        }
    }

    @Test
    void theFastPathIsFastAuthSuccessThenOk() throws Exception {
        try (RawMySqlClient client = RawMySqlClient.connect(proxy.host(), proxy.port())) {
            byte[] nonce = client.handshake().seed();
            ByteArrayOutputStream response = new ByteArrayOutputStream();
            int capabilities = RawMySqlClient.CLIENT_LONG_PASSWORD | RawMySqlClient.CLIENT_PROTOCOL_41
                    | RawMySqlClient.CLIENT_SECURE_CONNECTION | RawMySqlClient.CLIENT_PLUGIN_AUTH
                    | RawMySqlClient.CLIENT_TRANSACTIONS;
            writeIntLe(response, capabilities, 4);
            writeIntLe(response, 1 << 24, 4);
            response.write(45);
            response.write(new byte[23]);
            response.write(proxy.user().getBytes(StandardCharsets.UTF_8));
            response.write(0);
            byte[] scramble = sha2Scramble(proxy.password(), nonce);
            response.write(scramble.length);
            response.write(scramble);
            response.write("caching_sha2_password".getBytes(StandardCharsets.US_ASCII));
            response.write(0);
            client.writePacket(response.toByteArray());

            Packet fast = client.readPacket();
            assertThat(fast.payload()).containsExactly(0x01, 0x03);
            Packet ok = client.readPacket();
            assertThat(ok.isOk()).as("%s", ok).isTrue();
            assertThat(client.query("SELECT 'in'").rows()).containsExactly(java.util.List.of("in"));
        }
    }

    /** XOR(SHA256(pw), SHA256(SHA256(SHA256(pw)) + nonce)), computed here independently of Sluice's code. */
    private static byte[] sha2Scramble(String password, byte[] nonce) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] p1 = sha.digest(password.getBytes(StandardCharsets.UTF_8));
        byte[] p2 = sha.digest(p1);
        sha.update(p2);
        sha.update(nonce, 0, 20);
        byte[] p3 = sha.digest();
        byte[] out = new byte[p1.length];
        for (int i = 0; i < out.length; i++) {
            out[i] = (byte) (p1[i] ^ p3[i]);
        }
        return out;
    }

    private static void writeIntLe(ByteArrayOutputStream out, int value, int bytes) {
        for (int i = 0; i < bytes; i++) {
            out.write(value >>> (8 * i));
        }
    }
}
