package io.sluice.accounts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Sluice;
import io.sluice.config.ServerAccountsConfig;
import io.sluice.config.UserConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ReplicationGroup;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Accounts of their own in a read/write split group (issue #39): reads on the replica and writes on the primary both
 * run as the session's account, mapped ({@code backendUser}) or the server's own ({@code users: FROM_BACKEND}); the
 * primary refuses the reader's write as it would directly.
 */
@Tag("server")
class SplitGroupAccountsTest {
    private static ReplicationGroup servers;
    private static Sluice mapped;
    private static Sluice fromBackend;

    @BeforeAll
    static void start() {
        servers = ReplicationGroup.start("accsplit", 1);
        servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
                "INSERT INTO app.t VALUES (0, 0)",
                "CREATE USER 'acc_reader'@'%' IDENTIFIED BY 'reader-pw'", "GRANT SELECT ON app.* TO 'acc_reader'@'%'",
                "CREATE USER 'acc_writer'@'%' IDENTIFIED BY 'writer-pw'",
                "GRANT SELECT, INSERT, UPDATE, DELETE ON app.* TO 'acc_writer'@'%'");
        servers.awaitCaughtUp();
        mapped = Sluice.start(servers.sluiceConfig(3000)
                .user(new UserConfig("reader", "%", "reader-secret", null, 0, "acc_reader", "reader-pw"))
                .user(new UserConfig("writer", "%", "writer-secret", null, 0, "acc_writer", "writer-pw"))
                .readWriteSplitting(servers.splitGroup("app_rw")).build());
        fromBackend = Sluice.start(servers.sluiceConfig(3000).readWriteSplitting(servers.splitGroup("app_rw"))
                .build().withUsersFromBackend(new ServerAccountsConfig(60_000, 0)));
    }

    @AfterAll
    static void stop() {
        if (mapped != null) {
            mapped.close();
        }
        if (fromBackend != null) {
            fromBackend.close();
        }
        if (servers != null) {
            servers.close();
        }
    }

    private static Connection connect(boolean serverAccounts, String role) throws SQLException {
        Sluice sluice = serverAccounts ? fromBackend : mapped;
        String user = serverAccounts ? "acc_" + role : role;
        String password = serverAccounts ? role + "-pw" : role + "-secret";
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), "app_rw", ""), user,
                password);
    }

    /** CURRENT_USER() and the port of the server that answered. */
    private static String[] whoAndWhere(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT CURRENT_USER(), @@port")) {
            assertThat(rs.next()).isTrue();
            return new String[] {rs.getString(1), rs.getString(2)};
        }
    }

    @ParameterizedTest(name = "users: FROM_BACKEND {0}")
    @ValueSource(booleans = {false, true})
    void readsAndWritesRunAsTheSessionsAccount(boolean serverAccounts) throws Exception {
        String replicaPort = String.valueOf(servers.replica(0).port());
        String primaryPort = String.valueOf(servers.primary().port());
        try (Connection reader = connect(serverAccounts, "reader");
             Connection writer = connect(serverAccounts, "writer")) {
            assertThat(whoAndWhere(reader)).containsExactly("acc_reader@%", replicaPort);
            assertThat(whoAndWhere(writer)).containsExactly("acc_writer@%", replicaPort);
            assertThatThrownBy(() -> reader.createStatement().executeUpdate("INSERT INTO t VALUES (1, 1)"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1142));
            int id = serverAccounts ? 11 : 10;
            try (Statement s = writer.createStatement()) {
                assertThat(s.executeUpdate("INSERT INTO t VALUES (" + id + ", 1)")).isEqualTo(1);
                s.execute("BEGIN");
                s.executeUpdate("UPDATE t SET v = 2 WHERE id = " + id);
                assertThat(whoAndWhere(writer)).containsExactly("acc_writer@%", primaryPort);
                s.execute("COMMIT");
                assertThat(s.executeUpdate("DELETE FROM t WHERE id = " + id)).isEqualTo(1);
            }
        }
    }
}
