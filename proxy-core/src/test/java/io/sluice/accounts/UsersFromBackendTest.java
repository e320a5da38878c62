package io.sluice.accounts;

import static io.sluice.accounts.ThreeAccounts.ADMIN;
import static io.sluice.accounts.ThreeAccounts.ADMIN_PASSWORD;
import static io.sluice.accounts.ThreeAccounts.READER;
import static io.sluice.accounts.ThreeAccounts.READER_PASSWORD;
import static io.sluice.accounts.ThreeAccounts.WRITER;
import static io.sluice.accounts.ThreeAccounts.WRITER_PASSWORD;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.LoginBackoff;
import io.sluice.config.ServerAccountsConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import io.sluice.testing.Tool;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code authority.users: FROM_BACKEND} (issue #39, decision 146): clients log in with the server's own accounts and
 * passwords, which Sluice reads from {@code mysql.global_priv}, and run on the server as those accounts. Sluice holds
 * no password: it logs in to the server with the SHA1(password) the client's mysql_native_password scramble yields to
 * the holder of the stored hash. Accounts created, dropped or changed on the server take effect without a restart;
 * an account whose plugin Sluice cannot speak gets a clear ERR, never the data source's account.
 */
@Tag("server")
@Tag("tools")
class UsersFromBackendTest {
    private static ThreeAccounts accounts;
    private static ProxyUnderTest sessionPooling;
    private static ProxyUnderTest transactionPooling;

    @BeforeAll
    static void start() {
        accounts = new ThreeAccounts();
        sessionPooling = fromBackend(ProxyUnderTest.builder(), 60_000).start();
        transactionPooling = fromBackend(ProxyUnderTest.builder(), 60_000).transactionPooling().start();
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable each : new AutoCloseable[] {sessionPooling, transactionPooling}) {
            if (each != null) {
                try {
                    each.close();
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        if (accounts != null) {
            accounts.execute("DROP USER IF EXISTS 'acc_new'@'%'", "DROP USER IF EXISTS 'acc_sock'@'%'",
                    "DROP USER IF EXISTS 'acc_gone'@'%'");
            accounts.close();
        }
    }

    /** No minimum interval between readings: every unknown user or failed password reads the accounts again. */
    private static ProxyUnderTest.Builder fromBackend(ProxyUnderTest.Builder builder, long refreshMillis) {
        return builder.config(c -> c.withUsersFromBackend(new ServerAccountsConfig(refreshMillis, 0)));
    }

    static Stream<Arguments> poolingAndDriver() {
        List<Arguments> all = new ArrayList<>();
        for (String pooling : new String[] {"SESSION", "TRANSACTION"}) {
            for (JdbcDriver driver : JdbcDriver.values()) {
                all.add(Arguments.of(pooling, driver));
            }
        }
        return all.stream();
    }

    private static Connection connect(ProxyUnderTest proxy, JdbcDriver driver, String user, String password)
            throws SQLException {
        return driver.connect(proxy.jdbcUrl(driver, accounts.db, ""), user, password);
    }

    private static String one(Connection c, String sql) throws SQLException {
        return MappedAccountsTest.one(c, sql);
    }

    @ParameterizedTest(name = "{0} pooling, {1}")
    @MethodSource("poolingAndDriver")
    void eachClientRunsAsItsServerAccount(String pooling, JdbcDriver driver) throws Exception {
        ProxyUnderTest proxy = "SESSION".equals(pooling) ? sessionPooling : transactionPooling;
        try (Connection reader = connect(proxy, driver, READER, READER_PASSWORD);
             Connection writer = connect(proxy, driver, WRITER, WRITER_PASSWORD);
             Connection admin = connect(proxy, driver, ADMIN, ADMIN_PASSWORD)) {
            assertThat(one(reader, "SELECT CURRENT_USER()")).startsWith(READER + "@");
            assertThat(one(writer, "SELECT CURRENT_USER()")).startsWith(WRITER + "@");
            assertThat(one(admin, "SELECT CURRENT_USER()")).startsWith(ADMIN + "@");
            assertThat(String.join("\n", MappedAccountsTest.column(reader, "SHOW GRANTS")))
                    .contains("GRANT SELECT ON `" + accounts.db).doesNotContain("INSERT");
            assertThatThrownBy(() -> reader.createStatement().executeUpdate("DELETE FROM t"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1142));
            try (Statement s = writer.createStatement()) {
                assertThat(s.executeUpdate("UPDATE t SET v = 'one' WHERE id = 1")).isEqualTo(1);
            }
            assertThat(new HashSet<>(MappedAccountsTest.column(reader,
                    "SELECT USER FROM information_schema.PROCESSLIST"))).containsExactly(READER);
            if ("SESSION".equals(pooling)) {
                assertThat(MappedAccountsTest.column(admin,
                        "SELECT USER FROM information_schema.PROCESSLIST WHERE USER LIKE 'acc\\\\_%'"))
                        .contains(READER, WRITER, ADMIN);
            }
        }
    }

    @Test
    void aWrongPasswordIsDeniedAsByTheServer() {
        assertThatThrownBy(() -> connect(sessionPooling, JdbcDriver.MARIADB, READER, "not-it").close())
                .isInstanceOfSatisfying(SQLException.class, e -> {
                    assertThat(e.getErrorCode()).isEqualTo(1045);
                    assertThat(e.getMessage()).contains("Access denied for user '" + READER + "'");
                });
        assertThatThrownBy(() -> connect(sessionPooling, JdbcDriver.MARIADB, "acc_nobody", "x").close())
                .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
    }

    /** Created after Sluice read the accounts: its first login has them read again. */
    @Test
    void anAccountCreatedOnTheServerLogsInWithoutARestart() throws Exception {
        accounts.execute("DROP USER IF EXISTS 'acc_new'@'%'",
                "CREATE USER 'acc_new'@'%' IDENTIFIED BY 'new-pw'",
                "GRANT SELECT ON `" + accounts.db + "`.* TO 'acc_new'@'%'");
        try (Connection c = connect(transactionPooling, JdbcDriver.MYSQL, "acc_new", "new-pw")) {
            assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acc_new@%");
            assertThat(one(c, "SELECT v FROM t WHERE id = 1")).isEqualTo("one");
        } finally {
            accounts.execute("DROP USER IF EXISTS 'acc_new'@'%'");
        }
    }

    /** A changed password takes effect at once: a login failing against the last reading has it read again. */
    @Test
    void aChangedPasswordTakesEffect() throws Exception {
        try (ProxyUnderTest proxy = fromBackend(ProxyUnderTest.builder(), 60_000).start()) {
            accounts.execute("DROP USER IF EXISTS 'acc_gone'@'%'", "CREATE USER 'acc_gone'@'%' IDENTIFIED BY 'pw-1'",
                    "GRANT SELECT ON `" + accounts.db + "`.* TO 'acc_gone'@'%'");
            try (Connection c = connect(proxy, JdbcDriver.MARIADB, "acc_gone", "pw-1")) {
                assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acc_gone@%");
            }
            accounts.execute("ALTER USER 'acc_gone'@'%' IDENTIFIED BY 'pw-2'");
            try (Connection c = connect(proxy, JdbcDriver.MARIADB, "acc_gone", "pw-2")) {
                assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acc_gone@%");
            }
            assertThatThrownBy(() -> connect(proxy, JdbcDriver.MARIADB, "acc_gone", "pw-1").close())
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
        } finally {
            accounts.execute("DROP USER IF EXISTS 'acc_gone'@'%'");
        }
    }

    /** Dropped on the server: once the accounts are read again (here every 300 ms), its logins are denied. */
    @Test
    void aDroppedAccountCannotLogIn() throws Exception {
        try (ProxyUnderTest proxy = fromBackend(ProxyUnderTest.builder(), 300).start()) {
            accounts.execute("DROP USER IF EXISTS 'acc_gone'@'%'", "CREATE USER 'acc_gone'@'%' IDENTIFIED BY 'pw-1'",
                    "GRANT SELECT ON `" + accounts.db + "`.* TO 'acc_gone'@'%'");
            try (Connection c = connect(proxy, JdbcDriver.MARIADB, "acc_gone", "pw-1")) {
                assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acc_gone@%");
            }
            accounts.execute("DROP USER 'acc_gone'@'%'");
            Thread.sleep(1_000); // three readings
            assertThatThrownBy(() -> connect(proxy, JdbcDriver.MARIADB, "acc_gone", "pw-1").close())
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
        } finally {
            accounts.execute("DROP USER IF EXISTS 'acc_gone'@'%'");
        }
    }

    /** unix_socket: Sluice can neither check nor log in as it; the client is told so, not run as root. */
    @Test
    void anAccountOfAPluginSluiceCannotSpeakGetsAClearError() {
        accounts.execute("DROP USER IF EXISTS 'acc_sock'@'%'", "CREATE USER 'acc_sock'@'%' IDENTIFIED VIA unix_socket");
        try {
            assertThatThrownBy(() -> connect(sessionPooling, JdbcDriver.MARIADB, "acc_sock", "").close())
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(1251);
                        assertThat(e.getMessage()).contains("unix_socket");
                    });
        } finally {
            accounts.execute("DROP USER IF EXISTS 'acc_sock'@'%'");
        }
    }

    @Test
    void changeUserSwitchesToAnotherServerAccount() throws Exception {
        try (Connection c = connect(transactionPooling, JdbcDriver.MYSQL, READER, READER_PASSWORD)) {
            c.unwrap(com.mysql.cj.jdbc.JdbcConnection.class).changeUser(WRITER, WRITER_PASSWORD);
            assertThat(one(c, "SELECT CURRENT_USER()")).startsWith(WRITER + "@");
            assertThatThrownBy(() -> c.unwrap(com.mysql.cj.jdbc.JdbcConnection.class).changeUser(ADMIN, "wrong"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
        }
    }

    /** The host pattern is the server's: an account for another host does not let a client of this one in. */
    @Test
    void anAccountForAnotherHostIsDenied() {
        accounts.execute("DROP USER IF EXISTS 'acc_far'@'10.9.9.9'",
                "CREATE USER 'acc_far'@'10.9.9.9' IDENTIFIED BY 'far-pw'");
        try {
            assertThatThrownBy(() -> connect(sessionPooling, JdbcDriver.MARIADB, "acc_far", "far-pw").close())
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
        } finally {
            accounts.execute("DROP USER IF EXISTS 'acc_far'@'10.9.9.9'");
        }
    }

    /** Wrong passwords of a server account take their turn in the login back-off, as Sluice's own users' do. */
    @Test
    void wrongPasswordsFollowTheLoginBackoff() throws Exception {
        try (ProxyUnderTest proxy = fromBackend(ProxyUnderTest.builder(), 60_000)
                .server(s -> s.withHardening(s.handshakeTimeoutMilliseconds(), s.idleTimeoutMilliseconds(),
                        new LoginBackoff(2, 800, 800))).start()) {
            for (int i = 0; i < 2; i++) {
                assertThatThrownBy(() -> connect(proxy, JdbcDriver.MARIADB, WRITER, "wrong").close())
                        .isInstanceOf(SQLException.class);
            }
            long started = System.nanoTime();
            try (Connection c = connect(proxy, JdbcDriver.MARIADB, WRITER, WRITER_PASSWORD)) {
                assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started))
                        .as("the login waited for its turn").isGreaterThanOrEqualTo(600);
                assertThat(one(c, "SELECT CURRENT_USER()")).startsWith(WRITER + "@");
            }
        }
    }

    @Test
    void mariadbClientRunsAsItsServerAccount() throws Exception {
        Process p = new ProcessBuilder(Tool.MARIADB.path().toString(), "--no-defaults", "-h" + sessionPooling.host(),
                "-P" + sessionPooling.port(), "-u" + WRITER, "-p" + WRITER_PASSWORD, "-D" + accounts.db, "-N", "-e",
                "SELECT CURRENT_USER(); SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER <> '" + WRITER
                        + "'").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(out).contains(WRITER + "@").contains("\n0");
    }

    @Test
    void noPasswordIsHeldOnlyTheStageOneHash() throws Exception {
        // The server's own check of what Sluice logs in with: a connection of the reader exists as acc_reader.
        try (Connection c = connect(sessionPooling, JdbcDriver.MARIADB, READER, READER_PASSWORD);
             Connection root = TestMariaDb.get().rootConnection();
             Statement s = root.createStatement();
             ResultSet rs = s.executeQuery("SELECT USER FROM information_schema.PROCESSLIST WHERE ID = "
                     + one(c, "SELECT CONNECTION_ID()"))) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getString(1)).isEqualTo(READER);
        }
    }
}
