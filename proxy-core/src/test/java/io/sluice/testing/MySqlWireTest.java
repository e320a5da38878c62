package io.sluice.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.testing.RawMySqlClient.Packet;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Checks the builder the other tests trust: its encodings against the examples of the protocol documentation, and
 * its packets against what MariaDB itself sends and accepts.
 */
@Tag("server")
class MySqlWireTest {

    private static byte[] hex(String hex) {
        return HexFormat.of().parseHex(hex.replace(" ", ""));
    }

    @ParameterizedTest
    @CsvSource({
        "0, 00",
        "250, fa",
        "251, fc fb 00",
        "65535, fc ff ff",
        "65536, fd 00 00 01",
        "16777215, fd ff ff ff",
        "16777216, fe 00 00 00 01 00 00 00 00",
    })
    void lengthEncodedIntegersTakeTheDocumentedWidths(long value, String expected) {
        assertThat(MySqlWire.payload().lenenc(value).toBytes()).isEqualTo(hex(expected));
    }

    /** The examples of the MySQL documentation's pages on the packets, byte for byte. */
    @Test
    void buildsTheDocumentationsExamples() {
        // COM_QUIT, sequence id 0
        assertThat(MySqlWire.frame(0, MySqlWire.command(MySqlWire.COM_QUIT, new byte[0])))
                .isEqualTo(hex("01 00 00 00 01"));
        // OK_Packet: no rows, SERVER_STATUS_AUTOCOMMIT, no warnings
        assertThat(MySqlWire.frame(2, MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)))
                .isEqualTo(hex("07 00 00 02 00 00 00 02 00 00 00"));
        // EOF_Packet: no warnings, SERVER_STATUS_AUTOCOMMIT
        assertThat(MySqlWire.frame(5, MySqlWire.eof(MySqlWire.SERVER_STATUS_AUTOCOMMIT)))
                .isEqualTo(hex("05 00 00 05 fe 00 00 02 00"));
        // ERR_Packet: 1096, HY000, "No tables used"
        assertThat(MySqlWire.frame(1, MySqlWire.err(1096, "HY000", "No tables used")))
                .isEqualTo(hex("17 00 00 01 ff 48 04 23 48 59 30 30 30 4e 6f 20 74 61 62 6c 65 73 20 75 73 65 64"));
        // COM_QUERY "select @@version_comment limit 1"
        assertThat(MySqlWire.frame(0, MySqlWire.comQuery("select @@version_comment limit 1")))
                .isEqualTo(hex("21 00 00 00 03 73 65 6c 65 63 74 20 40 40 76 65 72 73 69 6f 6e 5f 63 6f 6d 6d 65 6e"
                        + " 74 20 6c 69 6d 69 74 20 31"));
    }

    @Test
    void theOkEndingRowsAndTheEofAreTheTwoShapesOfTheEndOfRows() {
        assertThat(MySqlWire.endOfRows(true, 0x22)).isEqualTo(hex("fe 00 00 22 00 00 00"));
        assertThat(MySqlWire.endOfRows(false, 0x22)).isEqualTo(hex("fe 00 00 22 00"));
    }

    /** With CLIENT_SESSION_TRACK MariaDB reports a tracked variable's change in the OK, as built here. */
    @Test
    void mariaDbSendsTheOkWithSessionStateAsBuilt() throws IOException {
        TestMariaDb mariaDb = TestMariaDb.get();
        try (RawMySqlClient client = RawMySqlClient.connect(mariaDb.host(), mariaDb.port())) {
            assertThat(client.authenticate(TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD, null,
                    RawMySqlClient.CLIENT_SESSION_TRACK).isOk()).isTrue();

            client.sendQuery("SET time_zone = '+01:00'");

            assertThat(client.readPacket().payload()).isEqualTo(MySqlWire.okWithSessionState(0x00, 0, 0,
                    MySqlWire.SERVER_STATUS_AUTOCOMMIT | MySqlWire.SERVER_SESSION_STATE_CHANGED, 0, "",
                    MySqlWire.systemVariableChange("time_zone", "+01:00")));
        }
    }

    @Test
    void framesSplitALongPacketAndNumberEveryFrame() {
        byte[] exact = new byte[MySqlWire.MAX_PAYLOAD];
        byte[] longer = new byte[MySqlWire.MAX_PAYLOAD + 5];

        byte[] stream = new MySqlWire.Frames(1).packet(exact).packet(longer).packet(new byte[] {7}).toBytes();

        List<String> headers = new ArrayList<>();
        for (int pos = 0; pos < stream.length; ) {
            int length = (stream[pos] & 0xFF) | (stream[pos + 1] & 0xFF) << 8 | (stream[pos + 2] & 0xFF) << 16;
            headers.add(length + "#" + stream[pos + 3]);
            pos += 4 + length;
        }
        assertThat(headers).containsExactly(MySqlWire.MAX_PAYLOAD + "#1", "0#2", // ended by an empty frame
                MySqlWire.MAX_PAYLOAD + "#3", "5#4", "1#5");
        assertThatThrownBy(() -> MySqlWire.frame(0, longer)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void aGreetingReadsBackAsWritten() {
        byte[] scramble = "abcdefghijklmnopqrst".getBytes(StandardCharsets.US_ASCII);

        RawMySqlClient.Handshake greeting = RawMySqlClient.Handshake.parse(MySqlWire.handshakeV10(
                "5.5.5-10.11.0-test", 77, scramble, 0x000FA20F, MySqlWire.UTF8MB4_GENERAL_CI,
                MySqlWire.SERVER_STATUS_AUTOCOMMIT, "mysql_native_password"));

        assertThat(greeting.protocolVersion()).isEqualTo(10);
        assertThat(greeting.serverVersion()).isEqualTo("5.5.5-10.11.0-test");
        assertThat(greeting.connectionId()).isEqualTo(77);
        assertThat(greeting.seed()).isEqualTo(scramble);
        assertThat(greeting.capabilities()).isEqualTo(0x000FA20F);
        assertThat(greeting.authPlugin()).isEqualTo("mysql_native_password");
    }

    /**
     * MariaDB answers the commands built here, and what it sends back is what the response builders write: the OK to
     * COM_PING, a text result set's column count, rows and EOFs, COM_STMT_PREPARE_OK.
     */
    @Test
    void mariaDbAcceptsTheCommandsAndSendsWhatTheResponseBuildersWrite() throws IOException {
        TestMariaDb mariaDb = TestMariaDb.get();
        try (RawMySqlClient client = RawMySqlClient.login(mariaDb.host(), mariaDb.port(), TestMariaDb.ROOT_USER,
                TestMariaDb.ROOT_PASSWORD, null)) {
            client.writeRaw(MySqlWire.frame(0, MySqlWire.comPing()));
            assertThat(client.readPacket().payload()).isEqualTo(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT));

            client.writeRaw(MySqlWire.frame(0, MySqlWire.comQuery("SELECT 'a' AS x, NULL AS y UNION ALL SELECT"
                    + " REPEAT('b', 300), ''")));
            List<byte[]> result = readThroughEofs(client, 2);
            assertThat(result.get(0)).isEqualTo(MySqlWire.columnCount(2));
            assertThat(result.get(3)).isEqualTo(MySqlWire.eof(MySqlWire.SERVER_STATUS_AUTOCOMMIT));
            assertThat(result.get(4)).isEqualTo(MySqlWire.textRow("a", null));
            assertThat(result.get(5)).isEqualTo(MySqlWire.textRow("b".repeat(300), ""));
            assertThat(result.get(6)).isEqualTo(MySqlWire.eof(MySqlWire.SERVER_STATUS_AUTOCOMMIT));

            client.writeRaw(MySqlWire.frame(0, MySqlWire.comStmtPrepare("SELECT 6 * 7")));
            Packet prepared = client.readPacket();
            int statementId = (prepared.payload()[1] & 0xFF) | (prepared.payload()[2] & 0xFF) << 8;
            assertThat(prepared.payload()).isEqualTo(MySqlWire.prepareOk(statementId, 1, 0, 0));
            readThroughEofs(client, 1); // the column definition and its EOF
            client.writeRaw(MySqlWire.frame(0, MySqlWire.comStmtExecute(statementId, 0)));
            List<byte[]> executed = readThroughEofs(client, 2);
            assertThat(executed.get(0)).isEqualTo(MySqlWire.columnCount(1));
            assertThat(executed).hasSize(5); // count, definition, EOF, one binary row, EOF
            client.writeRaw(MySqlWire.frame(0, MySqlWire.comStmtClose(statementId))); // no answer

            client.writeRaw(MySqlWire.frame(0, MySqlWire.comInitDb("information_schema")));
            assertThat(client.readPacket().isOk()).isTrue();
            assertThat(client.query("SELECT DATABASE()").rows()).containsExactly(List.of("information_schema"));
        }
    }

    /** Reads packets up to and including the {@code eofs}-th EOF (the client has no CLIENT_DEPRECATE_EOF). */
    private static List<byte[]> readThroughEofs(RawMySqlClient client, int eofs) throws IOException {
        List<byte[]> packets = new ArrayList<>();
        for (int seen = 0; seen < eofs; ) {
            Packet packet = client.readPacket();
            assertThat(packet).as("packet %d of the response", packets.size()).isNotNull();
            packets.add(packet.payload());
            if (packet.isEof()) {
                seen++;
            }
        }
        return packets;
    }
}
