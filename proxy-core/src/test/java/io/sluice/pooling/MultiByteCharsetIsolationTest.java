package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import java.nio.charset.Charset;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
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
