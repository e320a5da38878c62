package io.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code ${NAME}} and {@code ${NAME:-default}} in config.yaml, and secrets read from files. */
class EnvAndSecretFilesTest {

    private static ProxyConfig parse(String yaml, Map<String, String> environment) {
        return ConfigYaml.parse(yaml, "config.yaml", null, environment::get);
    }

    private static void assertRefused(String yaml, Map<String, String> environment, String message) {
        assertThatThrownBy(() -> parse(yaml, environment)).isInstanceOf(ConfigException.class).hasMessage(message);
    }

    @Test
    void substitutesVariablesAndTypesPlainValuesAgain() {
        ProxyConfig config = parse("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://${DB_HOST}:${DB_PORT:-3306}/app
                    username: ${DB_USER:-sluice}
                    password: ${DB_PASSWORD}
                    maxPoolSize: ${POOL}
                server:
                  address: ${ADDRESS:-127.0.0.1}
                  tls:
                    enabled: ${TLS}
                authority:
                  users:
                    - user: app@%
                      password: "${APP_PASSWORD}"
                """, Map.of("DB_HOST", "db.example", "DB_PASSWORD", "p: #not a comment", "POOL", "12",
                "TLS", "false", "APP_PASSWORD", "007", "DB_USER", ""));

        DataSourceConfig ds = config.primaryDataSource();
        assertThat(ds.url()).isEqualTo("jdbc:mysql://db.example:3306/app");
        assertThat(ds.username()).as("empty takes the default, as ${X:-d} in the shell").isEqualTo("sluice");
        assertThat(ds.password()).as("a value cannot change the file's structure").isEqualTo("p: #not a comment");
        assertThat(ds.maxPoolSize()).isEqualTo(12);
        assertThat(config.server().address()).isEqualTo("127.0.0.1");
        assertThat(config.server().tls().enabled()).as("typed as a boolean again").isFalse();
        assertThat(config.users().get(0).password()).as("quoted: stays a string").isEqualTo("007");
    }

    @Test
    void anUnsetVariableWithoutDefaultIsRefusedNamingItAndTheLine() {
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1/app
                    username: sluice
                    password: ${DB_PASSWORD}
                """, Map.of(), "config.yaml line 5: dataSources.ds_0.password: ${DB_PASSWORD} is not set (expected: "
                + "the environment variable DB_PASSWORD, or a default: ${DB_PASSWORD:-...})");
    }

    @Test
    void aBrokenPlaceholderIsRefusedWithoutShowingTheValue() {
        assertRefused("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u, password: "s3cret${DB_PASSWORD"}
                """, Map.of("DB_PASSWORD", "x"), "config.yaml line 2: dataSources.ds_0.password: a ${ left open "
                + "(expected: ${NAME} or ${NAME:-default}; $${ for a literal ${)");
    }

    @Test
    void shardingSphereInlineExpressionsAreNotVariables() {
        ProxyConfig config = parse("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u, password: "ds_${0..1}.t_${[1, 2]}"}
                """, Map.of());

        assertThat(config.primaryDataSource().password()).isEqualTo("ds_${0..1}.t_${[1, 2]}");
    }

    @Test
    void doubleDollarKeepsALiteralPlaceholderAndLoneDollarsStay() {
        ProxyConfig config = parse("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u, password: "a$$b$${NOT_A_VARIABLE}$"}
                """, Map.of());

        assertThat(config.primaryDataSource().password()).isEqualTo("a$$b${NOT_A_VARIABLE}$");
    }

    @Test
    void keysAreNeverSubstituted() {
        assertRefused("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u}
                ${KEY}: 1
                """, Map.of("KEY", "databaseName"), "config.yaml line 3: ${KEY}: unknown key (expected: one of "
                + "databaseName, dataSources, rules, server, authority, loadBalancer, healthCheck, admin, metrics, "
                + "statistics, shutdown, slowQueryLog, reload, capture, pooling)");
    }

    @Test
    void secretsComeFromFilesWithoutTheirTrailingLineBreak(@TempDir Path conf) throws IOException {
        Files.writeString(conf.resolve("db-password"), "db secret\n");
        Files.writeString(conf.resolve("app-password"), "app secret\r\n");
        Files.writeString(conf.resolve("token"), "write-token");
        Path readToken = Files.writeString(conf.resolve("read-token"), "read-token\n\n");
        Files.writeString(conf.resolve("config.yaml"), """
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1/app
                    username: sluice
                    passwordFile: db-password
                authority:
                  users:
                    - user: app
                      passwordFile: app-password
                admin:
                  tokenFile: token
                  readTokenFile: ${SECRETS}/read-token
                """);

        ProxyConfig config = ConfigYaml.load(conf.resolve("config.yaml"),
                Map.of("SECRETS", readToken.getParent().toAbsolutePath().toString())::get);

        assertThat(config.primaryDataSource().password()).isEqualTo("db secret");
        assertThat(config.users().get(0).password()).isEqualTo("app secret");
        assertThat(config.operations().admin().token()).isEqualTo("write-token");
        assertThat(config.operations().admin().readToken()).isEqualTo("read-token");
    }

    @Test
    void aSecretWrittenTwiceOrAMissingFileIsRefused(@TempDir Path conf) throws IOException {
        Files.writeString(conf.resolve("db-password"), "x");
        String both = """
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1/app
                    username: sluice
                    password: inline
                    passwordFile: db-password
                """;
        assertThatThrownBy(() -> ConfigYaml.parse(both, "config.yaml", conf, Map.<String, String>of()::get))
                .hasMessage("config.yaml line 6: dataSources.ds_0.passwordFile: set together with password "
                        + "(expected: one of the two)");

        String missing = """
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u}
                admin:
                  tokenFile: no-such-file
                """;
        assertThatThrownBy(() -> ConfigYaml.parse(missing, "config.yaml", conf, Map.<String, String>of()::get))
                .hasMessage("config.yaml line 4: admin.tokenFile: \"no-such-file\" (expected: a readable file; "
                        + conf.resolve("no-such-file").toAbsolutePath() + " is not one)");
    }
}
