package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.JdbcDriver;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.SluiceExtension;
import java.nio.charset.Charset;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue #38 for clients whose character set has two-byte characters whose second byte is an ASCII backslash (sjis,
 * cp932, gbk, gb18030, big5): in {@code '予'} sent in sjis the server reads one character, where a reader of bytes
 * that does not know the character set reads a backslash that escapes the closing quote, and takes what follows for
 * the string's text. A {@code GET_LOCK} after such a literal must pin all the same, and the lock must not reach the
 * next session on the pooled connection. Sluice does not read such text (decision 204): in these sets a statement
 * that is not all ASCII counts as code the text does not show ({@code stored_code}); one that is all ASCII is read as
 * in any set. Before, the session did not pin, and the next user on the connection held A's lock.
 */
@Tag("server")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MultiByteCharsetIsolationTest {
    /** sjis_japanese_ci, the sjis set's default collation. */
    private static final int SJIS_JAPANESE_CI = 13;

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.transactionPooling().maxPoolSize(1)
                    .workerThreads(1).connectionTimeoutMillis(5_000))
            .sluiceOnly("transaction pooling is a proxy feature")
            .database("sluice_mb");

    @ParameterizedTest
    @ValueSource(strings = {"SJIS", "windows-31j", "GBK", "Big5"})
    void aLockAfterALiteralEndingInABackslashBytePins(String encoding) throws SQLException {
        String literal = String.valueOf(endingInBackslash(Charset.forName(encoding)));
        String lock = proxy.db() + "_" + encoding;
        JdbcDriver driver = JdbcDriver.MYSQL;
        try (Connection a = driver.connect(proxy.jdbcUrl(driver, proxy.db(), "characterEncoding=" + encoding),
                proxy.user(), proxy.password())) {
            assertThat(SessionIsolationTest.one(a, "SELECT '" + literal + "' AS x, GET_LOCK('" + lock + "', 0)"))
                    .isEqualTo(literal);
            assertThat(SessionIsolationTest.one(a, "SELECT IS_USED_LOCK('" + lock + "') = CONNECTION_ID()"))
                    .as("A holds the lock").isEqualTo("1");
            assertThat(SessionIsolationTest.pinnedBy(proxy.sluice(), a)).isEqualTo("stored_code");
        }
        try (Connection b = driver.connect(proxy.jdbcUrl(driver, proxy.db(), ""), proxy.user2(),
                proxy.password2())) {
            assertThat(SessionIsolationTest.one(b, "SELECT IS_USED_LOCK('" + lock + "')"))
                    .as("A's lock, after A left, on the one server connection").isNull();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"SJIS", "GBK"})
    void aStatementAllAsciiPoolsInThoseSetsToo(String encoding) throws SQLException {
        JdbcDriver driver = JdbcDriver.MYSQL;
        try (Connection a = driver.connect(proxy.jdbcUrl(driver, proxy.db(), "characterEncoding=" + encoding),
                proxy.user(), proxy.password())) {
            assertThat(SessionIsolationTest.one(a, "SELECT @@character_set_client")).isEqualTo(encoding.toLowerCase());
            assertThat(SessionIsolationTest.one(a, "SELECT 'plain', 1 + 1 AS two")).isEqualTo("plain");
            assertThat(SessionIsolationTest.pinnedBy(proxy.sluice(), a)).isNull();
        }
    }

    /**
     * COM_RESET_CONNECTION gives the session its handshake's character set again (utf8mb4 here): Sluice must follow,
     * or it goes on taking the session's text for sjis and pins a statement only because it is not all ASCII.
     */
    @Test
    void aResetSessionIsReadInItsHandshakesSetAgain() throws Exception {
        try (RawMySqlClient a = RawMySqlClient.login(proxy.host(), proxy.port(), proxy.user(), proxy.password(),
                proxy.db())) {
            assertThat(a.query("SET NAMES sjis").end().isOk()).isTrue();
            assertThat(a.query("SELECT @@character_set_client").rows()).containsExactly(List.of("sjis"));
            a.sendCommand(MySqlWire.COM_RESET_CONNECTION, new byte[0]);
            assertThat(a.readPacket().isOk()).as("the reset answered").isTrue();
            assertThat(a.query("SELECT @@character_set_client").rows()).containsExactly(List.of("utf8mb4"));
            // UTF-8 bytes above ASCII: in sjis Sluice would not read them (decision 204); in utf8mb4 it does
            assertThat(a.query("SELECT 'caf\u00e9' AS x, 1 + 1 AS two").rows())
                    .containsExactly(List.of("caf\u00e9", "2"));
            assertThat(proxy.sluice().sessions()).singleElement()
                    .satisfies(s -> assertThat(s.pinnedBy()).as("pinned after the reset").isNull());
        }
    }

    /**
     * COM_CHANGE_USER names the session's character set anew, as libmysqlclient's {@code mysql_change_user} does
     * after {@code mysql_set_character_set}: the server's session then runs in it, and so must the session through
     * Sluice, whose connections log in with the client's collation. Before, Sluice kept the handshake's (the server
     * read the client's sjis as utf8mb4) and read the session's text as utf8mb4 too, so a lock after a literal ending
     * in a 0x5C byte went to the next user of the connection.
     */
    @Test
    void aChangeOfUserTakesTheCharacterSetItNames() throws Exception {
        Charset sjis = Charset.forName("SJIS");
        String literal = String.valueOf(endingInBackslash(sjis));
        String lock = proxy.db() + "_change_user";
        try (RawMySqlClient a = RawMySqlClient.login(proxy.host(), proxy.port(), proxy.user(), proxy.password(),
                proxy.db())) {
            byte[] changeUser = MySqlWire.payload().strNul(proxy.user2()).int1(20)
                    .bytes(RawMySqlClient.nativePassword(proxy.password2(), a.handshake().seed()))
                    .strNul(proxy.db()).int2(SJIS_JAPANESE_CI).strNul("mysql_native_password").toBytes();
            a.sendCommand(MySqlWire.COM_CHANGE_USER, changeUser);
            RawMySqlClient.Packet reply = a.readPacket();
            assertThat(reply.isOk()).as("the change of user answered: %s", reply).isTrue();
            assertThat(a.query("SELECT @@character_set_client, @@character_set_connection").rows())
                    .containsExactly(List.of("sjis", "sjis"));
            a.sendCommand(MySqlWire.COM_QUERY, ("SELECT '" + literal + "' AS x, GET_LOCK('" + lock + "', 0) AS l")
                    .getBytes(sjis));
            assertThat(a.readResult().rows()).as("the lock taken").hasSize(1);
            assertThat(proxy.sluice().sessions()).singleElement()
                    .satisfies(s -> assertThat(s.pinnedBy()).isEqualTo("stored_code"));
        }
        try (Connection b = JdbcDriver.MYSQL.connect(proxy.jdbcUrl(JdbcDriver.MYSQL, proxy.db(), ""), proxy.user2(),
                proxy.password2())) {
            assertThat(SessionIsolationTest.one(b, "SELECT IS_USED_LOCK('" + lock + "')"))
                    .as("A's lock, after A left, on the one server connection").isNull();
        }
    }

    /** The first CJK ideograph whose encoding in {@code charset} is two bytes, the second a backslash (0x5C). */
    static char endingInBackslash(Charset charset) {
        for (char c = 0x4E00; c < 0x9FFF; c++) {
            byte[] bytes = String.valueOf(c).getBytes(charset);
            if (bytes.length == 2 && bytes[1] == '\\') {
                return c;
            }
        }
        throw new IllegalArgumentException(charset + " has no such character");
    }
}
