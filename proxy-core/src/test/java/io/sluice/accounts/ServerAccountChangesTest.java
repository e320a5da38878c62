package io.sluice.accounts;

import static io.sluice.accounts.MappedAccountsTest.one;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mysql.cj.jdbc.JdbcConnection;
import io.sluice.config.ServerAccountsConfig;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Accounts that change on the server while Sluice runs with {@code users: FROM_BACKEND} (issue #39; decisions 170,
 * 171): COM_CHANGE_USER to an account Sluice has not read yet, or with a password changed since, reads the accounts
 * again as a login does, within the same rate limit; a password changed under open sessions leaves them working on
 * the connections there are, gives them a clear 1045 when they need a new one, and never has Sluice repeat a login
 * the server refused (the server counts those, and with {@code max_password_errors} blocks the account).
 * COM_CHANGE_USER is sent by MySQL Connector/J's {@code changeUser} (what {@code mysql_change_user} sends; the mariadb
 * CLI has no command that sends it).
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class ServerAccountChangesTest {
    private static final TestMariaDb MARIADB = TestMariaDb.get();
    private static String db;

    @BeforeAll
    static void accounts() {
        db = MARIADB.createDatabase("acct2_");
        MARIADB.executeIn(db, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)");
        create(MARIADB::execute, "acct2_first", "first-pw");
        create(MARIADB::execute, "acct2_moved", "moved-pw-1");
    }

    @AfterAll
    static void drop() {
        MARIADB.execute("DROP USER IF EXISTS 'acct2_first'@'%'", "DROP USER IF EXISTS 'acct2_moved'@'%'",
                "DROP USER IF EXISTS 'acct2_late'@'%'", "DROP USER IF EXISTS 'acct2_later'@'%'");
        MARIADB.dropDatabase(db);
    }

    private interface Sql {
        void execute(String... sql);
    }

    private static void create(Sql server, String user, String password) {
        server.execute("DROP USER IF EXISTS '" + user + "'@'%'",
                "CREATE USER '" + user + "'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('" + password
                        + "')",
                "GRANT SELECT ON " + (db == null ? "*" : "`" + db + "`") + ".* TO '" + user + "'@'%'");
    }

    private static ProxyUnderTest.Builder fromBackend(long minRefreshMillis) {
        return ProxyUnderTest.builder().transactionPooling()
                .config(c -> c.withUsersFromBackend(new ServerAccountsConfig(60_000, minRefreshMillis)));
    }

    private static Connection connect(ProxyUnderTest proxy, String database, String user, String password)
            throws SQLException {
        return JdbcDriver.MYSQL.connect(proxy.jdbcUrl(JdbcDriver.MYSQL, database, ""), user, password);
    }

    private static void changeUser(Connection c, String user, String password) throws SQLException {
        c.unwrap(JdbcConnection.class).changeUser(user, password);
    }

    /** Created after Sluice read the accounts: COM_CHANGE_USER to it has them read again, then switches. */
    @Test
    void changeUserToAnAccountCreatedSinceTheReading() throws Exception {
        try (ProxyUnderTest proxy = fromBackend(0).start();
             Connection c = connect(proxy, db, "acct2_first", "first-pw")) {
            assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acct2_first@%");
            create(MARIADB::execute, "acct2_late", "late-pw");
            changeUser(c, "acct2_late", "late-pw");
            assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acct2_late@%");
            assertThat(one(c, "SELECT id FROM t")).isEqualTo("1");
        } finally {
            MARIADB.execute("DROP USER IF EXISTS 'acct2_late'@'%'");
        }
    }

    /** A password changed on the server: COM_CHANGE_USER with the new one checks it against a fresh reading. */
    @Test
    void changeUserWithAPasswordChangedSinceTheReading() throws Exception {
        create(MARIADB::execute, "acct2_moved", "moved-pw-1");
        try (ProxyUnderTest proxy = fromBackend(0).start();
             Connection c = connect(proxy, db, "acct2_first", "first-pw");
             Connection moved = connect(proxy, db, "acct2_moved", "moved-pw-1")) {
            assertThat(one(moved, "SELECT CURRENT_USER()")).isEqualTo("acct2_moved@%");
            MARIADB.execute("ALTER USER 'acct2_moved'@'%' IDENTIFIED BY 'moved-pw-2'");
            changeUser(c, "acct2_moved", "moved-pw-2");
            assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acct2_moved@%");
            assertThatThrownBy(() -> changeUser(c, "acct2_first", "not-it"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
        }
        try (ProxyUnderTest proxy = fromBackend(0).start();
             Connection c = connect(proxy, db, "acct2_first", "first-pw")) {
            assertThatThrownBy(() -> changeUser(c, "acct2_moved", "moved-pw-1"))
                    .as("the old password").isInstanceOfSatisfying(SQLException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(1045));
        }
    }

    /**
     * The rate limit is a login's: within {@code minRefreshIntervalMilliseconds} of the last reading, an account
     * created since is not read for COM_CHANGE_USER, and the switch is denied as the login would be.
     */
    @Test
    void changeUserReadsTheAccountsNoFasterThanTheRateLimit() throws Exception {
        try (ProxyUnderTest proxy = fromBackend(600_000).start();
             Connection c = connect(proxy, db, "acct2_first", "first-pw")) {
            create(MARIADB::execute, "acct2_later", "later-pw");
            assertThatThrownBy(() -> changeUser(c, "acct2_later", "later-pw"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
        } finally {
            MARIADB.execute("DROP USER IF EXISTS 'acct2_later'@'%'");
        }
    }

    /**
     * A password changed under open sessions, on a server of the test's own that blocks an account after three
     * failed logins in a row ({@code max_password_errors}), so that its {@code Access_denied_errors} counts only
     * Sluice's attempts. Sessions logged in before the change keep working on the account's pooled connections, as
     * the server lets them; when they need a new connection the server refuses their stale hash once, they get a
     * clear 1045 (not a loop of logins: the account is not blocked), the old password no longer logs in, the new one
     * does.
     */
    @Test
    void aPasswordChangedUnderOpenSessions() throws Exception {
        try (ExtraMariaDb server = ExtraMariaDb.start("acct2-pw", List.of("--max-password-errors=3"))) {
            server.execute("CREATE DATABASE acct2_pw", "CREATE TABLE acct2_pw.t (id INT PRIMARY KEY)",
                    "INSERT INTO acct2_pw.t VALUES (1)");
            server.execute("CREATE USER 'acct2_pw'@'%' IDENTIFIED BY 'pw-1'",
                    "GRANT SELECT ON acct2_pw.* TO 'acct2_pw'@'%'");
            try (ProxyUnderTest proxy = fromBackend(0).backendUrl(server.jdbcUrl("")).start()) {
                List<Connection> sessions = new ArrayList<>();
                try {
                    for (int i = 0; i < 3; i++) {
                        Connection c = connect(proxy, "acct2_pw", "acct2_pw", "pw-1");
                        sessions.add(c);
                        assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acct2_pw@%");
                    }
                    server.execute("ALTER USER 'acct2_pw'@'%' IDENTIFIED BY 'pw-2'");
                    long deniedBefore = accessDenied(server);
                    for (Connection c : sessions) {
                        assertThat(one(c, "SELECT id FROM t")).as("on the pooled connections").isEqualTo("1");
                    }
                    killConnectionsOf(server, "acct2_pw");
                    for (Connection c : sessions) {
                        for (int attempt = 0; attempt < 3; attempt++) {
                            assertThatThrownBy(() -> one(c, "SELECT id FROM t"))
                                    .isInstanceOfSatisfying(SQLException.class, e -> {
                                        assertThat(e.getErrorCode()).isEqualTo(1045);
                                        assertThat(e.getMessage()).contains("'acct2_pw'")
                                                .contains("refused the password this session logged in with");
                                    });
                        }
                    }
                    assertThat(accessDenied(server) - deniedBefore)
                            .as("failed logins the server saw for 9 statements of 3 stale sessions").isEqualTo(1);
                } finally {
                    for (Connection c : sessions) {
                        c.close();
                    }
                }
                // The refusal had the accounts read again: the old password is denied, the new one runs.
                assertThatThrownBy(() -> {
                    try (Connection c = connect(proxy, "acct2_pw", "acct2_pw", "pw-1")) {
                        one(c, "SELECT 1");
                    }
                }).isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1045));
                try (Connection c = connect(proxy, "acct2_pw", "acct2_pw", "pw-2")) {
                    assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acct2_pw@%");
                    assertThat(one(c, "SELECT id FROM t")).isEqualTo("1");
                }
            }
        }
    }

    private static long accessDenied(ExtraMariaDb server) throws SQLException {
        try (Connection root = server.rootConnection()) {
            return Long.parseLong(one(root, "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS"
                    + " WHERE VARIABLE_NAME = 'ACCESS_DENIED_ERRORS'"));
        }
    }

    private static void killConnectionsOf(ExtraMariaDb server, String user) throws Exception {
        try (Connection root = server.rootConnection()) {
            for (String id : MappedAccountsTest.column(root,
                    "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '" + user + "'")) {
                try (var s = root.createStatement()) {
                    s.execute("KILL " + id);
                }
            }
            for (int i = 0; i < 50 && !MappedAccountsTest.column(root,
                    "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = '" + user + "'").isEmpty(); i++) {
                Thread.sleep(100);
            }
        }
        Thread.sleep(300); // Sluice sees its pooled connections close
    }
}
