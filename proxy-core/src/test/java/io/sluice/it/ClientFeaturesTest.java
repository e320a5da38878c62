package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.testing.Endpoints;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import io.sluice.testing.Tool;
import io.sluice.testing.Trace;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Protocol features beyond plain commands: LOAD DATA LOCAL INFILE (the server asks the client for a file mid-command),
 * 32 MiB packets split across frames, COM_CHANGE_USER, COM_RESET_CONNECTION and the mariadb command-line client.
 */
@Tag("server")
@Tag("tools")
class ClientFeaturesTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults()
            .beforeStart(mariaDb -> {
                // Before the proxy starts, so every pooled backend connection already has the larger limit.
                mariaDb.ensureMaxAllowedPacket(128L << 20);
                if (mariaDb.globalLong("local_infile") == 0) {
                    mariaDb.execute("SET GLOBAL local_infile = 1");
                }
            })
            .database("sluice_it_features");
    private static final Endpoints endpoints = proxy.endpoints();

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void loadDataLocalInfile(JdbcDriver driver, @TempDir Path dir) throws Exception {
        Path file = dir.resolve("rows.csv");
        StringBuilder csv = new StringBuilder();
        for (int i = 1; i <= 5000; i++) {
            csv.append(i).append(",name ").append(i).append(',').append(i % 3 == 0 ? "bad" : String.valueOf(i * 2)).append('\n');
        }
        Files.writeString(file, csv, StandardCharsets.UTF_8);
        String params = driver == JdbcDriver.MYSQL ? "allowLoadLocalInfile=true" : "allowLocalInfile=true";
        Trace[] traces = endpoints.runBothWays(driver, proxy.db(), params, (c, t) -> {
            try (Statement s = c.createStatement()) {
                Trace.quietly(s, "DROP TABLE IF EXISTS infile_rows", "CREATE TABLE infile_rows (id INT PRIMARY KEY, name VARCHAR(20), n INT)");
                t.execute(s, "LOAD DATA LOCAL INFILE '" + file.toAbsolutePath() + "' INTO TABLE infile_rows"
                        + " FIELDS TERMINATED BY ',' LINES TERMINATED BY '\\n'");
                t.execute(s, "SELECT COUNT(*), SUM(id), SUM(n), MAX(name) FROM infile_rows");
                t.execute(s, "SELECT 'after LOAD DATA'");
            }
        });
        assertThat(traces[1]).isEqualTo(traces[0]);
        assertThat(traces[0].toString()).contains("UpdateCount[count=5000]", "Warning[code=1366", "[5000, 12502500,",
                "after LOAD DATA");
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void blobOf32MiBRoundTrip(JdbcDriver driver) throws Exception {
        byte[] blob = new byte[32 << 20];
        new Random(42).nextBytes(blob);
        String expectedHash = Trace.sha256(blob);
        Trace[] traces = endpoints.runBothWays(driver, proxy.db(), "", (c, t) -> {
            try (Statement s = c.createStatement()) {
                Trace.quietly(s, "DROP TABLE IF EXISTS big", "CREATE TABLE big (id INT PRIMARY KEY, b LONGBLOB)");
            }
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO big VALUES (1, ?)")) {
                insert.setBytes(1, blob);
                t.add("inserted", insert.executeUpdate());
            }
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT b, LENGTH(b), SHA2(b, 256) FROM big")) {
                assertThat(rs.next()).isTrue();
                byte[] read = rs.getBytes(1);
                t.add("length", read.length).add("hash", Trace.sha256(read)).add("server length", rs.getLong(2))
                        .add("server hash", rs.getString(3)).add("identical", Arrays.equals(read, blob));
            }
        });
        assertThat(traces[1]).isEqualTo(traces[0]);
        assertThat(traces[0].toString()).contains("inserted, value=1", "length, value=" + blob.length,
                "hash, value=" + expectedHash, "server hash, value=" + expectedHash.substring(7), "identical, value=true");
    }

    @Test
    void changeUserReauthenticatesAgainstProxyUsers() throws Exception {
        try (Connection c = proxy.connect(JdbcDriver.MYSQL, proxy.db(), "")) {
            com.mysql.cj.jdbc.JdbcConnection mysql = c.unwrap(com.mysql.cj.jdbc.JdbcConnection.class);
            try (Statement s = c.createStatement()) {
                s.execute("SET @v = 42");
            }
            mysql.changeUser(proxy.user2(), proxy.password2());
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT @v, DATABASE(), 1 + 1")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getObject(1)).as("user variable after COM_CHANGE_USER").isNull();
                assertThat(rs.getString(2)).isEqualTo(proxy.db());
                assertThat(rs.getInt(3)).isEqualTo(2);
            }
            assertThatThrownBy(() -> mysql.changeUser(proxy.user(), "wrong-password"))
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(1045);
                        assertThat(e.getSQLState()).isEqualTo("28000");
                    });
        }
        assertHealthy();
    }

    @Test
    void resetConnectionClearsSessionState() throws Exception {
        // MariaDB Connector/J's reset() sends COM_RESET_CONNECTION (with useResetConnection, to MariaDB >= 10.2.4);
        // MySQL Connector/J would send COM_CHANGE_USER to a server reporting 5.5.5-... The raw client below sends it
        // by hand too.
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), "useResetConnection=true")) {
            try (Statement s = c.createStatement()) {
                s.execute("SET @v = 'kept?'");
                s.execute("CREATE TEMPORARY TABLE tmp_reset (id INT)");
            }
            c.unwrap(org.mariadb.jdbc.Connection.class).reset();
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT @v, DATABASE()")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getObject(1)).isNull();
                assertThat(rs.getString(2)).isEqualTo(proxy.db());
            }
            try (Statement s = c.createStatement()) {
                assertThatThrownBy(() -> s.executeQuery("SELECT * FROM tmp_reset"))
                        .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1146));
            }
        }
        try (RawMySqlClient raw = proxy.rawLogin(proxy.db())) {
            assertThat(raw.query("SET @w = 7").end().isOk()).isTrue();
            assertThat(raw.query("SELECT @w").rows()).containsExactly(java.util.List.of("7"));
            raw.sendCommand(MySqlWire.COM_RESET_CONNECTION, new byte[0]);
            RawMySqlClient.Packet reply = raw.readPacket();
            assertThat(reply).isNotNull();
            assertThat(reply.isOk()).as("reply to COM_RESET_CONNECTION: %s", reply).isTrue();
            assertThat(reply.sequence()).isEqualTo(1);
            assertThat(raw.query("SELECT @w").rows()).containsExactly(java.util.Collections.singletonList(null));
        }
    }

    @Test
    void mariadbCommandLineClient() throws Exception {
        Path cli = Tool.MARIADB.path();
        String sql = "SELECT 1 + 1 AS two, 'x' AS s, NULL AS n; SELECT CONCAT('db=', DATABASE()); SELECT 1/0; SHOW WARNINGS;"
                + " SELECT seq FROM seq_1_to_5";
        String direct = run(cli.toString(), "--no-defaults", "-h" + TestMariaDb.HOST, "-P" + TestMariaDb.get().port(),
                "-u" + TestMariaDb.ROOT_USER, "-D" + proxy.db(), "-e", sql);
        String proxied = run(cli.toString(), "--no-defaults", "-h" + proxy.host(), "-P" + proxy.port(),
                "-u" + proxy.user(), "-p" + proxy.password(), "-D" + proxy.db(), "-e", sql);
        assertThat(proxied).isEqualTo(direct);
        assertThat(direct).contains("two\ts\tn\n2\tx\tNULL", "db=" + proxy.db(), "Division by 0",
                "seq\n1\n2\n3\n4\n5");
        String denied = run(cli.toString(), "--no-defaults", "-h" + proxy.host(), "-P" + proxy.port(),
                "-u" + proxy.user(), "-pwrong", "-e", "SELECT 1");
        assertThat(denied).contains("ERROR 1045 (28000)");
    }

    private static String run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return out;
    }

    private static void assertHealthy() throws SQLException {
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), ""); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT 40 + 2")) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(1)).isEqualTo(42);
        }
    }
}
