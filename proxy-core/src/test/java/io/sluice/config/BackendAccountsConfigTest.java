package io.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The keys of issue #39: {@code backendUser}, {@code maxPoolSizePerAccount}, {@code users: FROM_BACKEND}. */
class BackendAccountsConfigTest {
    private static final String DS = "dataSources: {ds_0: {url: \"jdbc:mysql://h/d\", username: u}}\n";

    private static ProxyConfig parse(String yaml) {
        return ConfigYaml.parse(yaml, "config.yaml");
    }

    @Test
    void readsMappedAccountsWithTheirPasswordInTheFileOrInAFile(@TempDir Path conf) throws IOException {
        Files.writeString(conf.resolve("writer-pw"), "w secret\n");
        Files.writeString(conf.resolve("config.yaml"), """
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u, maxPoolSize: 20, maxPoolSizePerAccount: 5}
                authority:
                  users:
                    - {user: reader, password: r, backendUser: acc_reader, backendPassword: rr}
                    - {user: writer, password: w, backendUser: acc_writer, backendPasswordFile: writer-pw}
                    - {user: app, password: a}
                """);
        ProxyConfig config = ConfigYaml.load(conf.resolve("config.yaml"));
        assertThat(config.primaryDataSource().maxPoolSizePerAccount()).isEqualTo(5);
        assertThat(config.users()).extracting(UserConfig::backendUser)
                .containsExactly("acc_reader", "acc_writer", null);
        assertThat(config.users()).extracting(UserConfig::backendPassword).containsExactly("rr", "w secret", "");
        assertThat(config.users().get(0).toString()).doesNotContain("rr"); // never the password
        assertThat(config.usersFromBackend()).isFalse();
    }

    @Test
    void refusesABackendPasswordWithoutUserAndABoundAboveTheTotal() {
        assertThatThrownBy(() -> parse(DS + """
                authority:
                  users:
                    - {user: app, password: a, backendPassword: x}
                """)).isInstanceOf(ConfigException.class).hasMessage("config.yaml line 4: authority.users[0]"
                + ".backendPassword: set without backendUser (expected: both or neither)");
        assertThatThrownBy(() -> parse("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u, maxPoolSize: 4, maxPoolSizePerAccount: 5}
                """)).isInstanceOf(ConfigException.class).hasMessage("config.yaml line 2: dataSources.ds_0"
                + ".maxPoolSizePerAccount: 5 (expected: 0..4, 0 for no bound but maxPoolSize)");
    }

    @Test
    void readsUsersFromBackendWithItsRefreshKeys() {
        ProxyConfig config = parse(DS + """
                authority:
                  users: FROM_BACKEND
                  refreshMilliseconds: 30000
                  minRefreshIntervalMilliseconds: 500
                """);
        assertThat(config.usersFromBackend()).isTrue();
        assertThat(config.users()).isEmpty();
        assertThat(config.serverAccounts()).isEqualTo(new ServerAccountsConfig(30_000, 500));
        assertThat(parse(DS + "authority: {users: FROM_BACKEND}\n").serverAccounts())
                .isEqualTo(ServerAccountsConfig.defaults());
    }

    @Test
    void refusesAnotherWordThanFromBackendAndRefreshKeysBesideAList() {
        assertThatThrownBy(() -> parse(DS + "authority: {users: FROM_SERVER}\n"))
                .isInstanceOf(ConfigException.class).hasMessage("config.yaml line 2: authority.users: \"FROM_SERVER\""
                        + " (expected: a list of {user: name@host, password: ...}, or FROM_BACKEND)");
        assertThatThrownBy(() -> parse(DS + """
                authority:
                  users: [{user: app, password: a}]
                  refreshMilliseconds: 1000
                """)).isInstanceOf(ConfigException.class)
                .hasMessageContaining("authority.refreshMilliseconds: unknown key");
    }
}
