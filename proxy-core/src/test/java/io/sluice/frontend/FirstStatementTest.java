package io.sluice.frontend;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Which first statements may run on another server after theirs was found hung before answering (decision 160):
 * only those that change nothing beyond the session that runs them, since the hung server may still run them too.
 */
class FirstStatementTest {

    @ParameterizedTest
    @ValueSource(strings = {
        "SELECT @@port",
        "select @@version_comment limit 1",
        "SELECT id, name FROM shop.customers WHERE id = 7",
        "SHOW DATABASES",
        "/* app */ SELECT 1",
        "SELECT CONCAT(@@sql_mode, 'x'), NOW()",
        // what drivers send at connect
        "SET autocommit=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')",
        "set autocommit=1, session_track_schema=1, sql_mode = concat(@@sql_mode,',STRICT_TRANS_TABLES')",
        "SET NAMES utf8mb4",
        "SET character_set_results = NULL",
        "SET SESSION sql_mode = 'STRICT_ALL_TABLES'",
        "USE shop",
    })
    void changesNothingBeyondItsSession(String sql) {
        assertThat(FirstStatement.runsAgainHarmlessly(query(sql))).as(sql).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "INSERT INTO t VALUES (1)",
        "UPDATE t SET a = 1",
        "DELETE FROM t",
        "CREATE TABLE t (a INT)",
        "CALL p()",
        "SELECT * FROM t FOR UPDATE",
        "SELECT GET_LOCK('x', 1)",
        "SELECT f()",
        "SELECT shop.f(1)",
        "SELECT NEXTVAL(s)",
        "SELECT 1 INTO @x",
        "SELECT LAST_INSERT_ID()",
        "SHOW WARNINGS",
        "SELECT 1; DELETE FROM t",
        "/*!99999 SELECT 1 */ DELETE FROM t",
        "SET sql_mode = f()",
        "SET sql_mode = (SELECT shop.g())",
        "SET @x = 1",
        "SET GLOBAL max_connections = 10",
        "SET PASSWORD = PASSWORD('x')",
        "SET DEFAULT ROLE r FOR u",
        "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
        "LOCK TABLES t READ",
        "DO RELEASE_LOCK('x')",
        "",
    })
    void mayHaveDoneSomethingBeyondItsSession(String sql) {
        assertThat(FirstStatement.runsAgainHarmlessly(query(sql))).as(sql).isFalse();
    }

    /**
     * Decision 204: in sjis {@code '予'} ends in a backslash byte, and a reader of bytes takes the call after it for
     * text; a statement that is not all ASCII is not run again, whatever the session's character set.
     */
    @org.junit.jupiter.api.Test
    void textNotAllAsciiIsNotRunAgain() {
        String sql = "SELECT '予', add_row('x')";
        assertThat(FirstStatement.runsAgainHarmlessly(query(sql, java.nio.charset.Charset.forName("SJIS")))).isFalse();
        assertThat(FirstStatement.runsAgainHarmlessly(query("SELECT 'é'", StandardCharsets.UTF_8))).isFalse();
    }

    /** A COM_QUERY frame on the heap (no pooled memory to give back). */
    private static ByteBuf query(String sql) {
        return query(sql, StandardCharsets.UTF_8);
    }

    private static ByteBuf query(String sql, java.nio.charset.Charset charset) {
        byte[] text = sql.getBytes(charset);
        byte[] frame = new byte[Packets.HEADER_SIZE + 1 + text.length];
        int payload = text.length + 1;
        frame[0] = (byte) payload;
        frame[1] = (byte) (payload >> 8);
        frame[2] = (byte) (payload >> 16);
        frame[Packets.HEADER_SIZE] = (byte) Command.COM_QUERY;
        System.arraycopy(text, 0, frame, Packets.HEADER_SIZE + 1, text.length);
        return Unpooled.wrappedBuffer(frame);
    }
}
