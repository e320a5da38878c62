package io.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ConfigYamlTest {

    /** ShardingSphere-Proxy's seed file, byte for byte. */
    private static final String SHARDINGSPHERE_SEED = """
            databaseName: sharding_db
            dataSources:
              ds_0:
                url: jdbc:mysql://127.0.0.1:3306/test?serverTimezone=UTC&useSSL=false
                username: test
                password:
                connectionTimeoutMilliseconds: 30000
                idleTimeoutMilliseconds: 60000
                maxLifetimeMilliseconds: 1800000
                maxPoolSize: 200
                minPoolSize: 200
            rules: []
            """;

    private static ProxyConfig parse(String yaml) {
        return ConfigYaml.parse(yaml, "config.yaml");
    }

    private static void assertRefused(String yaml, String message) {
        assertThatThrownBy(() -> parse(yaml)).isInstanceOf(ConfigException.class).hasMessage(message);
    }

    @Test
    void readsShardingSphereSeedFileUnchanged() {
        ProxyConfig config = parse(SHARDINGSPHERE_SEED);

        assertThat(config.databaseName()).isEqualTo("sharding_db");
        assertThat(config.dataSources()).containsOnlyKeys("ds_0");
        DataSourceConfig ds = config.primaryDataSource();
        assertThat(ds.name()).isEqualTo("ds_0");
        assertThat(ds.url()).isEqualTo("jdbc:mysql://127.0.0.1:3306/test?serverTimezone=UTC&useSSL=false");
        assertThat(ds.jdbcUrl()).isEqualTo(new JdbcUrl("127.0.0.1", 3306, "test"));
        assertThat(ds.username()).isEqualTo("test");
        assertThat(ds.password()).isEmpty();
        assertThat(ds.connectionTimeoutMilliseconds()).isEqualTo(30_000);
        assertThat(ds.idleTimeoutMilliseconds()).isEqualTo(60_000);
        assertThat(ds.maxLifetimeMilliseconds()).isEqualTo(1_800_000);
        assertThat(ds.maxPoolSize()).isEqualTo(200);
        assertThat(ds.minPoolSize()).isEqualTo(200);
        assertThat(config.server()).isEqualTo(ServerConfig.defaults());
        assertThat(config.users()).isEmpty();
    }

    @Test
    void readsEveryKey() {
        ProxyConfig config = parse("""
                databaseName: app
                dataSources:
                  primary:
                    url: jdbc:mariadb://db1.example:3310/orders
                    username: sluice
                    password: 123456
                    connectionTimeoutMilliseconds: 5_000
                    idleTimeoutMilliseconds: 0
                    maxLifetimeMilliseconds: 0
                    maxPoolSize: 50
                    minPoolSize: 5
                  replica:
                    url: jdbc:mysql://[::1]/orders
                    username: reader
                    password: "yes"
                rules: []
                server:
                  address: 127.0.0.1
                  port: 13306
                  workerThreads: 4
                  connBufferSize: 65536
                  maxConnections: 1000
                  serverVersion: 8.0.36-sluice
                  maxPacketSize: 16777216
                  transport: epoll
                authority:
                  users:
                    - user: root@%
                      password: root
                    - user: app@10.0.0.%
                      password: 's3cr:t'
                    - user: nopass
                  privilege:
                    type: ALL_PERMITTED
                """);

        assertThat(config.databaseName()).isEqualTo("app");
        assertThat(config.dataSources()).containsOnlyKeys("primary", "replica");
        assertThat(List.copyOf(config.dataSources().keySet())).containsExactly("primary", "replica");
        assertThat(config.dataSources().get("primary")).isEqualTo(new DataSourceConfig("primary",
                "jdbc:mariadb://db1.example:3310/orders", "sluice", "123456", 5_000, 0, 0, 50, 5));
        assertThat(config.dataSources().get("replica")).isEqualTo(
                DataSourceConfig.of("replica", "jdbc:mysql://[::1]/orders", "reader", "yes"));
        assertThat(config.server()).isEqualTo(new ServerConfig("127.0.0.1", 13306, 4, 65536, 1000,
                "8.0.36-sluice", 16777216, Transport.EPOLL));
        assertThat(config.users()).containsExactly(
                new UserConfig("root", "%", "root"),
                new UserConfig("app", "10.0.0.%", "s3cr:t"),
                new UserConfig("nopass", "%", ""));
    }

    @Test
    void absentSectionsTakeTheRecordsDefaults() {
        ProxyConfig config = parse("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://127.0.0.1/test", username: root}
                server:
                authority:
                """);

        assertThat(config.databaseName()).isNull();
        assertThat(config.primaryDataSource()).isEqualTo(
                DataSourceConfig.of("ds_0", "jdbc:mysql://127.0.0.1/test", "root", ""));
        assertThat(config.server()).isEqualTo(ServerConfig.defaults());
        assertThat(config.server().port()).isEqualTo(3307);
        assertThat(config.users()).isEmpty();
    }

    @Test
    void ignoresAByteOrderMark() {
        assertThat(parse("\uFEFF" + SHARDINGSPHERE_SEED).databaseName()).isEqualTo("sharding_db");
    }

    @Test
    void acceptsEveryTransportName() {
        for (Transport transport : Transport.values()) {
            ProxyConfig config = parse("""
                    dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                    server: {transport: %s}
                    """.formatted(transport.name()));
            assertThat(config.server().transport()).isEqualTo(transport);
        }
    }

    @Test
    void refusesUnknownTopLevelKeyNamingTheAllowedOnes() {
        assertRefused("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u}
                props:
                  sql-show: true
                """, "config.yaml line 3: props: unknown key "
                + "(expected: one of databaseName, dataSources, rules, server, authority)");
    }

    @Test
    void refusesMisspeltDataSourceKey() {
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: root
                    maxPoolSise: 10
                """, "config.yaml line 5: dataSources.ds_0.maxPoolSise: unknown key (expected: one of url, username, "
                + "password, connectionTimeoutMilliseconds, idleTimeoutMilliseconds, maxLifetimeMilliseconds, "
                + "maxPoolSize, minPoolSize, sslMode, sslCa)");
    }

    @Test
    void refusesUnknownServerAuthorityAndUserKeys() {
        assertRefused("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                server:
                  prot: 3307
                """, "config.yaml line 3: server.prot: unknown key (expected: one of address, port, workerThreads, "
                + "connBufferSize, maxConnections, serverVersion, maxPacketSize, transport, "
                + "handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, loginBackoff, tls)");
        assertRefused("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                authority:
                  user: []
                """, "config.yaml line 3: authority.user: unknown key (expected: one of users, privilege)");
        assertRefused("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                authority:
                  users:
                    - user: root
                      pasword: root
                """, "config.yaml line 5: authority.users[0].pasword: unknown key "
                + "(expected: one of user, password, passwordHash, maxConnections)");
    }

    @Test
    void refusesWrongTypes() {
        assertRefused("""
                databaseName: sharding_db
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: test
                    password:
                    maxPoolSize: ten
                """, "config.yaml line 7: dataSources.ds_0.maxPoolSize: \"ten\" (expected: an integer)");
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: test
                    idleTimeoutMilliseconds: 1.5
                """, "config.yaml line 5: dataSources.ds_0.idleTimeoutMilliseconds: 1.5 (expected: an integer)");
        assertRefused("""
                dataSources:
                  ds_0:
                    url: [jdbc:mysql://127.0.0.1:3306/test]
                    username: test
                """, "config.yaml line 3: dataSources.ds_0.url: a list (expected: a string)");
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: test
                server:
                  port: 99999999999
                """, "config.yaml line 6: server.port: 99999999999 (expected: an integer no larger than 2147483647)");
        assertRefused("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                server:
                  transport: kqueue
                """, "config.yaml line 3: server.transport: \"kqueue\" (expected: one of AUTO, EPOLL, IO_URING, NIO)");
        assertRefused("""
                dataSources:
                  - url: jdbc:mysql://127.0.0.1:3306/test
                """, "config.yaml line 2: dataSources: a list (expected: a mapping of data source names)");
        assertRefused("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                server: 3307
                """, "config.yaml line 2: server: 3307 (expected: a mapping of address, port, workerThreads, "
                + "connBufferSize, maxConnections, serverVersion, maxPacketSize, transport, "
                + "handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, loginBackoff, tls)");
        assertRefused("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                authority:
                  users:
                    user: root
                """, "config.yaml line 4: authority.users: a mapping (expected: a list of {user: name@host, password: ...})");
        assertRefused("""
                - just
                - a list
                """, "config.yaml line 1: (top level): a list (expected: a mapping of databaseName, dataSources, "
                + "rules, server, authority)");
    }

    @Test
    void wrongTypedPasswordIsNotPrinted() {
        assertThatThrownBy(() -> parse("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: test
                    password: {secret: hunter2}
                """))
                .isInstanceOf(ConfigException.class)
                .hasMessage("config.yaml line 5: dataSources.ds_0.password: a mapping (expected: a string)")
                .message().doesNotContain("hunter2");
    }

    @Test
    void refusesMissingRequiredValues() {
        assertRefused("""
                databaseName: sharding_db
                rules: []
                """, "config.yaml line 1: dataSources: missing (expected: at least one data source, such as "
                + "ds_0: {url: jdbc:mysql://127.0.0.1:3306/test, username: root, password: })");
        assertRefused("""
                databaseName: sharding_db
                dataSources:
                rules: []
                """, "config.yaml line 2: dataSources: missing (expected: at least one data source, such as "
                + "ds_0: {url: jdbc:mysql://127.0.0.1:3306/test, username: root, password: })");
        assertRefused("""
                dataSources: {}
                """, "config.yaml line 1: dataSources: empty (expected: at least one data source)");
        assertRefused("""
                dataSources:
                  ds_0:
                    username: test
                    password:
                """, "config.yaml line 2: dataSources.ds_0.url: missing "
                + "(expected: a JDBC URL such as jdbc:mysql://127.0.0.1:3306/test)");
        assertRefused("""
                dataSources:
                  ds_0:
                """, "config.yaml line 2: dataSources.ds_0.url: missing "
                + "(expected: a JDBC URL such as jdbc:mysql://127.0.0.1:3306/test)");
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    password: x
                """, "config.yaml line 2: dataSources.ds_0.username: missing (expected: the backend user name)");
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username:
                """, "config.yaml line 4: dataSources.ds_0.username: missing (expected: the backend user name)");
        assertRefused("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                authority:
                  users:
                    - password: root
                """, "config.yaml line 4: authority.users[0].user: missing (expected: a user name, or name@host)");
        assertRefused("", "config.yaml: empty (expected: at least a dataSources section)");
        assertRefused("# only a comment\n", "config.yaml: empty (expected: at least a dataSources section)");
    }

    @Test
    void refusesValuesTheRecordsRejectAtTheirLine() {
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: test
                    maxPoolSize: 0
                """, "config.yaml line 5: dataSources.ds_0.maxPoolSize: 0 (expected: >= 1)");
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: test
                    minPoolSize: 20
                    maxPoolSize: 10
                """, "config.yaml line 5: dataSources.ds_0.minPoolSize: 20 (expected: 0..10)");
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:postgresql://127.0.0.1:5432/test
                    username: test
                """, "config.yaml line 3: dataSources.ds_0.url: jdbc:postgresql://127.0.0.1:5432/test "
                + "(expected: the jdbc:mysql or jdbc:mariadb scheme)");
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: test
                    connectionTimeoutMilliseconds: -1
                """, "config.yaml line 5: dataSources.ds_0.connectionTimeoutMilliseconds: -1 (expected: > 0)");
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: test
                server:
                  address: 127.0.0.1
                  port: 70000
                """, "config.yaml line 7: server.port: 70000 (expected: 0..65535)");
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: test
                server:
                  connBufferSize: 10
                """, "config.yaml line 6: server.connBufferSize: 10 (expected: >= 1024)");
    }

    @Test
    void refusesNonEmptyRules() {
        assertRefused(SHARDINGSPHERE_SEED.replace("rules: []", """
                rules:
                - !SHARDING
                  tables:
                    t_order:
                      actualDataNodes: ds_${0..1}.t_order_${0..1}
                """), "config.yaml line 13: rules: only [] (pass-through) is supported in this version");
        assertRefused(SHARDINGSPHERE_SEED.replace("rules: []", "rules: {sharding: {}}"),
                "config.yaml line 12: rules: only [] (pass-through) is supported in this version");
    }

    @Test
    void acceptsRulesAbsentEmptyOrNull() {
        assertThat(parse(SHARDINGSPHERE_SEED.replace("rules: []", "")).dataSources()).hasSize(1);
        assertThat(parse(SHARDINGSPHERE_SEED.replace("rules: []", "rules:")).dataSources()).hasSize(1);
    }

    @Test
    void refusesDuplicateKeysNamingBothLines() {
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: test
                    url: jdbc:mysql://127.0.0.1:3307/test
                """, "config.yaml line 5: dataSources.ds_0.url: duplicate key (first at line 3)");
        assertRefused("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u}
                  ds_0: {url: "jdbc:mysql://h/e", username: u}
                """, "config.yaml line 3: dataSources.ds_0: duplicate key (first at line 2)");
        assertRefused("""
                server: {port: 1}
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                server: {port: 2}
                """, "config.yaml line 3: server: duplicate key (first at line 1)");
    }

    @Test
    void refusesTheSameUserTwice() {
        assertRefused("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                authority:
                  users:
                    - user: root
                      password: a
                    - user: root@%
                      password: b
                """, "config.yaml line 6: authority.users[1].user: \"root@%\" "
                + "(expected: each user once; root@% is also at line 4)");
    }

    @Test
    void reportsMalformedYamlAtSnakeYamlsMark() {
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://127.0.0.1:3306/test
                    username: test
                   password: oops
                """, "config.yaml line 5: malformed YAML: expected <block end>, but found '<block mapping start>' "
                + "while parsing a block mapping (column 4)");
        assertThatThrownBy(() -> parse("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u
                server: {}
                """))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("config.yaml line 3: malformed YAML: ");
        assertThatThrownBy(() -> parse("dataSources:\n\tds_0: {}\n"))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("config.yaml line 2: malformed YAML: ");
    }

    @Test
    void loadNamesTheFileInErrors(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, SHARDINGSPHERE_SEED);
        assertThat(ConfigYaml.load(file).databaseName()).isEqualTo("sharding_db");

        Files.writeString(file, SHARDINGSPHERE_SEED.replace("maxPoolSize: 200", "maxPoolSize: ten"));
        assertThatThrownBy(() -> ConfigYaml.load(file))
                .isInstanceOf(ConfigException.class)
                .hasMessage(file + " line 10: dataSources.ds_0.maxPoolSize: \"ten\" (expected: an integer)");

        Path missing = dir.resolve("absent.yaml");
        assertThatThrownBy(() -> ConfigYaml.load(missing))
                .isInstanceOf(ConfigException.class)
                .hasMessageStartingWith(missing + ": cannot be read (NoSuchFileException");
    }
}
