package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.PoolingConfig;
import io.sluice.api.SessionSnapshot;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A client that does not negotiate CLIENT_SESSION_TRACK cannot have its session state followed, so in
 * {@code pooling: TRANSACTION} it keeps one server connection for its whole life ({@code pinnedBy no_session_track})
 * and still sees exactly what it would see directly. Two real clients lack the capability: MySQL Connector/J with its
 * default {@code trackSessionState=false}, and {@link RawMySqlClient}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NoSessionTrackTest {

    private static final int CLIENT_SESSION_TRACK = 0x800000;

    @RegisterExtension
    static final MuxHarness harness = MuxHarness.of("sluice_mux_notrack", PoolingConfig.transaction());

    @Test
    void mySqlConnectorJWithoutTrackSessionStateIsPinnedForLife() throws Exception {
        MuxHarness.Run run = harness.compare(JdbcDriver.MYSQL, "", () -> MuxHarness.script()
                .quietly("DROP TABLE IF EXISTS nt", "CREATE TABLE nt (id INT AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB")
                .sql("SET time_zone = '+04:00'", "SELECT @@time_zone",
                        "SET sql_mode = 'ANSI_QUOTES'", "SELECT \"id\" FROM nt",
                        "INSERT INTO nt VALUES (NULL)", "SELECT LAST_INSERT_ID()",
                        "USE `" + harness.otherDb() + "`", "SELECT DATABASE()",
                        "SELECT @@time_zone, @@sql_mode"));
        assertThat(run.pins()).as("pinnedBy after each step").containsOnly("no_session_track");
        assertThat(run.distinctConnections()).as("server connections used").hasSize(1);
    }

    @Test
    void rawClientWithoutTheCapabilityKeepsItsConnectionAndItsState() throws Exception {
        try (RawMySqlClient raw = RawMySqlClient.login(TestMariaDb.HOST, harness.proxy().port(),
                harness.proxy().user(), harness.proxy().password(), harness.db())) {
            assertThat(raw.handshake().capabilities() & CLIENT_SESSION_TRACK)
                    .as("Sluice offers CLIENT_SESSION_TRACK; the raw client just does not take it").isNotZero();
            long first = Long.parseLong(raw.query("SELECT CONNECTION_ID()").rows().get(0).get(0));
            assertThat(raw.query("SET SESSION time_zone = '+06:00'").end().isOk()).isTrue();
            assertThat(raw.query("SET @raw = 42").end().isOk()).isTrue();

            // Other sessions take turns on the server connections in between.
            for (int i = 0; i < 5; i++) {
                try (Connection other = harness.proxy().connect(JdbcDriver.MARIADB, harness.db(), "");
                     Statement s = other.createStatement()) {
                    s.execute("SET time_zone = '-03:00'");
                    try (ResultSet rs = s.executeQuery("SELECT CONNECTION_ID(), @@time_zone")) {
                        rs.next();
                        assertThat(rs.getLong(1)).as("another session never gets the pinned connection")
                                .isNotEqualTo(first);
                        assertThat(rs.getString(2)).isEqualTo("-03:00");
                    }
                }
                List<String> row = raw.query("SELECT CONNECTION_ID(), @@time_zone, @raw").rows().get(0);
                assertThat(row).containsExactly(String.valueOf(first), "+06:00", "42");
            }
            SessionSnapshot snapshot = harness.sluice().sessions().stream()
                    .filter(s -> s.id() == (int) raw.handshake().connectionId()).findFirst().orElseThrow();
            assertThat(snapshot.pinnedBy()).isEqualTo("no_session_track");
        }
    }

    @Test
    void mariaDbConnectorJNegotiatesSessionTrackingAndIsNotPinned() throws Exception {
        try (Connection c = harness.proxy().connect(JdbcDriver.MARIADB, harness.db(), "");
             Statement s = c.createStatement()) {
            s.execute("SELECT 1");
            long id = MuxHarness.greetingId(c);
            SessionSnapshot snapshot = harness.snapshot(id);
            assertThat(snapshot).isNotNull();
            assertThat(snapshot.pinnedBy()).isNull();
        }
        try (Connection c = harness.proxy().connect(JdbcDriver.MYSQL, harness.db(), MuxHarness.params(JdbcDriver.MYSQL, ""));
             Statement s = c.createStatement()) {
            s.execute("SELECT 1");
            SessionSnapshot snapshot = harness.snapshot(MuxHarness.greetingId(c));
            assertThat(snapshot).isNotNull();
            assertThat(snapshot.pinnedBy()).as("MySQL Connector/J with trackSessionState=true").isNull();
        }
    }
}
