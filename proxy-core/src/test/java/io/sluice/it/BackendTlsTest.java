package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.SslMode;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TlsMariaDb;
import io.sluice.tls.GeneratedCertificates;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * TLS from Sluice to its backend, per data source ({@code sslMode}), against a MariaDB of its own with TLS on whose
 * account for Sluice is {@code REQUIRE SSL}: a session that answers at all went over TLS, and the server's
 * {@code Ssl_version} says which.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class BackendTlsTest {

    private static TlsMariaDb server;

    @BeforeAll
    static void start() {
        Assumptions.assumeFalse(ProxyUnderTest.isDirect(), "checks Sluice's backend connections");
        server = TlsMariaDb.start();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static ProxyUnderTest proxy(SslMode mode, Path ca) {
        return ProxyUnderTest.builder()
                .maxPoolSize(1)
                .backendUrl(server.url(null))
                .dataSource(ds -> new io.sluice.config.DataSourceConfig(ds.name(), ds.url(), TlsMariaDb.USER,
                        TlsMariaDb.PASSWORD, ds.connectionTimeoutMilliseconds(), ds.idleTimeoutMilliseconds(),
                        ds.maxLifetimeMilliseconds(), ds.maxPoolSize(), ds.minPoolSize(), mode, ca))
                .start();
    }

    @Test
    void requiredEncryptsWithoutCheckingTheCertificate() throws SQLException {
        try (ProxyUnderTest proxy = proxy(SslMode.REQUIRED, null)) {
            assertThat(sslVersion(proxy)).startsWith("TLSv1.");
            // Pooled over TLS: the second session reuses the first one's connection after its reset.
            assertThat(sslVersion(proxy)).startsWith("TLSv1.");
            assertThat(proxy.sluice().backendConnections("ds_0")).isEqualTo(1);
        }
    }

    @Test
    void verifyCaChecksTheServerAgainstTheCa() throws SQLException {
        try (ProxyUnderTest proxy = proxy(SslMode.VERIFY_CA, server.caFile())) {
            assertThat(sslVersion(proxy)).startsWith("TLSv1.");
        }
    }

    @Test
    void verifyCaRefusesAServerAnotherCaSigned(@TempDir Path dir) throws Exception {
        Path otherCa = dir.resolve("other-ca.pem");
        Files.writeString(otherCa, GeneratedCertificates.generate().caPem());
        try (ProxyUnderTest proxy = proxy(SslMode.VERIFY_CA, otherCa)) {
            // Naming a schema takes the backend connection at login, so the failure is the login's ERR.
            assertThatThrownBy(() -> proxy.connect(JdbcDriver.MARIADB, "mysql", "").close())
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(2003);
                        assertThat(e.getMessage()).contains("TLS handshake").contains("VERIFY_CA");
                    });
            // Nothing half-open stays behind (the slot is given back when the channel has closed, just after the ERR).
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
            while (proxy.sluice().backendConnections("ds_0") > 0 && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
            assertThat(proxy.sluice().backendConnections("ds_0")).isZero();
        }
    }

    @Test
    void verifyIdentityChecksTheHostNameToo() throws SQLException {
        try (ProxyUnderTest proxy = proxy(SslMode.VERIFY_IDENTITY, server.caFile())) {
            assertThat(sslVersion(proxy)).startsWith("TLSv1."); // the certificate names 127.0.0.1
        }
    }

    @Test
    void requiredRefusesAServerWithoutTls() {
        // The shared server on 3306 has no TLS: PREFERRED falls back to plain text, REQUIRED refuses.
        ProxyUnderTest preferred = ProxyUnderTest.builder()
                .dataSource(ds -> ds.withSsl(SslMode.PREFERRED, null)).start();
        try (preferred) {
            try (Connection c = preferred.connect(JdbcDriver.MARIADB, null, "")) {
                assertThat(c.isValid(5)).isTrue();
            } catch (SQLException e) {
                throw new AssertionError(e);
            }
        }
        try (ProxyUnderTest required = ProxyUnderTest.builder()
                .dataSource(ds -> ds.withSsl(SslMode.REQUIRED, null)).start()) {
            Assumptions.assumeFalse(required.mariaDb().isEmbedded(), "the embedded server may offer TLS");
            assertThatThrownBy(() -> required.connect(JdbcDriver.MARIADB, "mysql", "").close())
                    .isInstanceOfSatisfying(SQLException.class, e ->
                            assertThat(e.getMessage()).contains("does not offer TLS"));
        }
    }

    /** A session through the proxy asks the backend which TLS version its own connection uses. */
    private static String sslVersion(ProxyUnderTest proxy) throws SQLException {
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, null, "");
             Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW SESSION STATUS LIKE 'Ssl_version'")) {
            assertThat(rs.next()).isTrue();
            return rs.getString(2);
        }
    }
}
