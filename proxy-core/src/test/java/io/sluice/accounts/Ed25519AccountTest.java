package io.sluice.accounts;

import static io.sluice.accounts.MappedAccountsTest.column;
import static io.sluice.accounts.MappedAccountsTest.one;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mysql.cj.jdbc.JdbcConnection;
import io.sluice.config.ServerAccountsConfig;
import io.sluice.config.TlsConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import io.sluice.testing.Tool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * MariaDB's ed25519 accounts with {@code users: FROM_BACKEND} (decision 172). The server stores the public key only,
 * so Sluice asks the client for the password in clear ({@code mysql_clear_password}), over TLS only, checks it
 * against the key as the server derives it, and signs the server's nonces with it: each session runs on the server
 * as its ed25519 account. On a plain connection the login gets ERR 1251 saying why. The test installs the server's
 * {@code auth_ed25519} plugin when it is missing (MariaDB ships it) and fails if it cannot; the account is checked
 * directly on the server first.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
@Tag("tools")
class Ed25519AccountTest {
    private static final TestMariaDb MARIADB = TestMariaDb.get();
    private static String db;

    @TempDir
    static Path confDir;
    private static ProxyUnderTest sessionPooling;
    private static ProxyUnderTest transactionPooling;

    @BeforeAll
    static void ed25519Account() throws SQLException {
        try (Connection root = MARIADB.rootConnection()) {
            if (column(root, "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS WHERE PLUGIN_NAME = 'ed25519'")
                    .isEmpty()) {
                MARIADB.execute("INSTALL SONAME 'auth_ed25519'");
            }
        }
        db = MARIADB.createDatabase("acct2_");
        MARIADB.executeIn(db, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)");
        MARIADB.execute("DROP USER IF EXISTS 'acct2_ed'@'%'",
                "CREATE USER 'acct2_ed'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('ed-pw')",
                "GRANT SELECT ON `" + db + "`.* TO 'acct2_ed'@'%'",
                "DROP USER IF EXISTS 'acct2_plain'@'%'",
                "CREATE USER 'acct2_plain'@'%' IDENTIFIED VIA mysql_native_password USING PASSWORD('plain-pw')",
                "GRANT SELECT ON `" + db + "`.* TO 'acct2_plain'@'%'");
        sessionPooling = start(ProxyUnderTest.builder());
        transactionPooling = start(ProxyUnderTest.builder().transactionPooling());
    }

    private static ProxyUnderTest start(ProxyUnderTest.Builder builder) {
        return builder.server(s -> s.withTls(TlsConfig.defaults().withGeneratedDirectory(confDir)))
                .config(c -> c.withUsersFromBackend(new ServerAccountsConfig(60_000, 0))).start();
    }

    @AfterAll
    static void drop() {
        for (ProxyUnderTest proxy : new ProxyUnderTest[] {sessionPooling, transactionPooling}) {
            if (proxy != null) {
                proxy.close();
            }
        }
        MARIADB.execute("DROP USER IF EXISTS 'acct2_ed'@'%'", "DROP USER IF EXISTS 'acct2_plain'@'%'");
        MARIADB.dropDatabase(db);
    }

    private static String mariaDbTls(ProxyUnderTest proxy) {
        return "jdbc:mariadb://127.0.0.1:" + proxy.port() + "/" + db + "?sslMode=trust";
    }

    private static String mySqlTls(ProxyUnderTest proxy) {
        return "jdbc:mysql://127.0.0.1:" + proxy.port() + "/" + db + "?sslMode=REQUIRED";
    }

    @Test
    void theAccountLogsInDirectly() throws Exception {
        try (Connection direct = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url(MARIADB.host(), MARIADB.port(),
                db, ""), "acct2_ed", "ed-pw")) {
            assertThat(one(direct, "SELECT CURRENT_USER()")).isEqualTo("acct2_ed@%");
        }
    }

    /** Both Connector/Js over TLS, in session and transaction pooling: the server sees the ed25519 account. */
    @Test
    void overTlsEachSessionRunsAsItsEd25519Account() throws Exception {
        for (ProxyUnderTest proxy : new ProxyUnderTest[] {sessionPooling, transactionPooling}) {
            for (String url : new String[] {mariaDbTls(proxy), mySqlTls(proxy)}) {
                JdbcDriver driver = url.startsWith("jdbc:mariadb") ? JdbcDriver.MARIADB : JdbcDriver.MYSQL;
                try (Connection c = driver.connect(url, "acct2_ed", "ed-pw");
                     Connection other = driver.connect(url, "acct2_ed", "ed-pw")) {
                    assertThat(one(c, "SELECT CURRENT_USER()")).as(url).isEqualTo("acct2_ed@%");
                    assertThat(one(c, "SELECT id FROM t")).isEqualTo("1");
                    assertThat(column(other, "SELECT USER FROM information_schema.PROCESSLIST"))
                            .as("processlist rows the account may see").containsOnly("acct2_ed");
                }
            }
        }
    }

    @Test
    void aWrongPasswordIsDenied() {
        assertThatThrownBy(() -> JdbcDriver.MARIADB.connect(mariaDbTls(sessionPooling), "acct2_ed", "not-it").close())
                .isInstanceOfSatisfying(SQLException.class, e -> {
                    assertThat(e.getErrorCode()).isEqualTo(1045);
                    assertThat(e.getMessage()).contains("Access denied for user 'acct2_ed'");
                });
    }

    /** Without TLS the password cannot travel: ERR 1251 says so, never the data source's account instead. */
    @Test
    void aPlainConnectionIsRefusedWithTheReason() {
        assertThatThrownBy(() -> JdbcDriver.MARIADB.connect(sessionPooling.jdbcUrl(JdbcDriver.MARIADB, db, ""),
                "acct2_ed", "ed-pw").close())
                .isInstanceOfSatisfying(SQLException.class, e -> {
                    assertThat(e.getErrorCode()).isEqualTo(1251);
                    assertThat(e.getMessage()).contains("'acct2_ed'").contains("ed25519").contains("TLS");
                });
    }

    /** COM_CHANGE_USER (MySQL Connector/J's changeUser) to the ed25519 account and back, over TLS. */
    @Test
    void changeUserToAndFromTheEd25519Account() throws Exception {
        try (Connection c = JdbcDriver.MYSQL.connect(mySqlTls(transactionPooling), "acct2_plain", "plain-pw")) {
            assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acct2_plain@%");
            c.unwrap(JdbcConnection.class).changeUser("acct2_ed", "ed-pw");
            assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acct2_ed@%");
            c.unwrap(JdbcConnection.class).changeUser("acct2_plain", "plain-pw");
            assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acct2_plain@%");
        }
    }

    /** A changed ed25519 password takes effect at its first login: the failing password is checked on a new reading. */
    @Test
    void aChangedPasswordTakesEffect() throws Exception {
        MARIADB.execute("DROP USER IF EXISTS 'acct2_ed2'@'%'",
                "CREATE USER 'acct2_ed2'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('e-1')",
                "GRANT SELECT ON `" + db + "`.* TO 'acct2_ed2'@'%'");
        try {
            try (Connection c = JdbcDriver.MARIADB.connect(mariaDbTls(transactionPooling), "acct2_ed2", "e-1")) {
                assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acct2_ed2@%");
            }
            MARIADB.execute("ALTER USER 'acct2_ed2'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('e-2')");
            try (Connection c = JdbcDriver.MARIADB.connect(mariaDbTls(transactionPooling), "acct2_ed2", "e-2")) {
                assertThat(one(c, "SELECT CURRENT_USER()")).isEqualTo("acct2_ed2@%");
            }
            assertThatThrownBy(() -> JdbcDriver.MARIADB.connect(mariaDbTls(transactionPooling), "acct2_ed2", "e-1")
                    .close()).isInstanceOfSatisfying(SQLException.class,
                            e -> assertThat(e.getErrorCode()).isEqualTo(1045));
        } finally {
            MARIADB.execute("DROP USER IF EXISTS 'acct2_ed2'@'%'");
        }
    }

    /**
     * An ed25519 password changed under an open session (decision 171): the session runs on the account's idle
     * connection; once that is gone, the server refuses the password it logged in with, and the session hears so.
     */
    @Test
    void aPasswordChangedUnderAnOpenSession() throws Exception {
        MARIADB.execute("DROP USER IF EXISTS 'acct2_ed3'@'%'",
                "CREATE USER 'acct2_ed3'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('e-1')",
                "GRANT SELECT ON `" + db + "`.* TO 'acct2_ed3'@'%'");
        try (Connection c = JdbcDriver.MARIADB.connect(mariaDbTls(transactionPooling), "acct2_ed3", "e-1")) {
            assertThat(one(c, "SELECT id FROM t")).isEqualTo("1");
            MARIADB.execute("ALTER USER 'acct2_ed3'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('e-2')");
            assertThat(one(c, "SELECT id FROM t")).as("on the idle connection").isEqualTo("1");
            try (Connection root = MARIADB.rootConnection()) {
                for (String id : column(root, "SELECT ID FROM information_schema.PROCESSLIST WHERE USER = 'acct2_ed3'")) {
                    root.createStatement().execute("KILL " + id);
                }
            }
            Thread.sleep(300); // Sluice sees the connection close
            assertThatThrownBy(() -> one(c, "SELECT id FROM t")).isInstanceOfSatisfying(SQLException.class, e -> {
                assertThat(e.getErrorCode()).isEqualTo(1045);
                assertThat(e.getMessage()).contains("refused the password this session logged in with");
            });
        } finally {
            MARIADB.execute("DROP USER IF EXISTS 'acct2_ed3'@'%'");
        }
    }

    /** The mariadb CLI over TLS answers the switch to mysql_clear_password. */
    @Test
    void mariadbClientOverTls() throws Exception {
        Process p = new ProcessBuilder(Tool.MARIADB.path().toString(), "--no-defaults", "-h127.0.0.1",
                "-P" + sessionPooling.port(), "--ssl", "--skip-ssl-verify-server-cert", "-uacct2_ed", "-ped-pw",
                "-D" + db, "-N", "-e", "SELECT CURRENT_USER()").redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(out).contains("acct2_ed@%");
    }
}
