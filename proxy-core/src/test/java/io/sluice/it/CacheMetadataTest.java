package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.api.BackendSnapshot;
import io.sluice.protocol.Capabilities;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.Prerequisites;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * MariaDB's MARIADB_CLIENT_CACHE_METADATA crosses Sluice in session pooling: MariaDB Connector/J's server-side
 * prepared statements then get executes without column definitions, as they do straight from MariaDB, and Sluice
 * follows those shorter results (its connection goes back to the pool in a known state). Transaction pooling does not
 * offer it (see {@link Capabilities#MARIADB_CLIENT_CACHE_METADATA}).
 *
 * <p>It needs a server with the capability (MariaDB 10.6 and later). CI's servers have it (Debian 12's MariaDB
 * 10.11, or the embedded 11.4), so on CI a server without it fails the class instead of skipping it; a developer's
 * older MariaDB or MySQL skips it with the reason. See {@link Prerequisites#mariaDbCacheMetadata}.
 */
@Tag("server")
class CacheMetadataTest {

    private static final int EXECUTES = 40;
    private static final String SELECT = "SELECT v FROM cached_meta WHERE id = ?";

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.workerThreads(1))
            .sluiceOnly("about what Sluice offers")
            .requires(Prerequisites::mariaDbCacheMetadata)
            .database("sluice_it_cachemeta");

    @Test
    void sessionPoolingOffersCacheMetadataAndTransactionPoolingDoesNot() throws Exception {
        try (RawMySqlClient raw = RawMySqlClient.connect(proxy.host(), proxy.port())) {
            assertThat(raw.handshake().mariaDbCapabilities() & Capabilities.MARIADB_CLIENT_CACHE_METADATA)
                    .as("session pooling").isNotZero();
        }
        try (ProxyUnderTest transactions = ProxyUnderTest.builder().transactionPooling().start();
                RawMySqlClient raw = RawMySqlClient.connect(transactions.host(), transactions.port())) {
            assertThat(raw.handshake().mariaDbCapabilities() & Capabilities.MARIADB_CLIENT_CACHE_METADATA)
                    .as("transaction pooling").isZero();
            assertThat(raw.handshake().mariaDbCapabilities() & Capabilities.MARIADB_CLIENT_EXTENDED_METADATA)
                    .as("extended metadata still crosses").isNotZero();
        }
    }

    @Test
    void executesLeaveOutTheDefinitionsAsDirectlyAndReadTheSameRows() throws Exception {
        BackendSnapshot before = proxy.sluice().backends().get(0);

        Run direct;
        try (Connection c = TestMariaDb.get().connect(JdbcDriver.MARIADB, proxy.db(), "useServerPrepStmts=true")) {
            direct = run(c);
        }
        Run proxied;
        long backendId;
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), "useServerPrepStmts=true")) {
            backendId = connectionId(c);
            proxied = run(c);
        }

        assertThat(proxied.values()).isEqualTo(direct.values());
        assertThat(proxied.afterAlter()).isEqualTo(direct.afterAlter()).isEqualTo("v-7");
        // MariaDB's own count of what it sent for the executes: the same through Sluice as directly, but for the
        // digits of the value in the first SHOW's own result, which the difference includes. Without the capability
        // each execute through Sluice carried its column definition again, over 30 bytes each.
        assertThat(Math.abs(proxied.bytesSent() - direct.bytesSent()))
                .as("bytes MariaDB sent for %d executes: %d direct, %d through Sluice", EXECUTES, direct.bytesSent(),
                        proxied.bytesSent())
                .isLessThanOrEqualTo(4);

        // The connection went back to the pool after its reset and session check, and the next client gets it.
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), "useServerPrepStmts=true")) {
            assertThat(connectionId(c)).isEqualTo(backendId);
        }
        BackendSnapshot after = proxy.sluice().backends().get(0);
        assertThat(after.closedConnections()).as("connections closed as in doubt")
                .isEqualTo(before.closedConnections());
    }

    /** What one client saw: the executes' values, MariaDB's bytes sent for them, the value after an ALTER TABLE. */
    private record Run(List<String> values, long bytesSent, String afterAlter) {
    }

    private static Run run(Connection c) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS cached_meta");
            s.execute("CREATE TABLE cached_meta (id INT PRIMARY KEY, v INT)");
            for (int i = 1; i <= 10; i++) {
                s.execute("INSERT INTO cached_meta VALUES (" + i + ", " + i * i + ")");
            }
        }
        List<String> values = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(SELECT)) {
            ps.setInt(1, 1);
            values.add(single(ps)); // the first execute after the prepare: MariaDB may still send the definitions
            long bytes0 = bytesSent(c);
            for (int i = 0; i < EXECUTES; i++) {
                ps.setInt(1, i % 10 + 1);
                values.add(single(ps));
            }
            long bytesSent = bytesSent(c) - bytes0;
            // The column changes type: MariaDB sends the new definitions with the next execute (metadata follows 1).
            try (Statement s = c.createStatement()) {
                s.execute("ALTER TABLE cached_meta MODIFY v VARCHAR(20)");
                s.execute("UPDATE cached_meta SET v = CONCAT('v-', id)");
            }
            ps.setInt(1, 7);
            String afterAlter = single(ps);
            return new Run(values, bytesSent, afterAlter);
        }
    }

    private static String single(PreparedStatement ps) throws SQLException {
        try (ResultSet rs = ps.executeQuery()) {
            assertThat(rs.next()).isTrue();
            String value = rs.getString(1);
            assertThat(rs.next()).isFalse();
            return value;
        }
    }

    /** MariaDB's Bytes_sent for this connection (SHOW's own result is counted after the value it reports). */
    private static long bytesSent(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW SESSION STATUS LIKE 'Bytes_sent'")) {
            assertThat(rs.next()).isTrue();
            return rs.getLong(2);
        }
    }

    private static long connectionId(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
            assertThat(rs.next()).isTrue();
            return rs.getLong(1);
        }
    }
}
