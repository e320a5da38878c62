package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.api.SessionSnapshot;
import io.sluice.config.PoolingConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.TestMariaDb;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A client that does not negotiate CLIENT_SESSION_TRACK is multiplexed like any other in {@code pooling:
 * TRANSACTION}: Sluice's server connections negotiate it anyway, follow the session's state through the trackers,
 * and show the client OK packets in its own format (OkRewriter). Two real clients lack the capability: MySQL
 * Connector/J with a default URL ({@code trackSessionState=false}) and {@link RawMySqlClient}.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class UntrackedClientTest {

    private static final int CLIENT_SESSION_TRACK = 0x800000;

    @RegisterExtension
    static final DifferentialHarness harness = DifferentialHarness.of("sluice_mux_notrack", PoolingConfig.transaction());

    @Test
    void mySqlConnectorJWithADefaultUrlIsMultiplexedAndSeesWhatItSeesDirectly() throws Exception {
        DifferentialHarness.Run run = harness.compare(JdbcDriver.MYSQL, "", () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS nt", "CREATE TABLE nt (id INT AUTO_INCREMENT PRIMARY KEY) ENGINE=InnoDB")
                .sql("SET time_zone = '+04:00'", "SELECT @@time_zone",
                        "SET sql_mode = 'ANSI_QUOTES'", "SELECT \"id\" FROM nt",
                        "INSERT INTO nt VALUES (NULL)", "SELECT LAST_INSERT_ID()",
                        "USE `" + harness.otherDb() + "`", "SELECT DATABASE()",
                        "SELECT @@time_zone, @@sql_mode"));
        run.assertSameResults().assertNeverPinned().assertSwitchedConnections();
    }

    /**
     * A large result whose closing OK reports a state change (a user variable assigned in the select list): the
     * rows cross many reads, each of which may end inside the first bytes of the packet that could be that OK, and
     * the client (MySQL Connector/J negotiates CLIENT_DEPRECATE_EOF) still gets every row and its own closing OK.
     */
    @Test
    void aLargeResultEndingWithAStateChangeArrivesWhole() throws Exception {
        DifferentialHarness.Run run = harness.compare(JdbcDriver.MYSQL, "", () -> DifferentialHarness.script()
                .sql("SELECT seq, REPEAT('x', seq % 97) AS pad, @n := seq FROM seq_1_to_20000",
                        "SELECT @n, COUNT(*) FROM seq_1_to_100",
                        "SET time_zone = '+01:00'",
                        "SELECT seq, @@time_zone FROM seq_1_to_3000"));
        run.assertSameResults().assertNeverPinned();
        assertThat(run.proxied().toString()).contains("[[20000, 100]]");
    }

    @Test
    void rawClientWithoutTheCapabilityKeepsItsStateAcrossServerConnections() throws Exception {
        try (RawMySqlClient raw = RawMySqlClient.login(TestMariaDb.HOST, harness.proxy().port(),
                harness.proxy().user(), harness.proxy().password(), harness.db())) {
            assertThat(raw.handshake().capabilities() & CLIENT_SESSION_TRACK)
                    .as("Sluice offers CLIENT_SESSION_TRACK; the raw client just does not take it").isNotZero();
            assertThat(raw.query("SET SESSION time_zone = '+06:00'").end().isOk()).isTrue();
            List<String> connections = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                // Other sessions take turns on the server connections in between.
                try (Connection other = harness.proxy().connect(JdbcDriver.MARIADB, harness.db(), "");
                     Statement s = other.createStatement()) {
                    s.execute("SET time_zone = '-03:00'");
                    try (ResultSet rs = s.executeQuery("SELECT @@time_zone")) {
                        rs.next();
                        assertThat(rs.getString(1)).isEqualTo("-03:00");
                    }
                }
                List<String> row = raw.query("SELECT CONNECTION_ID(), @@time_zone").rows().get(0);
                assertThat(row.get(1)).as("the session's time zone, on whichever connection").isEqualTo("+06:00");
                connections.add(row.get(0));
            }
            SessionSnapshot snapshot = harness.sluice().sessions().stream()
                    .filter(s -> s.id() == (int) raw.handshake().connectionId()).findFirst().orElseThrow();
            assertThat(snapshot.pinnedBy()).as("server connections used: %s", connections).isNull();
        }
    }

    /**
     * The OK packets (and the EOF packets ending results) a client without CLIENT_SESSION_TRACK gets through Sluice
     * are byte for byte the ones MariaDB sends it directly, although Sluice's server connection reports session state
     * on each of them that changes it.
     */
    @Test
    void okPacketsAreByteForByteWhatTheServerSendsSuchAClient() throws Exception {
        assertSameResponsesAsDirect(0);
    }

    /**
     * A client that negotiated CLIENT_SESSION_TRACK is shown only what its own trackers (the server's defaults)
     * report, although Sluice's connection tracks every variable and every state change.
     */
    @Test
    void aTrackingClientSeesWhatItsOwnTrackersReportAndNoMore() throws Exception {
        assertSameResponsesAsDirect(CLIENT_SESSION_TRACK);
    }

    private void assertSameResponsesAsDirect(int extraCapabilities) throws Exception {
        List<String> statements = List.of("SET time_zone = '+02:00'", "SET SESSION sql_mode = 'ANSI_QUOTES'",
                "SELECT @@time_zone", "UPDATE okb SET v = v + 1", "SET autocommit = 0",
                "UPDATE okb SET v = 5 WHERE id = 1", "COMMIT", "SET autocommit = 1",
                "USE `" + harness.otherDb() + "`", "SET NAMES latin1", "SELECT 'x'", "SET NAMES utf8mb4", "DO 1",
                "SET @@session.group_concat_max_len = 99", "SELECT 1 FROM DUAL WHERE 0", "SET time_zone = 'bogus'",
                "SET @u = 1", "SELECT @u");
        List<String> direct;
        try (RawMySqlClient raw = login(TestMariaDb.get().port(), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD,
                extraCapabilities)) {
            direct = responses(raw, statements);
        }
        try (RawMySqlClient raw = login(harness.proxy().port(), harness.proxy().user(), harness.proxy().password(),
                extraCapabilities)) {
            assertThat(responses(raw, statements)).isEqualTo(direct);
        }
    }

    private static RawMySqlClient login(int port, String user, String password, int extraCapabilities)
            throws IOException {
        RawMySqlClient raw = RawMySqlClient.connect(TestMariaDb.HOST, port);
        RawMySqlClient.Packet reply = raw.authenticate(user, password, harness.db(), extraCapabilities);
        if (!reply.isOk()) {
            raw.close();
            throw new IOException("login answered " + reply);
        }
        return raw;
    }

    /** Each statement's rows and last packet, from a fresh table; session-state reports in a fixed order. */
    private static List<String> responses(RawMySqlClient raw, List<String> statements) throws IOException {
        for (String setup : List.of("DROP TABLE IF EXISTS okb", "CREATE TABLE okb (id INT PRIMARY KEY, v INT)",
                "INSERT INTO okb VALUES (1, 1), (2, 2)")) {
            assertThat(raw.query(setup).end().isErr()).as(setup).isFalse();
        }
        List<String> seen = new ArrayList<>();
        for (String sql : statements) {
            RawMySqlClient.QueryResult result = raw.query(sql);
            seen.add(sql + " -> " + result.rows() + " " + inOrder(result.end().payload()));
        }
        return seen;
    }

    /**
     * An OK packet with its system-variable reports sorted by name: the server lists the variables one statement
     * changed in the order of its tracker's own table, which differs between its default list and the {@code '*'}
     * Sluice's connections track. Clients look them up by name. Everything else as it came, in hex.
     */
    private static String inOrder(byte[] payload) {
        String hex = HexFormat.of().formatHex(payload);
        if ((payload[0] != 0x00 && (payload[0] & 0xFF) != 0xFE) || payload.length < 7) {
            return hex;
        }
        int pos = 1;
        pos += lenencSize(payload, pos);
        pos += lenencSize(payload, pos);
        int status = (payload[pos] & 0xFF) | (payload[pos + 1] & 0xFF) << 8;
        if ((status & 0x4000) == 0) {
            return hex;
        }
        pos += 4;
        pos += lenencSize(payload, pos) + (int) lenencValue(payload, pos); // info
        int stateStart = pos;
        pos += lenencSize(payload, pos);
        List<String> reports = new ArrayList<>();
        while (pos < payload.length) {
            int type = payload[pos++] & 0xFF;
            int length = (int) lenencValue(payload, pos);
            pos += lenencSize(payload, pos);
            int end = pos + length;
            if (type == 0) {
                while (pos < end) {
                    int nameLength = (int) lenencValue(payload, pos);
                    pos += lenencSize(payload, pos);
                    String name = new String(payload, pos, nameLength, java.nio.charset.StandardCharsets.UTF_8);
                    pos += nameLength;
                    int valueLength = (int) lenencValue(payload, pos);
                    pos += lenencSize(payload, pos);
                    reports.add(name + "=" + new String(payload, pos, valueLength,
                            java.nio.charset.StandardCharsets.UTF_8));
                    pos += valueLength;
                }
            } else {
                reports.add(type + ":" + HexFormat.of().formatHex(payload, pos, end));
            }
            pos = end;
        }
        reports.sort(null);
        return HexFormat.of().formatHex(payload, 0, stateStart) + " " + reports;
    }

    private static int lenencSize(byte[] b, int pos) {
        int first = b[pos] & 0xFF;
        return first < 0xFB ? 1 : first == 0xFC ? 3 : first == 0xFD ? 4 : 9;
    }

    private static long lenencValue(byte[] b, int pos) {
        int size = lenencSize(b, pos);
        long value = size == 1 ? b[pos] & 0xFF : 0;
        for (int k = size - 1; k >= 1; k--) {
            value = value << 8 | (b[pos + k] & 0xFF);
        }
        return value;
    }
}
