package io.sluice.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/** Checks the fixture itself: the server answers as root and hands out fresh databases. */
class TestMariaDbTest {

    @Test
    void servesFreshDatabasesAsRoot() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        String db = mariaDb.createDatabase("sluice_fixture");
        try (Connection c = mariaDb.connect(JdbcDriver.MYSQL, db, ""); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE t (id INT PRIMARY KEY)");
            s.execute("INSERT INTO t VALUES (1), (2)");
            try (ResultSet rs = s.executeQuery("SELECT DATABASE(), COUNT(*), VERSION() FROM t")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo(db);
                assertThat(rs.getInt(2)).isEqualTo(2);
                assertThat(rs.getString(3)).containsIgnoringCase("mariadb");

            }
        } finally {
            mariaDb.dropDatabase(db);
        }
        assertThat(mariaDb.port()).isEqualTo(mariaDb.isEmbedded() ? mariaDb.port() : 3306);
        // Read through MariaDB Connector/J: MySQL Connector/J 9.5 reported 0 here against the embedded 11.4 server
        // although LOAD DATA LOCAL worked.
        assertThat(mariaDb.globalLong("local_infile")).isEqualTo(1);
        if (mariaDb.isEmbedded()) {
            assertThat(mariaDb.globalLong("max_allowed_packet")).isGreaterThanOrEqualTo(256L << 20);
        }
    }
}
