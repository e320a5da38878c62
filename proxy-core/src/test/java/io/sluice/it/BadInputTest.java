package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.testing.JdbcDriver;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.SluiceExtension;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Clients that misbehave, by mistake or on purpose. Each one gets an ERR packet with the server's code and SQLSTATE
 * or a clean close, and after each a healthy session must still get correct answers ({@link #assertHealthy}).
 *
 * <p>The proxy runs with a pool of one backend connection, so a connection left dirty by a misbehaving client
 * (a half-read result, an unfinished command) would be handed to the very next session and show up there.
 */
@Tag("server")
class BadInputTest {

    private static final int MAX_PACKET = 1 << 20;

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.maxPoolSize(1).maxPacketSize(MAX_PACKET))
            .database("sluice_it_bad", "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))",
                    "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')");

    @AfterEach
    void anotherSessionStillWorks() throws Exception {
        assertHealthy();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void wrongPassword(JdbcDriver driver) {
        String url = proxy.jdbcUrl(driver, proxy.db(), "");
        assertThatThrownBy(() -> driver.connect(url, proxy.user(), "not-the-password").close())
                .isInstanceOfSatisfying(SQLException.class, e -> assertError(e, 1045, "28000"));
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void unknownUser(JdbcDriver driver) {
        assertThatThrownBy(() -> driver.connect(proxy.jdbcUrl(driver, proxy.db(), ""), "nobody_sluice", "x").close())
                .isInstanceOfSatisfying(SQLException.class, e -> assertError(e, 1045, "28000"));
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void unknownDatabase(JdbcDriver driver) {
        assertThatThrownBy(() -> proxy.connect(driver, "no_such_db_sluice", "").close())
                .isInstanceOfSatisfying(SQLException.class, e -> assertError(e, 1049, "42000"));
    }

    @Test
    void rawLoginWorksAndReportsErrorsLikeTheServer() throws Exception {
        try (RawMySqlClient raw = RawMySqlClient.connect(proxy.host(), proxy.port())) {
            assertThat(raw.handshake().protocolVersion()).isEqualTo(10);
            RawMySqlClient.Packet reply = raw.authenticate(proxy.user(), "wrong", null);
            assertThat(reply.isErr()).as("%s", reply).isTrue();
            assertThat(reply.errorCode()).isEqualTo(1045);
            assertThat(reply.sqlState()).isEqualTo("28000");
        }
        try (RawMySqlClient raw = proxy.rawLogin(proxy.db())) {
            assertThat(raw.query("SELECT v FROM t ORDER BY id").rows())
                    .containsExactly(List.of("one"), List.of("two"), List.of("three"));
            RawMySqlClient.Packet err = raw.query("SELECT nope FROM t").end();
            assertThat(err.errorCode()).isEqualTo(1054);
            assertThat(err.sqlState()).isEqualTo("42S22");
        }
    }

    @Test
    void garbageInsteadOfHandshakeResponse() throws Exception {
        try (RawMySqlClient raw = RawMySqlClient.connect(proxy.host(), proxy.port())) {
            raw.writeFrameHeader(12, 1);
            raw.writeRaw(new byte[] {(byte) 0xFF, (byte) 0xFE, 0x13, 0x37, 0, 0, 0, 0, 'j', 'u', 'n', 'k'});
            List<RawMySqlClient.Packet> packets = raw.readUntilClosed();
            assertErrOrNothing(packets, 1043, "08S01"); // ER_HANDSHAKE_ERROR "Bad handshake"
        }
        try (RawMySqlClient raw = RawMySqlClient.connect(proxy.host(), proxy.port())) {
            raw.writeRaw("GET / HTTP/1.1\r\nHost: sluice\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            List<RawMySqlClient.Packet> packets = raw.readUntilClosed();
            assertThat(packets.size()).isLessThanOrEqualTo(1);
            packets.forEach(p -> assertThat(p.isErr()).as("%s", p).isTrue());
        }
    }

    @Test
    void handshakeResponseOutOfSequence() throws Exception {
        try (RawMySqlClient raw = RawMySqlClient.connect(proxy.host(), proxy.port())) {
            byte[] response = raw.handshakeResponse(proxy.user(), proxy.password(), null, 0);
            raw.writeFrameHeader(response.length, 5); // the greeting was 0: the response must be 1
            raw.writeRaw(response);
            List<RawMySqlClient.Packet> packets = raw.readUntilClosed();
            assertThat(packets).as("%s", packets).hasSize(1);
            assertErrOrNothing(packets, 1156, "08S01"); // ER_NET_PACKETS_OUT_OF_ORDER, as MariaDB answers
        }
    }

    @Test
    void sluicesOwnAnswersToAPipeliningClientComeInOrder() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "COM_BINLOG_DUMP would start a replication stream on a server");
        try (RawMySqlClient raw = proxy.rawLogin(proxy.db())) {
            byte[] binlogDump = {MySqlWire.COM_BINLOG_DUMP, 4, 0, 0, 0, 0, 0, 1, 0, 0, 0};
            raw.writeRaw(MySqlWire.concat(MySqlWire.frame(0, MySqlWire.comQuery("SELECT SLEEP(0.3)")),
                    MySqlWire.frame(0, new byte[0]), MySqlWire.frame(0, binlogDump),
                    MySqlWire.frame(0, MySqlWire.comQuery("SELECT 'after'"))));
            List<RawMySqlClient.Packet> packets = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                packets.add(raw.readPacket());
            }
            // SELECT SLEEP: column count, definition, EOF, row, EOF; then the two ERRs; then the last result set.
            assertThat(packets.get(0).isErr()).as("the first command's result comes first: %s", packets).isFalse();
            assertThat(packets.get(4).isEof()).as("%s", packets).isTrue();
            assertThat(packets.get(5).errorCode()).isEqualTo(1047);
            assertThat(packets.get(5).errorMessage()).contains("empty packet");
            assertThat(packets.get(6).errorCode()).isEqualTo(1047);
            assertThat(packets.get(6).errorMessage()).contains("COM_BINLOG_DUMP");
            assertThat(new String(packets.get(10).payload(), 1, 5, java.nio.charset.StandardCharsets.UTF_8))
                    .as("%s", packets).isEqualTo("after");
            assertThat(packets.get(11).isEof()).isTrue();
        }
    }

    @Test
    void truncatedFrameThenDisconnect() throws Exception {
        // During the handshake...
        try (RawMySqlClient raw = RawMySqlClient.connect(proxy.host(), proxy.port())) {
            raw.writeFrameHeader(200, 1);
            raw.writeRaw(new byte[20]);
        }
        // ...and after login, in the middle of a command.
        try (RawMySqlClient raw = proxy.rawLogin(proxy.db())) {
            raw.writeFrameHeader(100, 0);
            raw.writeRaw(new byte[] {MySqlWire.COM_QUERY, 'S', 'E', 'L', 'E', 'C', 'T'});
        }
        assertHealthy();
    }

    @Test
    void commandLargerThanMaxPacketSize() throws Exception {
        try (RawMySqlClient raw = proxy.rawLogin(proxy.db())) {
            long limit = proxy.maxPacketSize();
            if (ProxyUnderTest.isDirect()) {
                limit = Long.parseLong(raw.query("SELECT @@max_allowed_packet").rows().get(0).get(0));
                assumeTrue(limit <= 64L << 20, "server max_allowed_packet too large to exceed cheaply: " + limit);
            }
            // One logical COM_QUERY of limit + 1 MiB bytes, sent as full 16 MiB - 1 frames plus a short last frame.
            long total = limit + (1 << 20);
            byte[] chunk = new byte[64 * 1024];
            java.util.Arrays.fill(chunk, (byte) ' ');
            boolean first = true;
            int seq = 0;
            try {
                for (long remaining = total; remaining >= 0; ) {
                    int frame = (int) Math.min(RawMySqlClient.MAX_FRAME, remaining);
                    raw.writeFrameHeader(frame, seq++);
                    int left = frame;
                    if (first && left > 0) {
                        raw.writeRaw(new byte[] {MySqlWire.COM_QUERY, 'S', 'E', 'L', 'E', 'C', 'T', ' ', '1'});
                        left -= 9;
                        first = false;
                    }
                    while (left > 0) {
                        int n = Math.min(left, chunk.length);
                        raw.socket().getOutputStream().write(chunk, 0, n);
                        left -= n;
                    }
                    remaining -= frame;
                    if (frame < RawMySqlClient.MAX_FRAME) {
                        break;
                    }
                }
                raw.socket().getOutputStream().flush();
            } catch (IOException closedWhileWriting) {
                // The endpoint may answer and close before reading it all: that is allowed.
            }
            assertErrOrNothing(raw.readUntilClosed(), 1153, "08S01");
        }
    }

    @Test
    void clientVanishesInTheMiddleOfALargeResult() throws Exception {
        for (int round = 0; round < 3; round++) {
            RawMySqlClient raw = proxy.rawLogin(proxy.db());
            raw.sendQuery("SELECT seq, REPEAT('x', 1000) FROM seq_1_to_200000");
            for (int i = 0; i < 50; i++) {
                assertThat(raw.readPacket()).isNotNull();
            }
            raw.abort();
            assertHealthy();
        }
        // The same through JDBC: a streaming result abandoned by aborting the connection.
        Connection c = proxy.connect(JdbcDriver.MYSQL, proxy.db(), "");
        Statement s = c.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY);
        s.setFetchSize(Integer.MIN_VALUE);
        ResultSet rs = s.executeQuery("SELECT seq, REPEAT('y', 1000) FROM seq_1_to_200000");
        for (int i = 0; i < 10; i++) {
            assertThat(rs.next()).isTrue();
        }
        c.abort(Runnable::run);
        assertHealthy();
    }

    @Test
    void clientPipelinesWithoutReadingThenVanishes() throws Exception {
        // The server blocks writing results nobody reads, and Sluice stops reading what the client sends: when the
        // client goes, the pool's only connection must be closed at once, not left to the server's net_write_timeout.
        for (boolean reset : new boolean[] {true, false}) {
            RawMySqlClient raw = proxy.rawLogin(proxy.db());
            // 10 KiB a command, 200 KiB a result: 30 MiB of commands fill every buffer on the way both ways.
            byte[] query = MySqlWire.frame(0, MySqlWire.comQuery("SELECT seq, REPEAT('x', 1000) FROM seq_1_to_200 /*"
                    + " ".repeat(10_000) + "*/"));
            byte[] pipelined = new byte[query.length * 3_000];
            for (int i = 0; i < 3_000; i++) {
                System.arraycopy(query, 0, pipelined, i * query.length, query.length);
            }
            Thread writer = new Thread(() -> {
                try {
                    raw.writeRaw(pipelined); // blocks once every buffer on the way is full
                } catch (IOException closed) {
                    // the test closes the socket under it
                }
            });
            writer.start();
            writer.join(2_000); // long enough to fill the buffers
            if (reset) {
                raw.abort();
            } else {
                raw.close();
            }
            writer.join();
            assertHealthy(); // with a pool of one connection, this needs the one the client had
        }
    }

    @Test
    void maxConnectionsReached() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "server.maxConnections is a proxy setting");
        try (ProxyUnderTest limited = ProxyUnderTest.builder().maxConnections(3).start()) {
            List<Connection> open = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    open.add(limited.connect(JdbcDriver.MARIADB, proxy.db(), ""));
                }
                for (JdbcDriver driver : JdbcDriver.values()) {
                    assertThatThrownBy(() -> limited.connect(driver, proxy.db(), "").close())
                            .isInstanceOfSatisfying(SQLException.class, e -> assertError(e, 1040, "08004"));
                }
                open.remove(0).close();
                Thread.sleep(200); // the proxy notices the close asynchronously
                open.add(limited.connect(JdbcDriver.MYSQL, proxy.db(), ""));
                for (Connection c : open) {
                    try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
                        assertThat(rs.next()).isTrue();
                        assertThat(rs.getInt(1)).isEqualTo(3);
                    }
                }
            } finally {
                for (Connection c : open) {
                    c.close();
                }
            }
        }
    }

    static void assertError(SQLException e, int code, String sqlState) {
        assertThat(e.getErrorCode()).as("error code of %s", e).isEqualTo(code);
        assertThat(e.getSQLState()).as("SQLSTATE of %s", e).isEqualTo(sqlState);
    }

    private static void assertErrOrNothing(List<RawMySqlClient.Packet> packets, int code, String sqlState) {
        assertThat(packets.size()).as("packets before close: %s", packets).isLessThanOrEqualTo(1);
        for (RawMySqlClient.Packet p : packets) {
            assertThat(p.isErr()).as("%s", p).isTrue();
            assertThat(p.errorCode()).as("%s", p).isEqualTo(code);
            assertThat(p.sqlState()).as("%s", p).isEqualTo(sqlState);
        }
    }

    /** A new session, through both drivers, sees exactly the table's rows: nothing left over from a broken one. */
    private static void assertHealthy() throws SQLException {
        for (JdbcDriver driver : JdbcDriver.values()) {
            try (Connection c = proxy.connect(driver, proxy.db(), ""); Statement s = c.createStatement()) {
                try (ResultSet rs = s.executeQuery("SELECT id, v FROM t ORDER BY id")) {
                    List<String> rows = new ArrayList<>();
                    while (rs.next()) {
                        rows.add(rs.getInt(1) + "=" + rs.getString(2));
                    }
                    assertThat(rows).containsExactly("1=one", "2=two", "3=three");
                }
                try (ResultSet rs = s.executeQuery("SELECT @@in_transaction, DATABASE()")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1)).isZero();
                    assertThat(rs.getString(2)).isEqualTo(proxy.db());
                }
            }
        }
    }
}
