package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.sluice.testing.MySqlWire;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.RawMySqlClient.Packet;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The small commands no JDBC test sends on its own: COM_PING, COM_STATISTICS, COM_FIELD_LIST, COM_SET_OPTION,
 * COM_INIT_DB, and a command Sluice refuses. Each is sent over a raw connection, directly and through Sluice, and the
 * response bytes must be the same; a query afterwards proves the relay still knows where responses end.
 */
@Tag("server")
class SmallCommandsTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults()
            .database("sluice_it_small", "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL)",
                    "INSERT INTO t VALUES (1, 'one'), (2, 'two')")
            .database("sluice_it_small_other");

    private static RawMySqlClient direct() throws IOException {
        TestMariaDb mariaDb = TestMariaDb.get();
        return RawMySqlClient.login(mariaDb.host(), mariaDb.port(), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD,
                proxy.db());
    }

    private static RawMySqlClient proxied() throws IOException {
        return proxy.rawLogin(proxy.db());
    }

    /** Sends one command and collects every packet that arrives until the connection falls silent. */
    private static List<Packet> exchange(RawMySqlClient client, int command, byte[] argument) throws IOException {
        client.sendCommand(command, argument);
        List<Packet> packets = new ArrayList<>();
        int timeout = client.socket().getSoTimeout();
        client.socket().setSoTimeout(400);
        try {
            while (true) {
                packets.add(client.readPacket());
            }
        } catch (SocketTimeoutException silent) {
            return packets;
        } finally {
            client.socket().setSoTimeout(timeout);
        }
    }

    private static void assertStillInStep(RawMySqlClient client) throws IOException {
        RawMySqlClient.QueryResult result = client.query("SELECT name FROM t ORDER BY id");
        assertThat(result.rows()).containsExactly(List.of("one"), List.of("two"));
    }

    private static List<String> payloads(List<Packet> packets) {
        List<String> out = new ArrayList<>();
        for (Packet packet : packets) {
            out.add(packet.sequence() + ":" + java.util.HexFormat.of().formatHex(packet.payload()));
        }
        return out;
    }

    @Test
    void comPingIsAnsweredAsTheServerAnswers() throws IOException {
        try (RawMySqlClient direct = direct(); RawMySqlClient proxied = proxied()) {
            List<Packet> expected = exchange(direct, MySqlWire.COM_PING, new byte[0]);
            List<Packet> actual = exchange(proxied, MySqlWire.COM_PING, new byte[0]);
            assertThat(actual).hasSize(1);
            assertThat(actual.get(0).isOk()).isTrue();
            assertThat(payloads(actual)).isEqualTo(payloads(expected));
            assertStillInStep(proxied);
        }
    }

    @Test
    void comStatisticsIsOneStatusLine() throws IOException {
        try (RawMySqlClient proxied = proxied()) {
            List<Packet> actual = exchange(proxied, MySqlWire.COM_STATISTICS, new byte[0]);
            assertThat(actual).hasSize(1);
            assertThat(new String(actual.get(0).payload(), StandardCharsets.US_ASCII)).startsWith("Uptime:");
            assertStillInStep(proxied);
        }
    }

    @Test
    void comFieldListListsTheColumnsAsTheServerDoes() throws IOException {
        byte[] table = "t\0".getBytes(StandardCharsets.US_ASCII);
        try (RawMySqlClient direct = direct(); RawMySqlClient proxied = proxied()) {
            List<Packet> expected = exchange(direct, MySqlWire.COM_FIELD_LIST, table);
            List<Packet> actual = exchange(proxied, MySqlWire.COM_FIELD_LIST, table);
            assertThat(actual).hasSize(3); // two column definitions and the EOF
            assertThat(actual.get(2).isEof()).isTrue();
            assertThat(payloads(actual)).isEqualTo(payloads(expected));
            assertStillInStep(proxied);
        }
    }

    @Test
    void comSetOptionTurnsOnMultiStatements() throws IOException {
        byte[] multiStatementsOn = {0, 0};
        String twoStatements = "SELECT 1; SELECT 'two'";
        try (RawMySqlClient direct = direct(); RawMySqlClient proxied = proxied()) {
            List<Packet> expectedOption = exchange(direct, MySqlWire.COM_SET_OPTION, multiStatementsOn);
            List<Packet> actualOption = exchange(proxied, MySqlWire.COM_SET_OPTION, multiStatementsOn);
            assertThat(payloads(actualOption)).isEqualTo(payloads(expectedOption));
            assertThat(actualOption.get(0).isErr()).isFalse();

            byte[] sql = twoStatements.getBytes(StandardCharsets.UTF_8);
            List<Packet> expected = exchange(direct, MySqlWire.COM_QUERY, sql);
            List<Packet> actual = exchange(proxied, MySqlWire.COM_QUERY, sql);
            assertThat(actual).hasSize(10); // two result sets of one column and one row, each 5 packets
            assertThat(payloads(actual)).isEqualTo(payloads(expected));
            assertStillInStep(proxied);
        }
    }

    @Test
    void comInitDbChangesTheSchema() throws IOException {
        byte[] schema = proxy.db(1).getBytes(StandardCharsets.UTF_8);
        try (RawMySqlClient proxied = proxied()) {
            List<Packet> answer = exchange(proxied, MySqlWire.COM_INIT_DB, schema);
            assertThat(answer).hasSize(1);
            assertThat(answer.get(0).isOk()).isTrue();
            assertThat(proxied.query("SELECT DATABASE()").rows()).containsExactly(List.of(proxy.db(1)));
            List<Packet> unknown = exchange(proxied, MySqlWire.COM_INIT_DB,
                    "sluice_no_such_db".getBytes(StandardCharsets.UTF_8));
            assertThat(unknown).hasSize(1);
            assertThat(unknown.get(0).errorCode()).isEqualTo(1049);
            assertThat(proxied.query("SELECT DATABASE()").rows()).containsExactly(List.of(proxy.db(1)));
        }
    }

    @Test
    void aReplicationCommandIsRefusedAndTheSessionGoesOn() throws IOException {
        // MariaDB itself serves COM_BINLOG_DUMP (and then streams the binary log): only Sluice refuses it.
        assumeFalse(ProxyUnderTest.isDirect(), "Sluice's refusal");
        try (RawMySqlClient proxied = proxied()) {
            List<Packet> answer = exchange(proxied, MySqlWire.COM_BINLOG_DUMP, new byte[10]);
            assertThat(answer).hasSize(1);
            assertThat(answer.get(0).errorCode()).isEqualTo(1047);
            assertThat(answer.get(0).sqlState()).isEqualTo("08S01");
            assertStillInStep(proxied);
        }
    }
}
