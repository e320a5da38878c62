package io.sluice.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.auth.PasswordHash;
import io.sluice.config.UserConfig;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.Command;
import io.sluice.relay.ResponseKind;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link ReplayConnection} against a real MariaDB, one response shape at a time: what each command comes to (affected
 * rows, rows, error code and message, the prepared statement id) is what replay compares with the capture, and the
 * connection must be ready for the next command after every shape, the odd ones included (several results, a LOCAL
 * INFILE request, a cursor, a row split into 16 MiB frames).
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class ReplayConnectionTest {
    /** A parameter of type MYSQL_TYPE_LONGLONG, as COM_STMT_EXECUTE names it. */
    private static final int MYSQL_TYPE_LONGLONG = 0x08;
    /** COM_STMT_EXECUTE's flag that asks for a read-only cursor. */
    private static final int CURSOR_TYPE_READ_ONLY = 0x01;
    /** Just over one frame's largest payload, so that the packet takes two frames. */
    private static final int OVER_ONE_FRAME = (16 << 20) + 100;

    private static TestMariaDb server;
    private static String db;
    private ReplayConnection connection;

    @BeforeAll
    static void createTable() {
        server = TestMariaDb.get();
        server.ensureMaxAllowedPacket(64L << 20); // before connecting: a connection keeps the value it started with
        if (server.globalLong("local_infile") == 0) {
            server.execute("SET GLOBAL local_infile = 1");
        }
        db = server.createDatabase("replay_connection");
    }

    @AfterAll
    static void dropDatabase() {
        server.dropDatabase(db);
    }

    @BeforeEach
    void connect() throws IOException {
        connection = open(Capabilities.CLIENT_MULTI_STATEMENTS | Capabilities.CLIENT_LOCAL_FILES);
        query("CREATE OR REPLACE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))");
        query("INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')");
    }

    @AfterEach
    void close() {
        connection.close();
    }

    private static ReplayConnection open(int capturedCapabilities) throws IOException {
        return ReplayConnection.open(server.host(), server.port(), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD,
                db, capturedCapabilities, 0, 10_000);
    }

    private ReplayConnection.Result run(int command, byte[] payload) throws IOException {
        return connection.execute(command, payload, Replay.expectedResponse(command));
    }

    private ReplayConnection.Result query(String sql) throws IOException {
        return run(Command.COM_QUERY, sql.getBytes(StandardCharsets.UTF_8));
    }

    /** The connection still answers a plain query correctly: the last response was read to its end, no further. */
    private void assertInStep() throws IOException {
        ReplayConnection.Result ping = run(Command.COM_PING, new byte[0]);
        assertThat(ping.isError()).isFalse();
        assertThat(query("SELECT id FROM t WHERE id <= 2").rows()).isEqualTo(2);
    }

    @Test
    void textResultsCountRowsAndAffectedRows() throws IOException {
        assertThat(query("SELECT id, v FROM t").rows()).isEqualTo(4);
        assertThat(query("SELECT id FROM t WHERE id > 100").rows()).isZero();
        ReplayConnection.Result update = query("UPDATE t SET v = 'z' WHERE id >= 3");
        assertThat(update.affectedRows()).isEqualTo(2);
        assertThat(update.rows()).isZero();
        assertThat(update.isError()).isFalse();
        assertInStep();
    }

    @Test
    void anErrorGivesItsCodeAndMessage() throws IOException {
        ReplayConnection.Result result = query("SELECT * FROM no_such_table");
        assertThat(result.errorCode()).isEqualTo(1146);
        assertThat(result.errorMessage()).contains("no_such_table").doesNotStartWith("#");
        assertInStep();
    }

    @Test
    void severalResultsAreSummedOverAllOfThem() throws IOException {
        ReplayConnection.Result result = query("INSERT INTO t VALUES (5, 'e'); SELECT id FROM t;"
                + " UPDATE t SET v = 'y' WHERE id <= 2; SELECT id FROM t WHERE id = 1");
        assertThat(result.isError()).isFalse();
        assertThat(result.affectedRows()).isEqualTo(3);
        assertThat(result.rows()).isEqualTo(6);
        assertInStep();
    }

    @Test
    void anErrorInALaterResultEndsTheResponse() throws IOException {
        ReplayConnection.Result result = query("SELECT id FROM t; SELECT * FROM no_such_table; SELECT 1");
        assertThat(result.errorCode()).isEqualTo(1146);
        assertThat(result.rows()).isEqualTo(4);
        assertInStep();
    }

    @Test
    void aLocalInfileRequestGetsNoDataAndLoadsNothing() throws IOException {
        ReplayConnection.Result result = query("LOAD DATA LOCAL INFILE '/replay/has/no/file.csv' INTO TABLE t");
        assertThat(result.isError()).isFalse();
        assertThat(result.affectedRows()).isZero();
        assertThat(query("SELECT id FROM t").rows()).isEqualTo(4);
    }

    @Test
    void aPrepareWithParametersAndColumnsGivesItsStatementId() throws IOException {
        ReplayConnection.Result prepare = run(Command.COM_STMT_PREPARE,
                "SELECT id, v FROM t WHERE id > ? AND v <> ?".getBytes(StandardCharsets.UTF_8));
        assertThat(prepare.isError()).isFalse();
        assertThat(prepare.statementId()).isPositive();
        assertInStep();

        ReplayConnection.Result execute = run(Command.COM_STMT_EXECUTE,
                execute(prepare.statementId(), 0, 1, "x"));
        assertThat(execute.isError()).isFalse();
        assertThat(execute.rows()).isEqualTo(3);
        assertInStep();

        run(Command.COM_STMT_CLOSE, statementId(prepare.statementId(), 0));
        assertInStep();
    }

    @Test
    void aFailedPrepareGivesNoStatementId() throws IOException {
        ReplayConnection.Result prepare = run(Command.COM_STMT_PREPARE,
                "SELECT nothing FROM no_such_table WHERE id = ?".getBytes(StandardCharsets.UTF_8));
        assertThat(prepare.errorCode()).isEqualTo(1146);
        assertThat(prepare.statementId()).isZero();
        assertInStep();
    }

    @Test
    void aCursorOpensWithoutRowsAndFetchesCountThem() throws IOException {
        long id = run(Command.COM_STMT_PREPARE, "SELECT id FROM t WHERE id > ?".getBytes(StandardCharsets.UTF_8))
                .statementId();

        ReplayConnection.Result open = run(Command.COM_STMT_EXECUTE, execute(id, CURSOR_TYPE_READ_ONLY, 0));
        assertThat(open.isError()).isFalse();
        assertThat(open.rows()).as("a cursor's rows come with COM_STMT_FETCH").isZero();

        assertThat(run(Command.COM_STMT_FETCH, statementId(id, 3)).rows()).isEqualTo(3);
        assertThat(run(Command.COM_STMT_FETCH, statementId(id, 3)).rows()).isEqualTo(1);
        run(Command.COM_STMT_CLOSE, statementId(id, 0));
        assertInStep();
    }

    @Test
    void singlePacketAnswersAndCommandsWithoutOne() throws IOException {
        assertThat(run(Command.COM_INIT_DB, "no_such_schema_here".getBytes(StandardCharsets.UTF_8)).errorCode())
                .isEqualTo(1049);
        assertThat(run(Command.COM_INIT_DB, db.getBytes(StandardCharsets.UTF_8)).isError()).isFalse();
        assertThat(run(Command.COM_STATISTICS, new byte[0]).isError()).as("a status string, not an error").isFalse();
        assertThat(run(Command.COM_RESET_CONNECTION, new byte[0]).isError()).isFalse();
        ReplayConnection.Result none = run(Command.COM_STMT_CLOSE, statementId(123_456, 0));
        assertThat(none.isError()).isFalse();
        assertInStep();
    }

    @Test
    void aFieldListEndsWithItsEof() throws IOException {
        ReplayConnection.Result result = run(Command.COM_FIELD_LIST, "t\0".getBytes(StandardCharsets.UTF_8));
        assertThat(result.isError()).isFalse();
        assertThat(result.rows()).isZero();
        assertThat(run(Command.COM_FIELD_LIST, "no_such_table\0".getBytes(StandardCharsets.UTF_8)).errorCode())
                .isEqualTo(1146);
        assertInStep();
    }

    @Test
    void aRowOver16MiBArrivesInSeveralFrames() throws IOException {
        // Only responses can be this long: a capture marks a command longer than one frame truncated, and replay
        // skips it, so replay never sends one.
        ReplayConnection.Result result = query("SELECT REPEAT('y', " + OVER_ONE_FRAME + "), 2 UNION ALL SELECT 'z', 3");
        assertThat(result.isError()).isFalse();
        assertThat(result.rows()).isEqualTo(2);
        assertInStep();
    }

    @Test
    void aRefusedLoginSaysWhy() {
        assertThatThrownBy(() -> ReplayConnection.open(server.host(), server.port(), TestMariaDb.ROOT_USER,
                "not-the-password", db, 0, 0, 10_000))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("login refused").hasMessageContaining("Access denied");
    }

    /**
     * Every step of the login exchange, against Sluice's own authentication (MariaDB has no caching_sha2_password): a
     * caching_sha2_password account is switched to it from the greeting's mysql_native_password, takes the full path
     * the first time (the RSA key asked for and the password sent encrypted, since replay uses no TLS) and the fast
     * path the second.
     */
    @Test
    void aCachingSha2AccountLogsInThroughTheFullPathThenTheFastOne() throws IOException {
        Assumptions.assumeFalse(ProxyUnderTest.isDirect(), "needs Sluice's own authentication");
        String user = "replay_sha2";
        String password = "replay-sha2-secret";
        try (ProxyUnderTest proxy = ProxyUnderTest.builder()
                .user(new UserConfig(user, "%", null, PasswordHash.cachingSha2Hash(password), 0)).start()) {
            for (String path : new String[] {"full", "fast"}) {
                try (ReplayConnection viaSluice = ReplayConnection.open(proxy.host(), proxy.port(), user, password,
                        null, 0, 0, 10_000)) {
                    ReplayConnection.Result result = viaSluice.execute(Command.COM_QUERY,
                            "SELECT 6 * 7".getBytes(StandardCharsets.UTF_8), ResponseKind.RESULT);
                    assertThat(result.isError()).as(path).isFalse();
                    assertThat(result.rows()).as(path).isEqualTo(1);
                }
            }
            assertThatThrownBy(() -> ReplayConnection.open(proxy.host(), proxy.port(), user, "wrong", null, 0, 0,
                    10_000).close()).isInstanceOf(IOException.class).hasMessageContaining("login refused");
        }
    }

    /** A COM_STMT_EXECUTE payload binding BIGINT and VARCHAR parameters, in that order. */
    private static byte[] execute(long statementId, int flags, long number, String... text) {
        int params = 1 + text.length;
        ByteBuffer payload = ByteBuffer.allocate(64).order(ByteOrder.LITTLE_ENDIAN);
        payload.putInt((int) statementId).put((byte) flags).putInt(1); // iteration count: always 1
        payload.put(new byte[(params + 7) / 8]); // no parameter is NULL
        payload.put((byte) 1); // new-params-bound: the types follow
        payload.putShort((short) MYSQL_TYPE_LONGLONG);
        for (int i = 0; i < text.length; i++) {
            payload.putShort((short) 0xFD); // MYSQL_TYPE_VAR_STRING
        }
        payload.putLong(number);
        for (String s : text) {
            byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
            payload.put((byte) bytes.length).put(bytes);
        }
        byte[] out = new byte[payload.position()];
        payload.flip().get(out);
        return out;
    }

    /** A statement id and a 4-byte row count: COM_STMT_FETCH's payload; COM_STMT_CLOSE's without the count. */
    private static byte[] statementId(long statementId, int rows) {
        ByteBuffer payload = ByteBuffer.allocate(rows > 0 ? 8 : 4).order(ByteOrder.LITTLE_ENDIAN);
        payload.putInt((int) statementId);
        if (rows > 0) {
            payload.putInt(rows);
        }
        return payload.array();
    }
}
