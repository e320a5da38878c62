package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.TlsConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TlsFiles;
import io.sluice.testing.Tool;
import io.sluice.tls.GeneratedCertificates;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Real clients over TLS to Sluice's generated certificates: MySQL Connector/J and MariaDB Connector/J verifying the
 * server against the generated CA, and the mariadb command-line client with {@code --ssl}. The proxy requires secure
 * transport, so every successful query here proves the session was encrypted, and a plain client gets ERR 3159.
 */
@Tag("server")
@Tag("tools")
class TlsClientsTest {

    @TempDir
    static Path confDir;

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b
                    // Connector/J reads caching_sha2's AuthMoreData only from MySQL versions (CachingSha2LoginTest).
                    .server(s -> s.withServerVersion("5.7.19-sluice-test")
                            .withTls(TlsConfig.defaults().withGeneratedDirectory(confDir)
                                    .withRequireSecureTransport(true))))
            .sluiceOnly("checks Sluice's own TLS");

    /** The CA Sluice generated at start, which clients verify its certificate with. */
    private static Path ca() {
        return confDir.resolve(GeneratedCertificates.CA_FILE);
    }

    @Test
    void theFirstStartGeneratedACaAndAServerCertificateIntoTheConfDir() throws IOException {
        for (String file : new String[] {"ca.pem", "ca-key.pem", "server-cert.pem", "server-key.pem"}) {
            assertThat(confDir.resolve(file)).isRegularFile();
        }
        assertThat(Files.readString(confDir.resolve("server-key.pem"))).startsWith("-----BEGIN PRIVATE KEY-----");
        assertThat(Files.getPosixFilePermissions(confDir.resolve("server-key.pem")))
                .map(Object::toString).containsExactlyInAnyOrder("OWNER_READ", "OWNER_WRITE");
    }

    @Test
    void mysqlConnectorJVerifiesTheGeneratedCa() throws SQLException {
        String url = "jdbc:mysql://127.0.0.1:" + proxy.port() + "/?" + TlsFiles.mysqlVerifyCa(ca());
        try (Connection c = JdbcDriver.MYSQL.connect(url, proxy.user(), proxy.password())) {
            assertThat(selectAnswer(c)).isEqualTo(42);
        }
    }

    @Test
    void mysqlConnectorJWithCachingSha2PasswordOverTls() throws SQLException {
        String url = "jdbc:mysql://127.0.0.1:" + proxy.port() + "/?" + TlsFiles.mysqlVerifyCa(ca())
                + "&defaultAuthenticationPlugin=caching_sha2_password";
        try (Connection c = JdbcDriver.MYSQL.connect(url, proxy.user(), proxy.password())) {
            assertThat(selectAnswer(c)).isEqualTo(42);
        }
    }

    @Test
    void mysqlConnectorJRefusesAServerItsCaDidNotSign(@TempDir Path otherDir) throws IOException {
        Path otherCa = otherDir.resolve("other-ca.pem");
        Files.writeString(otherCa, GeneratedCertificates.generate().caPem());
        String url = "jdbc:mysql://127.0.0.1:" + proxy.port() + "/?" + TlsFiles.mysqlVerifyCa(otherCa);
        assertThatThrownBy(() -> JdbcDriver.MYSQL.connect(url, proxy.user(), proxy.password()).close())
                .isInstanceOf(SQLException.class)
                .hasStackTraceContaining("SSLHandshakeException")
                .hasStackTraceContaining("does not chain with any of the trust anchors");
    }

    @Test
    void mariaDbConnectorJVerifiesTheGeneratedCa() throws SQLException {
        String url = JdbcDriver.MARIADB.url(proxy.host(), proxy.port(), null, TlsFiles.mariaDbVerifyCa(ca()));
        try (Connection c = JdbcDriver.MARIADB.connect(url, proxy.user(), proxy.password())) {
            assertThat(selectAnswer(c)).isEqualTo(42);
        }
    }

    @Test
    void mariadbCommandLineClientWithSsl() throws Exception {
        Process process = new ProcessBuilder(Tool.MARIADB.path().toString(), "--ssl", "--ssl-ca=" + ca(),
                "--ssl-verify-server-cert", "-h127.0.0.1", "-P" + proxy.port(), "-u" + proxy.user(),
                "-p" + proxy.password(), "-N", "-B", "-e", "SELECT 6 * 7")
                .redirectErrorStream(true)
                .start();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("mariadb finished").isTrue();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(process.exitValue()).as(output).isZero();
        assertThat(output.trim()).isEqualTo("42");
    }

    @Test
    void aPlainTextClientIsRefusedWith3159() throws IOException {
        try (RawMySqlClient client = RawMySqlClient.connect(proxy.host(), proxy.port())) {
            RawMySqlClient.Packet reply = client.authenticate(proxy.user(), proxy.password(), null);
            assertThat(reply.isErr()).as("%s", reply).isTrue();
            assertThat(reply.errorCode()).isEqualTo(3159);
            assertThat(reply.sqlState()).isEqualTo("HY000");
            assertThat(reply.errorMessage()).contains("insecure transport");
            assertThat(client.readPacket()).as("closed after the error").isNull();
        }
        assertThatThrownBy(() -> proxy.connect(JdbcDriver.MYSQL, null, "").close())
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(3159));
    }

    private static int selectAnswer(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 6 * 7")) {
            assertThat(rs.next()).isTrue();
            return rs.getInt(1);
        }
    }
}
