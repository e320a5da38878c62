package io.sluice.pooling;

import static io.sluice.pooling.SessionIsolationTest.run;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code ROW_COUNT()} and {@code FOUND_ROWS()} in a server-prepared statement (issue #38): the server's are the
 * previous statement's on the server connection, which under transaction pooling may be another session's. Two proxy
 * users share the one server connection of the data source ({@code maxPoolSize: 1}); each reads only what its own
 * previous statement left, whether the statement was prepared before or after the other user's statement, and with
 * the column the client prepared. Each check failed before (user B read user A's count).
 */
@Tag("server")
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class PreparedPreviousValuesTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.transactionPooling().maxPoolSize(1)
                    .workerThreads(1).connectionTimeoutMillis(5_000))
            .sluiceOnly("transaction pooling is a proxy feature")
            .database("sluice_prepared_values",
                    "CREATE TABLE t (id INT PRIMARY KEY)",
                    "INSERT INTO t VALUES (1), (2), (3), (4), (5)",
                    "CREATE TABLE w (id INT PRIMARY KEY)");

    private static final String PARAMS = "useServerPrepStmts=true";

    private static Connection user(JdbcDriver driver, boolean second) throws SQLException {
        return driver.connect(proxy.jdbcUrl(driver, proxy.db(), PARAMS), second ? proxy.user2() : proxy.user(),
                second ? proxy.password2() : proxy.password());
    }

    /** Executes {@code p} and returns its one value, checking the column keeps the name the client prepared. */
    private static long value(PreparedStatement p, String column) throws SQLException {
        try (ResultSet rs = p.executeQuery()) {
            ResultSetMetaData md = rs.getMetaData();
            assertThat(md.getColumnLabel(1)).isEqualTo(column);
            assertThat(rs.next()).isTrue();
            return rs.getLong(1);
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aPreparedRowCountIsTheSessionsOwn(JdbcDriver driver) throws Exception {
        int k = 100 * (driver.ordinal() + 1);
        try (Connection a = user(driver, false); Connection b = user(driver, true)) {
            run(b, "INSERT INTO w VALUES (" + (k + 9) + ")");
            run(a, "INSERT INTO w VALUES (" + k + "), (" + (k + 1) + "), (" + (k + 2) + ")"); // the connection's last
            try (PreparedStatement rowCount = b.prepareStatement("SELECT ROW_COUNT()")) {
                assertThat(value(rowCount, "ROW_COUNT()")).as("prepared after A's INSERT").isEqualTo(1);
                run(a, "DELETE FROM w WHERE id BETWEEN " + k + " AND " + (k + 2));
                assertThat(value(rowCount, "ROW_COUNT()")).as("after B's own SELECT").isEqualTo(-1);
                run(b, "DELETE FROM w WHERE id = " + (k + 9));
                run(a, "INSERT INTO w VALUES (" + k + "), (" + (k + 1) + ")");
                assertThat(value(rowCount, "ROW_COUNT()")).as("prepared before A's INSERT").isEqualTo(1);
                assertThat(value(rowCount, "ROW_COUNT()")).as("again, nothing between").isEqualTo(-1);
            }
            try (PreparedStatement aliased = a.prepareStatement("SELECT ROW_COUNT() AS n, ? AS p")) {
                aliased.setInt(1, 7);
                try (ResultSet rs = aliased.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getLong("n")).as("A's own INSERT, B's SELECTs since").isEqualTo(2);
                    assertThat(rs.getInt("p")).isEqualTo(7);
                }
            }
            run(a, "DELETE FROM w WHERE id BETWEEN " + k + " AND " + (k + 1));
        }
    }

    /** MySQL Connector/J's cursor: the rows come by COM_STMT_FETCH, from the statement the execute ran on. */
    @org.junit.jupiter.api.Test
    void aCursorOverAPreparedRowCountFetchesItsRows() throws Exception {
        JdbcDriver driver = JdbcDriver.MYSQL;
        try (Connection a = user(driver, false);
                Connection b = driver.connect(proxy.jdbcUrl(driver, proxy.db(), PARAMS + "&useCursorFetch=true"),
                        proxy.user2(), proxy.password2())) {
            run(b, "INSERT INTO w VALUES (309)");
            run(a, "INSERT INTO w VALUES (300), (301), (302)");
            try (PreparedStatement p = b.prepareStatement("SELECT id, ROW_COUNT() FROM t ORDER BY id")) {
                p.setFetchSize(2);
                try (ResultSet rs = p.executeQuery()) {
                    int rows = 0;
                    while (rs.next()) {
                        rows++;
                        assertThat(rs.getInt(1)).isEqualTo(rows);
                        assertThat(rs.getLong(2)).as("B's own INSERT").isEqualTo(1);
                    }
                    assertThat(rows).isEqualTo(5);
                }
            }
            run(a, "DELETE FROM w WHERE id BETWEEN 300 AND 309");
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aPreparedFoundRowsIsTheSessionsOwn(JdbcDriver driver) throws Exception {
        try (Connection a = user(driver, false); Connection b = user(driver, true);
                PreparedStatement foundRows = b.prepareStatement("SELECT FOUND_ROWS()")) {
            run(b, "SELECT id FROM t ORDER BY id LIMIT 3");
            run(a, "SELECT id FROM t ORDER BY id LIMIT 1"); // the connection's last SELECT
            assertThat(value(foundRows, "FOUND_ROWS()")).as("B's own SELECT's rows").isEqualTo(3);
            run(a, "SELECT id FROM t ORDER BY id LIMIT 4");
            assertThat(value(foundRows, "FOUND_ROWS()")).as("B's SELECT FOUND_ROWS() returned one row").isEqualTo(1);
            // SQL_CALC_FOUND_ROWS keeps B on its connection (found_rows) until its next SELECT: the server's count
            run(b, "SELECT SQL_CALC_FOUND_ROWS id FROM t ORDER BY id LIMIT 2");
            assertThat(value(foundRows, "FOUND_ROWS()")).as("after SQL_CALC_FOUND_ROWS").isEqualTo(5);
            run(a, "SELECT id FROM t ORDER BY id LIMIT 1");
            assertThat(value(foundRows, "FOUND_ROWS()")).as("B's SELECT FOUND_ROWS() returned one row").isEqualTo(1);
        }
    }
}
