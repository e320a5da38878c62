package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.api.SessionSnapshot;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import io.sluice.testing.Tool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Transaction pooling end to end, through real drivers: sessions share two server connections, each keeps the
 * variables it set and none sees another's, and user variables pin a session to its connection.
 */
@Tag("server")
@Tag("tools")
class TransactionPoolingTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.transactionPooling().maxPoolSize(2))
            .database("sluice_it_txpool",
                    "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20) NOT NULL)");

    /**
     * Default URLs: MySQL Connector/J's does not negotiate CLIENT_SESSION_TRACK and MariaDB Connector/J's does; both
     * are multiplexed.
     */
    private static String params(JdbcDriver driver, String more) {
        return more;
    }

    private static String one(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).isTrue();
            return rs.getString(1);
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void sessionsShareConnectionsAndKeepTheirOwnVariables(JdbcDriver driver) throws Exception {
        List<Connection> clients = new ArrayList<>();
        try {
            for (int i = 0; i < 6; i++) {
                clients.add(proxy.connect(driver, proxy.db(), params(driver, "")));
            }
            for (int i = 0; i < clients.size(); i++) {
                try (Statement s = clients.get(i).createStatement()) {
                    s.execute("SET time_zone = '+0" + i + ":00'");
                }
            }
            Set<String> serverConnections = new HashSet<>();
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < clients.size(); i++) {
                    Connection c = clients.get(i);
                    assertThat(one(c, "SELECT @@time_zone")).isEqualTo("+0" + i + ":00");
                    serverConnections.add(one(c, "SELECT CONNECTION_ID()"));
                }
            }
            assertThat(serverConnections).hasSizeLessThanOrEqualTo(2);
            assertThat(proxy.sluice().backends().get(0).openConnections()).isLessThanOrEqualTo(2);
            for (SessionSnapshot s : proxy.sluice().sessions()) {
                assertThat(s.pinnedBy()).isNull();
            }
        } finally {
            for (Connection c : clients) {
                c.close();
            }
        }
    }

    /**
     * The mariadb client (libmariadb, as sysbench uses) negotiates CLIENT_SESSION_TRACK, so it multiplexes: while it
     * sleeps in a query, its session is not pinned, and its time zone survives connection switches.
     */
    @Test
    void mariadbClientMultiplexes() throws Exception {
        Path cli = Tool.MARIADB.path();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (Connection other = proxy.connect(JdbcDriver.MARIADB, proxy.db(), "")) {
            Future<String> output = pool.submit(() -> {
                Process p = new ProcessBuilder(cli.toString(), "--no-defaults", "-h" + proxy.host(),
                        "-P" + proxy.port(), "-u" + proxy.user(), "-p" + proxy.password(), "-D" + proxy.db(), "-N",
                        "-e",
                        "SET time_zone = '+03:00'; SELECT SLEEP(1.5); SELECT @@time_zone;")
                        .redirectErrorStream(true).start();
                String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                p.waitFor(30, TimeUnit.SECONDS);
                return out;
            });
            Set<String> pins = new HashSet<>();
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1200);
            while (System.nanoTime() < until) {
                one(other, "SELECT @@time_zone"); // takes the other connection in between
                for (SessionSnapshot s : proxy.sluice().sessions()) {
                    pins.add(String.valueOf(s.pinnedBy()));
                }
                Thread.sleep(50);
            }
            assertThat(output.get(30, TimeUnit.SECONDS)).isEqualTo("0\n+03:00\n");
            assertThat(pins).containsOnly("null");
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void userVariablesMoveWithTheirSessionAndNoOtherSeesThem(JdbcDriver driver) throws Exception {
        try (Connection a = proxy.connect(driver, proxy.db(), params(driver, ""));
                Connection b = proxy.connect(driver, proxy.db(), params(driver, ""))) {
            try (Statement s = a.createStatement()) {
                s.execute("SET @mine = 42");
            }
            Set<String> serverConnections = new HashSet<>();
            for (int i = 0; i < 4; i++) {
                assertThat(one(b, "SELECT @mine")).as("another session, on whichever connection").isNull();
                try (Statement s = a.createStatement(); ResultSet rs = s.executeQuery("SELECT @mine, CONNECTION_ID()")) {
                    rs.next();
                    assertThat(rs.getString(1)).isEqualTo("42");
                    serverConnections.add(rs.getString(2));
                }
                try (Statement s = b.createStatement()) {
                    s.execute("BEGIN"); // b holds one connection for a moment, so a moves to the other
                    one(b, "SELECT 1");
                    s.execute("COMMIT");
                }
            }
            assertThat(proxy.sluice().sessions()).extracting(SessionSnapshot::pinnedBy).containsOnlyNulls();
            assertThat(proxy.metrics().scrape()).doesNotContainPattern(
                    "sluice_session_pins_total\\{reason=\"user_variable\"\\} [1-9]");
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void preparedStatementsFollowTheSession(JdbcDriver driver) throws Exception {
        String params = params(driver, driver == JdbcDriver.MYSQL ? "useServerPrepStmts=true&cachePrepStmts=true"
                : "useServerPrepStmts=true");
        try (Connection a = proxy.connect(driver, proxy.db(), params);
                Connection b = proxy.connect(driver, proxy.db(), params)) {
            try (PreparedStatement insert = a.prepareStatement("INSERT INTO t (v) VALUES (?)");
                    PreparedStatement select = b.prepareStatement("SELECT v FROM t WHERE id = ?")) {
                for (int i = 0; i < 20; i++) {
                    insert.setString(1, "row" + i);
                    assertThat(insert.executeUpdate()).isEqualTo(1);
                    long id = Long.parseLong(one(a, "SELECT LAST_INSERT_ID()"));
                    select.setLong(1, id);
                    try (ResultSet rs = select.executeQuery()) {
                        assertThat(rs.next()).isTrue();
                        assertThat(rs.getString(1)).isEqualTo("row" + i);
                    }
                    one(b, "SELECT CONNECTION_ID()");
                }
            }
        }
    }

    private static RawMySqlClient multiplexedLogin(String schema, boolean expectOk) throws Exception {
        RawMySqlClient client = RawMySqlClient.connect(proxy.host(), proxy.port());
        RawMySqlClient.Packet reply = client.authenticate(proxy.user(), proxy.password(), schema,
                RawMySqlClient.CLIENT_SESSION_TRACK);
        if (expectOk) {
            assertThat(reply.isOk()).as("login to %s: %s", schema, reply).isTrue();
        } else {
            assertThat(reply.isErr()).as("login to %s: %s", schema, reply).isTrue();
            assertThat(reply.errorCode()).isEqualTo(1049);
            client.close();
            return null;
        }
        return client;
    }

    /**
     * A login to a schema an earlier login found takes no backend connection: here both server connections are held
     * by open transactions, and the login is still answered at once. A schema no login has found is still checked
     * by the server at login.
     */
    @Test
    void loginToAKnownSchemaNeedsNoBackendConnection() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        String known = mariaDb.createDatabase("sluice_it_txpool_known");
        try {
            try (RawMySqlClient first = multiplexedLogin(known, true)) {
                assertThat(first.query("SELECT DATABASE()").rows()).containsExactly(List.of(known));
            }
            List<Connection> holders = new ArrayList<>();
            RawMySqlClient late = null;
            try {
                for (int i = 0; i < 2; i++) {
                    Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), "");
                    holders.add(c);
                    try (Statement s = c.createStatement()) {
                        s.execute("START TRANSACTION");
                        s.execute("SELECT COUNT(*) FROM t");
                    }
                }
                assertThat(proxy.sluice().backends().get(0).openConnections()).isEqualTo(2);

                late = multiplexedLogin(known, true); // a login that needed a connection would wait for one here

                for (Connection c : holders) {
                    c.createStatement().execute("COMMIT");
                }
                assertThat(late.query("SELECT DATABASE()").rows()).containsExactly(List.of(known));
            } finally {
                for (Connection c : holders) {
                    c.close();
                }
                if (late != null) {
                    late.close();
                }
            }

            // A schema no login has found is still checked by the server at login.
            multiplexedLogin(known + "_missing", false);
        } finally {
            mariaDb.dropDatabase(known);
        }
    }
}
