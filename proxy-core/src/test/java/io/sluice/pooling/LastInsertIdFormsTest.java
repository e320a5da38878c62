package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every form in which a statement reads the session's last-insert id gets the session's own, under transaction
 * pooling on one server connection that another session inserts on in between (issue #38): the function in any
 * case, back-quoted, inside a CTE or a VALUES, and its system-variable names {@code @@last_insert_id} and
 * {@code @@identity}. Before, the back-quoted call and the variables read the server's value, the other session's
 * (0 after the reset between them). One event loop: with two, the loop without the connection waits a second for
 * the other to yield it (the slot balancer keeps a connection idle only between transactions, {@code SlotBalancer}), per
 * statement.
 */
@Tag("server")
class LastInsertIdFormsTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.transactionPooling().maxPoolSize(1).workerThreads(1))
            .sluiceOnly("Sluice's transaction pooling").database("sluice_lid_forms_");

    @ParameterizedTest
    @ValueSource(strings = {"SELECT LAST_INSERT_ID()", "select last_insert_id ( )", "SELECT /* id */ LAST_INSERT_ID()",
            "SELECT `LAST_INSERT_ID`()", "SELECT @@last_insert_id", "SELECT @@identity", "SELECT @@session.identity",
            "SELECT @@SESSION.last_insert_id + 0", "VALUES (LAST_INSERT_ID())",
            "WITH x AS (SELECT LAST_INSERT_ID() AS v) SELECT v FROM x", "(SELECT LAST_INSERT_ID())"})
    void readsTheSessionsOwnId(String read) throws SQLException {
        try (Connection a = proxy.connect(JdbcDriver.MARIADB, proxy.db(), "");
                Connection b = proxy.connect(JdbcDriver.MARIADB, proxy.db(), "");
                Statement sa = a.createStatement(); Statement sb = b.createStatement()) {
            sa.execute("CREATE TABLE IF NOT EXISTS ai (id INT AUTO_INCREMENT PRIMARY KEY, n INT)");
            sa.executeUpdate("INSERT INTO ai (n) VALUES (1)");
            long own = single(sa, "SELECT MAX(id) FROM ai");
            sb.executeUpdate("INSERT INTO ai (n) VALUES (2)"); // on the one server connection, after a's
            assertThat(single(sa, read)).as(read).isEqualTo(own);
            assertThat(single(sb, read)).as("the other session's, " + read).isEqualTo(own + 1);
        }
    }

    /**
     * A statement Sluice writes the session's id into keeps every other byte: a latin1 client's text (MySQL
     * Connector/J's {@code characterEncoding}) was read as UTF-8 and written back so, and its {@code 'José'} reached
     * the server as {@code 'Jos'} and a replacement character's three bytes.
     */
    @Test
    void aRewrittenStatementKeepsTheClientsBytes() throws SQLException {
        try (Connection a = proxy.connect(JdbcDriver.MYSQL, proxy.db(), "characterEncoding=ISO-8859-1");
                Statement sa = a.createStatement()) {
            sa.execute("CREATE TABLE IF NOT EXISTS named (id INT AUTO_INCREMENT PRIMARY KEY, s VARCHAR(20),"
                    + " parent INT) CHARACTER SET utf8mb4");
            sa.executeUpdate("INSERT INTO named (s, parent) VALUES ('José', LAST_INSERT_ID())");
            try (ResultSet rs = sa.executeQuery("SELECT 'Ça va', LAST_INSERT_ID(), (SELECT s FROM named"
                    + " WHERE id = LAST_INSERT_ID())")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("Ça va");
                assertThat(rs.getString(3)).as("the row the INSERT wrote").isEqualTo("José");
            }
        }
    }

    private static long single(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).isTrue();
            return rs.getLong(1);
        }
    }
}
