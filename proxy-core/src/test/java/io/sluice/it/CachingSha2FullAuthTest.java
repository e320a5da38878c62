package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mysql.cj.jdbc.JdbcConnection;
import io.sluice.auth.PasswordHash;
import io.sluice.auth.RsaKeyPair;
import io.sluice.config.TlsConfig;
import io.sluice.config.UserConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.protocol.Scramble;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TlsFiles;
import io.sluice.tls.GeneratedCertificates;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * caching_sha2_password complete, with MySQL Connector/J 9: users whose config holds only MySQL's stored hash
 * ({@code $A$005$...}) log in first through the full path (the password over TLS, or RSA-encrypted with the key the
 * client asks for on a plain connection), and from then on through the fast path, as with MySQL's cache. A
 * {@code *HEX} user is switched to mysql_native_password. Each test starts its own proxy so that it starts with an
 * empty cache.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class CachingSha2FullAuthTest {

    private static final String SHA2_USER = "sha2_hashed";
    private static final String SHA2_PASSWORD = "sha2-secret";
    private static final String NATIVE_USER = "native_hashed";
    private static final String NATIVE_PASSWORD = "native-secret";
    private static final String SHA2 = "defaultAuthenticationPlugin=caching_sha2_password";

    @TempDir
    Path confDir;

    @BeforeAll
    static void notDirect() {
        Assumptions.assumeFalse(ProxyUnderTest.isDirect(), "checks Sluice's own authentication");
    }

    private ProxyUnderTest start() {
        return ProxyUnderTest.builder()
                // Connector/J reads caching_sha2's AuthMoreData only from MySQL versions (see CachingSha2LoginTest).
                .server(s -> s.withServerVersion("5.7.19-sluice-test")
                        .withTls(TlsConfig.defaults().withGeneratedDirectory(confDir)))
                .user(new UserConfig(SHA2_USER, "%", null, PasswordHash.cachingSha2Hash(SHA2_PASSWORD), 0))
                .user(new UserConfig(NATIVE_USER, "%", null, PasswordHash.nativeHash(NATIVE_PASSWORD), 0))
                .start();
    }

    private String url(ProxyUnderTest proxy, String params) {
        return "jdbc:mysql://127.0.0.1:" + proxy.port() + "/?" + params;
    }

    private String verifyCa() {
        return TlsFiles.mysqlVerifyCa(confDir.resolve(GeneratedCertificates.CA_FILE));
    }

    @Test
    void fullAuthenticationOverTlsThenTheFastPath() throws SQLException {
        try (ProxyUnderTest proxy = start()) {
            // A plain connection that may not fetch the RSA key can only log in through the fast path: not yet.
            String plainNoKey = url(proxy, "sslMode=DISABLED&" + SHA2);
            assertThatThrownBy(() -> JdbcDriver.MYSQL.connect(plainNoKey, SHA2_USER, SHA2_PASSWORD).close())
                    .hasMessageContaining("Public Key Retrieval is not allowed");

            try (Connection c = JdbcDriver.MYSQL.connect(url(proxy, verifyCa() + "&" + SHA2), SHA2_USER,
                    SHA2_PASSWORD)) {
                assertThat(currentProxyUser(c)).isEqualTo(42);
            }
            // The full login filled the cache: the same plain connection now succeeds on the fast path.
            try (Connection c = JdbcDriver.MYSQL.connect(plainNoKey, SHA2_USER, SHA2_PASSWORD)) {
                assertThat(currentProxyUser(c)).isEqualTo(42);
            }
            assertThatThrownBy(() -> JdbcDriver.MYSQL.connect(plainNoKey, SHA2_USER, "wrong").close())
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
        }
    }

    @Test
    void aWrongPasswordOverTheFullPathIsDenied() {
        try (ProxyUnderTest proxy = start()) {
            assertThatThrownBy(() -> JdbcDriver.MYSQL.connect(url(proxy, verifyCa() + "&" + SHA2), SHA2_USER,
                    "not-" + SHA2_PASSWORD).close())
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(1045);
                        assertThat(e.getSQLState()).isEqualTo("28000");
                    });
        }
    }

    @Test
    void rsaPublicKeyRetrievalOnAPlainConnection() throws SQLException {
        try (ProxyUnderTest proxy = start()) {
            String rsa = url(proxy, "sslMode=DISABLED&allowPublicKeyRetrieval=true&" + SHA2);
            assertThatThrownBy(() -> JdbcDriver.MYSQL.connect(rsa, SHA2_USER, "wrong").close())
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
            try (Connection c = JdbcDriver.MYSQL.connect(rsa, SHA2_USER, SHA2_PASSWORD)) {
                assertThat(currentProxyUser(c)).isEqualTo(42);
            }
        }
    }

    @Test
    void aMysqlNativePasswordClientIsSwitchedToCachingSha2ForASha2Hash() throws SQLException {
        try (ProxyUnderTest proxy = start()) {
            String nativeFirst = url(proxy, verifyCa() + "&defaultAuthenticationPlugin=mysql_native_password");
            try (Connection c = JdbcDriver.MYSQL.connect(nativeFirst, SHA2_USER, SHA2_PASSWORD)) {
                assertThat(currentProxyUser(c)).isEqualTo(42);
            }
        }
    }

    @Test
    void aNativeHashSwitchesCachingSha2ClientsToMysqlNativePassword() throws SQLException {
        try (ProxyUnderTest proxy = start()) {
            try (Connection c = JdbcDriver.MYSQL.connect(url(proxy, "sslMode=DISABLED&" + SHA2), NATIVE_USER,
                    NATIVE_PASSWORD)) {
                assertThat(currentProxyUser(c)).isEqualTo(42);
            }
            String mariaDb = JdbcDriver.MARIADB.url(proxy.host(), proxy.port(), null, "");
            try (Connection c = JdbcDriver.MARIADB.connect(mariaDb, NATIVE_USER, NATIVE_PASSWORD)) {
                assertThat(currentProxyUser(c)).isEqualTo(42);
            }
            assertThatThrownBy(() -> JdbcDriver.MARIADB.connect(mariaDb, NATIVE_USER, "wrong").close())
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
        }
    }

    @Test
    void comChangeUserTakesTheFullPathToo() throws SQLException {
        try (ProxyUnderTest proxy = start();
             Connection c = JdbcDriver.MYSQL.connect(url(proxy, verifyCa() + "&" + SHA2), proxy.user(),
                     proxy.password())) {
            c.unwrap(JdbcConnection.class).changeUser(SHA2_USER, SHA2_PASSWORD);
            assertThat(currentProxyUser(c)).isEqualTo(42);
            assertThatThrownBy(() -> c.unwrap(JdbcConnection.class).changeUser(SHA2_USER, "wrong"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
        }
    }

    /**
     * The RSA exchange byte for byte, as MySQL 8.0.5+ clients run it (OAEP padding; Connector/J uses PKCS#1 v1.5
     * towards the 5.7 version the other tests present): scramble, perform_full_authentication, 0x02 for the key,
     * the PEM key, the encrypted password, OK.
     */
    @Test
    void oaepEncryptedPasswordByteForByte() throws Exception {
        try (ProxyUnderTest proxy = start();
             RawMySqlClient client = RawMySqlClient.connect(proxy.host(), proxy.port())) {
            byte[] nonce = client.handshake().seed();
            ByteArrayOutputStream response = new ByteArrayOutputStream();
            int capabilities = RawMySqlClient.CLIENT_LONG_PASSWORD | RawMySqlClient.CLIENT_PROTOCOL_41
                    | RawMySqlClient.CLIENT_SECURE_CONNECTION | RawMySqlClient.CLIENT_PLUGIN_AUTH
                    | RawMySqlClient.CLIENT_TRANSACTIONS;
            response.write(new byte[] {(byte) capabilities, (byte) (capabilities >>> 8), (byte) (capabilities >>> 16),
                (byte) (capabilities >>> 24), 0, 0, 0, 1, 45});
            response.write(new byte[23]);
            response.write(SHA2_USER.getBytes(StandardCharsets.UTF_8));
            response.write(0);
            byte[] scramble = Scramble.cachingSha2Password(SHA2_PASSWORD, nonce);
            response.write(scramble.length);
            response.write(scramble);
            response.write("caching_sha2_password\0".getBytes(StandardCharsets.US_ASCII));
            client.writePacket(response.toByteArray());

            assertThat(client.readPacket().payload()).containsExactly(0x01, 0x04); // perform_full_authentication
            client.writePacket(new byte[] {0x02});
            RawMySqlClient.Packet key = client.readPacket();
            assertThat(key.firstByte()).isEqualTo(0x01);
            String pem = new String(key.payload(), 1, key.payload().length - 1, StandardCharsets.US_ASCII);
            assertThat(pem).startsWith("-----BEGIN PUBLIC KEY-----");

            client.writePacket(RsaKeyPair.encryptPassword(SHA2_PASSWORD, nonce, pem));

            RawMySqlClient.Packet ok = client.readPacket();
            assertThat(ok.isOk()).as("%s", ok).isTrue();
            assertThat(client.query("SELECT 'in'").rows()).containsExactly(List.of("in"));
        }
    }

    /** A query answered by the backend through the session: the login really led to a working session. */
    private static int currentProxyUser(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 6 * 7")) {
            assertThat(rs.next()).isTrue();
            return rs.getInt(1);
        }
    }
}
