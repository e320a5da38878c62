package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.SluiceExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code maxRows} rules end to end on the real server (decision 191), with MariaDB Connector/J (text, streamed) and
 * MySQL Connector/J (server-side prepared): a result longer than the limit gets its first rows then ERR 1226, the
 * next statement on the same session works on the same backend connection, and a result within the limit is
 * untouched. Run under session and transaction pooling by the two classes that extend it.
 */
abstract class QueryRuleRowsCases {
    private static final int LIMIT = 3;

    abstract SluiceExtension proxy();

    private void useRules(QueryRuleConfig... rules) {
        proxy().sluice().reload(proxy().sluice().config().withQueryRules(List.of(rules)));
    }

    @AfterEach
    void noRules() {
        useRules();
    }

    private void limitRows() {
        useRules(new QueryRuleConfig("rows-cap", null, "^(select seq|call rows_two)", List.of(), List.of(), List.of(), List.of(),
                Action.MAX_ROWS, null, null, LIMIT, null));
    }

    private long acted() {
        return proxy().sluice().queryRules().rules().get(0).counters().actedCount();
    }

    private static long connectionId(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void textResultGetsTheFirstRowsThenTheError() throws Exception {
        limitRows();
        try (Connection c = proxy().connect(JdbcDriver.MARIADB, proxy().db(), "")) {
            long before = connectionId(c);
            for (String rows : List.of("10", "100000")) {
                int seen = 0;
                try (Statement s = c.createStatement()) {
                    s.setFetchSize(1); // streamed: the rows before the error are read one by one
                    try (ResultSet rs = s.executeQuery("SELECT seq FROM seq_1_to_" + rows)) {
                        while (rs.next()) {
                            seen++;
                            assertThat(rs.getInt(1)).isEqualTo(seen);
                        }
                    }
                    throw new AssertionError("no error after " + seen + " rows");
                } catch (SQLException e) {
                    assertThat(e.getErrorCode()).isEqualTo(1226);
                    assertThat(e.getSQLState()).isEqualTo("42000");
                    assertThat(e.getMessage()).contains("rows-cap").contains("more than 3 rows");
                }
                assertThat(seen).as("rows before the error").isEqualTo(LIMIT);
                assertThat(connectionId(c)).as("the same backend connection, in step").isEqualTo(before);
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT seq FROM seq_1_to_3")) {
                int n = 0;
                while (rs.next()) {
                    n++;
                }
                assertThat(n).as("a result within the limit is untouched").isEqualTo(LIMIT);
            }
        }
    }

    @Test
    void theLimitCountsTheRowsOfEveryResultOfTheStatement() throws Exception {
        try (Connection c = proxy().connect(JdbcDriver.MARIADB, proxy().db(), "");
                Statement s = c.createStatement()) {
            s.execute("CREATE PROCEDURE IF NOT EXISTS rows_two() BEGIN SELECT seq FROM seq_1_to_2;"
                    + " SELECT seq FROM seq_1_to_5; END");
        }
        limitRows();
        long actedBefore = acted();
        try (Connection c = proxy().connect(JdbcDriver.MARIADB, proxy().db(), "")) {
            long before = connectionId(c);
            int seen = 0;
            try (Statement s = c.createStatement()) {
                s.setFetchSize(1);
                boolean results = s.execute("CALL rows_two()");
                while (results || s.getUpdateCount() != -1) {
                    if (results) {
                        try (ResultSet rs = s.getResultSet()) {
                            while (rs.next()) {
                                seen++;
                            }
                        }
                    }
                    results = s.getMoreResults();
                }
                throw new AssertionError("no error after " + seen + " rows");
            } catch (SQLException e) {
                assertThat(e.getErrorCode()).isEqualTo(1226);
                assertThat(e.getMessage()).contains("rows-cap");
            }
            assertThat(seen).as("2 rows of the first result, 1 of the second").isEqualTo(LIMIT);
            assertThat(connectionId(c)).as("the same backend connection, in step").isEqualTo(before);
        }
        assertThat(acted() - actedBefore).as("statements cut").isEqualTo(1);
    }

    @Test
    void withoutDeprecateEofTheErrorTakesTheCutRowsSequenceId() throws Exception {
        limitRows();
        try (RawMySqlClient client = RawMySqlClient.login("127.0.0.1", proxy().port(), ProxyUnderTest.USER,
                ProxyUnderTest.PASSWORD, proxy().db())) {
            RawMySqlClient.QueryResult cut = client.query("SELECT seq FROM seq_1_to_1000");
            assertThat(cut.rows()).extracting(row -> row.get(0)).containsExactly("1", "2", "3");
            // column count 1, definition 2, EOF 3, rows 4 to 6: the ERR takes the 4th row's 7
            assertThat(cut.end().isErr()).as(cut.end().toString()).isTrue();
            assertThat(cut.end().sequence()).isEqualTo(7);
            assertThat(cut.end().errorCode()).isEqualTo(1226);
            assertThat(cut.end().errorMessage()).isEqualTo("Statement refused by query rule rows-cap: more than 3 rows");
            RawMySqlClient.QueryResult whole = client.query("SELECT seq FROM seq_1_to_3");
            assertThat(whole.rows()).hasSize(LIMIT);
            assertThat(whole.end().isEof()).as("a result within the limit is untouched").isTrue();
            assertThat(client.query("SELECT 1").rows()).containsExactly(List.of("1"));
        }
    }

    @Test
    void preparedResultGetsTheError() throws Exception {
        limitRows();
        try (Connection c = proxy().connect(JdbcDriver.MYSQL, proxy().db(), "useServerPrepStmts=true")) {
            long before = connectionId(c);
            try (PreparedStatement p = c.prepareStatement("SELECT seq FROM seq_1_to_100 WHERE seq > ?")) {
                p.setInt(1, 0);
                assertThatThrownBy(p::executeQuery).isInstanceOf(SQLException.class)
                        .hasMessageContaining("rows-cap").hasMessageContaining("more than 3 rows")
                        .extracting(e -> ((SQLException) e).getErrorCode()).isEqualTo(1226);
                p.setInt(1, 97);
                try (ResultSet rs = p.executeQuery()) {
                    int n = 0;
                    while (rs.next()) {
                        n++;
                    }
                    assertThat(n).as("a result within the limit is untouched").isEqualTo(LIMIT);
                }
            }
            assertThat(connectionId(c)).as("the same backend connection, in step").isEqualTo(before);
        }
    }
}
