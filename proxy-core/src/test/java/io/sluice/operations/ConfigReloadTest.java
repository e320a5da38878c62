package io.sluice.operations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.api.ReloadResult;
import io.sluice.Sluice;
import io.sluice.config.ConfigException;
import io.sluice.config.ConfigYaml;
import io.sluice.ops.SluiceServer;
import io.sluice.testing.AdminClient;
import io.sluice.testing.AdminClient.Response;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.TestMariaDb;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Config reload against real servers: the shared MariaDB as backend {@code a} and a MariaDB of the test's own as
 * {@code b}, the configuration read from a config.yaml file that the test rewrites, the reload asked for over the
 * admin API. One scenario in steps, since each step starts from what the previous one left running.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class ConfigReloadTest {
    private static final String TOKEN = "reload-token";

    private static ExtraMariaDb serverB;
    @TempDir
    static Path conf;

    @BeforeAll
    static void startServerB() {
        serverB = ExtraMariaDb.start("reload-b");
    }

    @AfterAll
    static void stopServerB() {
        if (serverB != null) {
            serverB.close();
        }
    }

    private static String dataSource(String name, String url, int weight, int maxPoolSize) {
        return """
                  %s:
                    url: %s
                    username: root
                    password:
                    weight: %d
                    maxPoolSize: %d
                """.formatted(name, url, weight, maxPoolSize);
    }

    private static String config(String dataSources, String users, String serverPort) {
        return "dataSources:\n" + dataSources + """
                rules: []
                server:
                  address: 127.0.0.1
                  port: %s
                  workerThreads: 2
                healthCheck:
                  intervalMilliseconds: 500
                admin:
                  address: 127.0.0.1
                  port: 0
                  token: %s
                authority:
                  users:
                """.formatted(serverPort, TOKEN) + users;
    }

    private static String user(String name, String password) {
        return "    - user: " + name + "\n      password: " + password + "\n";
    }

    private static String urlA() {
        return "jdbc:mysql://127.0.0.1:" + TestMariaDb.get().port() + "/";
    }

    private static Connection connect(Sluice sluice, String user, String password) throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), null, ""), user,
                password);
    }

    private static int portOf(Connection connection) throws SQLException {
        try (Statement s = connection.createStatement(); ResultSet rs = s.executeQuery("SELECT @@port")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Test
    void reloadAddsAndRemovesBackendsChangesWeightsUsersAndPoolsAndRefusesABadFile() throws Exception {
        Path file = conf.resolve("config.yaml");
        Files.writeString(file, config(dataSource("a", urlA(), 1, 10), user("app", "pw") + user("old", "pw"), "0"));
        try (SluiceServer server = SluiceServer.start(ConfigYaml.load(file))) {
            Sluice sluice = server.sluice();
            sluice.configSource(() -> ConfigYaml.load(file));
            AdminClient admin = new AdminClient("127.0.0.1", server.adminPort());
            int portA = TestMariaDb.get().port();
            try (Connection onA = connect(sluice, "app", "pw")) {
                assertThat(portOf(onA)).isEqualTo(portA);

                // 1. Add b, take a's weight to 0: every new session goes to b; the open one stays on a.
                Files.writeString(file, config(dataSource("a", urlA(), 0, 10)
                        + dataSource("b", serverB.jdbcUrl(null), 1, 20), user("app", "pw") + user("old", "pw"), "0"));
                Response added = admin.post("/api/config/reload", TOKEN);

                assertThat(added.status()).as(added.body()).isEqualTo(200);
                assertThat(added.body()).contains("dataSources.b: added (UP)").contains("dataSources.a.weight: 0")
                        .contains("\"restartRequired\":[]");
                for (int i = 0; i < 5; i++) {
                    try (Connection session = connect(sluice, "app", "pw")) {
                        assertThat(portOf(session)).as("new session %d", i).isEqualTo(serverB.port());
                    }
                }
                assertThat(portOf(onA)).isEqualTo(portA);

                // 2. A bad file is refused with its line and key; the running config keeps serving.
                Files.writeString(file, config(dataSource("a", urlA(), 0, 10)
                        + dataSource("b", serverB.jdbcUrl(null), 1, 20), user("app", "pw"), "0")
                        .replace("maxPoolSize: 20", "maxPoolSize: twenty"));
                Response refused = admin.post("/api/config/reload", TOKEN);

                assertThat(refused.status()).isEqualTo(400);
                assertThat(refused.body()).contains("reload refused, the running config stays")
                        .contains("config.yaml line").contains("dataSources.b.maxPoolSize: \\\"twenty\\\"");
                try (Connection session = connect(sluice, "old", "pw")) { // "old" was not removed
                    assertThat(portOf(session)).isEqualTo(serverB.port());
                }
                assertThat(admin.get("/api/backends").body()).contains("\"name\":\"a\"").contains("\"name\":\"b\"");

                // 3. Remove a, drop a user, add one, grow b's pool, and change the port (which needs a restart).
                Files.writeString(file, config(dataSource("b", serverB.jdbcUrl(null), 1, 30),
                        user("app", "pw") + user("new", "pw2"), "1"));
                ReloadResult result = sluice.reload();

                assertThat(result.changes()).anyMatch(c -> c.startsWith("dataSources.a: removed (1 session(s)"))
                        .anyMatch(c -> c.startsWith("dataSources.b: pool maxPoolSize 30"))
                        .anyMatch(c -> c.startsWith("authority.users: 2 user(s)"));
                assertThat(result.restartRequired()).anyMatch(r -> r.startsWith("server.port: 1 (running: 0)"));
                assertThat(portOf(onA)).as("a session on a removed backend carries on").isEqualTo(portA);
                String backends = admin.get("/api/backends").body();
                assertThat(backends).doesNotContain("\"name\":\"a\"").contains("\"max\":30");
                try (Connection newcomer = connect(sluice, "new", "pw2")) {
                    assertThat(portOf(newcomer)).isEqualTo(serverB.port());
                }
                assertThatThrownBy(() -> connect(sluice, "old", "pw")).isInstanceOf(SQLException.class)
                        .hasMessageContaining("Access denied");
                assertThat(sluice.config().server().port()).as("the running port stays").isZero();
            }
        }
    }

    @Test
    void aReloadNamingAServerThatDoesNotAnswerAddsItDownAndKeepsServing() throws Exception {
        Path file = conf.resolve("config-down.yaml");
        Files.writeString(file, config(dataSource("a", urlA(), 1, 10), user("app", "pw"), "0"));
        try (Sluice sluice = Sluice.start(ConfigYaml.load(file))) {
            sluice.configSource(() -> ConfigYaml.load(file));
            int closedPort = TestMariaDb.freePortForTests();
            Files.writeString(file, config(dataSource("a", urlA(), 1, 10)
                    + dataSource("gone", "jdbc:mysql://127.0.0.1:" + closedPort + "/", 1, 10), user("app", "pw"), "0"));

            ReloadResult result = sluice.reload();

            assertThat(result.changes()).anyMatch(c -> c.startsWith("dataSources.gone: added (DOWN, unreachable"));
            for (int i = 0; i < 3; i++) {
                try (Connection session = connect(sluice, "app", "pw")) {
                    assertThat(portOf(session)).isEqualTo(TestMariaDb.get().port());
                }
            }
        }
    }

    @Test
    void aFileThatCannotBeReadIsRefusedAndNothingChanges() throws Exception {
        Path file = conf.resolve("config-missing.yaml");
        Files.writeString(file, config(dataSource("a", urlA(), 1, 10), user("app", "pw"), "0"));
        try (Sluice sluice = Sluice.start(ConfigYaml.load(file))) {
            sluice.configSource(() -> ConfigYaml.load(file));
            Files.delete(file);

            assertThatThrownBy(sluice::reload).isInstanceOf(ConfigException.class).hasMessageContaining("cannot be read");
            try (Connection session = connect(sluice, "app", "pw")) {
                assertThat(portOf(session)).isEqualTo(TestMariaDb.get().port());
            }
        }
    }
}
