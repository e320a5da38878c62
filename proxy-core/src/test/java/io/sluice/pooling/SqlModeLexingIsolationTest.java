package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue #38 for sessions whose {@code sql_mode} changes how the server reads quotes: with
 * {@code NO_BACKSLASH_ESCAPES} a backslash in a string is a character, with {@code ANSI_QUOTES} a double quote
 * delimits a name, in which a backslash is a character too. Sluice's lexer reads both as in the default mode, where a
 * backslash escapes the quote after it: {@code 'a\'} then runs on, and the {@code GET_LOCK} after it is taken for
 * text. Such a statement must pin all the same (decision 204), and the lock must not reach the next session on the
 * pooled connection. Before, it pinned nothing and the next user held the lock.
 */
@Tag("server")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SqlModeLexingIsolationTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.transactionPooling().maxPoolSize(1)
                    .workerThreads(1).connectionTimeoutMillis(5_000))
            .sluiceOnly("transaction pooling is a proxy feature")
            .database("sluice_sqlmode");

    static Stream<Arguments> hidingStatements() {
        return Stream.of(
                // the server: the strings a\ and \; the lexer: one string from 'a\' to GET_LOCK('
                Arguments.of("NO_BACKSLASH_ESCAPES", "SELECT 'a\\' AS x, GET_LOCK('%s', 0) AS l, '\\' AS y"),
                // the server: the names a\ and \; the lexer: one string from "a\" to AS "
                Arguments.of("ANSI_QUOTES", "SELECT 1 AS \"a\\\", GET_LOCK('%s', 0) AS l, 2 AS \"\\\""));
    }

    @ParameterizedTest
    @MethodSource("hidingStatements")
    void aLockAfterAQuoteTheModeReadsOtherwisePins(String mode, String statement) throws SQLException {
        String lock = proxy.db() + "_" + mode.toLowerCase();
        String sql = String.format(statement, lock);
        JdbcDriver driver = JdbcDriver.MARIADB;
        try (Connection a = driver.connect(proxy.jdbcUrl(driver, proxy.db(), ""), proxy.user(), proxy.password());
             Statement s = a.createStatement()) {
            s.execute("SET SESSION sql_mode = CONCAT(@@sql_mode, '," + mode + "')");
            try (ResultSet rs = s.executeQuery(sql)) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(2)).as("the lock taken: %s", sql).isEqualTo("1");
            }
            assertThat(SessionIsolationTest.pinnedBy(proxy.sluice(), a)).isEqualTo("stored_code");
        }
        try (Connection b = driver.connect(proxy.jdbcUrl(driver, proxy.db(), ""), proxy.user2(),
                proxy.password2())) {
            assertThat(SessionIsolationTest.one(b, "SELECT IS_USED_LOCK('" + lock + "')"))
                    .as("A's lock, after A left, on the one server connection").isNull();
        }
    }
}
