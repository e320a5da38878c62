package io.sluice.accounts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.ServerAccountsConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * MariaDB's ed25519 accounts with {@code users: FROM_BACKEND} (decision 172): the server stores the public key, so
 * Sluice could check a client's signature but could never log in to the server as the account without the password.
 * The login is refused with ERR 1251 that names the plugin and says why, never run as the data source's account.
 * The test installs the server's {@code auth_ed25519} plugin when it is missing (MariaDB ships it), and fails if it
 * cannot; the account is checked directly on the server first, so the refusal is Sluice's.
 */
@Tag("server")
class Ed25519AccountTest {
    private static final TestMariaDb MARIADB = TestMariaDb.get();

    @BeforeAll
    static void ed25519Account() throws SQLException {
        try (Connection root = MARIADB.rootConnection()) {
            if (MappedAccountsTest.column(root, "SELECT PLUGIN_STATUS FROM information_schema.PLUGINS"
                    + " WHERE PLUGIN_NAME = 'ed25519'").isEmpty()) {
                MARIADB.execute("INSTALL SONAME 'auth_ed25519'");
            }
        }
        MARIADB.execute("DROP USER IF EXISTS 'acct2_ed'@'%'",
                "CREATE USER 'acct2_ed'@'%' IDENTIFIED VIA ed25519 USING PASSWORD('ed-pw')");
    }

    @AfterAll
    static void drop() {
        MARIADB.execute("DROP USER IF EXISTS 'acct2_ed'@'%'");
    }

    @Test
    void anEd25519AccountIsRefusedWithTheReason() throws Exception {
        try (Connection direct = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url(MARIADB.host(), MARIADB.port(),
                null, ""), "acct2_ed", "ed-pw")) {
            assertThat(MappedAccountsTest.one(direct, "SELECT CURRENT_USER()")).isEqualTo("acct2_ed@%");
        }
        try (ProxyUnderTest proxy = ProxyUnderTest.builder()
                .config(c -> c.withUsersFromBackend(new ServerAccountsConfig(60_000, 0))).start()) {
            assertThatThrownBy(() -> JdbcDriver.MARIADB.connect(proxy.jdbcUrl(JdbcDriver.MARIADB, "", ""),
                    "acct2_ed", "ed-pw").close())
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(1251);
                        assertThat(e.getMessage()).contains("'acct2_ed'").contains("ed25519")
                                .contains("public key").contains("backendUser");
                    });
        }
    }
}
