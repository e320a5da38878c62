package io.sluice.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
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
        assertThat(config.loadBalancer()).isEqualTo(Policy.LEAST_CONNECTIONS);
        assertThat(config.healthCheck()).isEqualTo(HealthCheckConfig.defaults());
        assertThat(ds.weight()).isEqualTo(1);
        assertThat(ds.drain()).isFalse();
    }

    @Test
    void readsBackendGroupKeys() {
        ProxyConfig config = parse("""
                dataSources:
                  primary: {url: "jdbc:mysql://10.0.0.1:3306/app", username: app, weight: 3}
                  replica: {url: "jdbc:mysql://10.0.0.2:3306/app", username: app, weight: 0, drain: true}
                loadBalancer:
                  type: weighted_round_robin
                healthCheck:
                  intervalMilliseconds: 5000
                  timeoutMilliseconds: 1500
                  rise: 4
                  fall: 2
                """);
        assertThat(config.loadBalancer()).isEqualTo(Policy.WEIGHTED_ROUND_ROBIN);
        assertThat(config.healthCheck()).isEqualTo(new HealthCheckConfig(5000, 1500, 4, 2));
        assertThat(config.dataSources().get("primary").weight()).isEqualTo(3);
        assertThat(config.dataSources().get("primary").drain()).isFalse();
        assertThat(config.dataSources().get("replica").weight()).isZero();
        assertThat(config.dataSources().get("replica").drain()).isTrue();
    }

    @Test
    void refusesBadBackendGroupValuesNamingKeyAndLine() {
        String ds = "dataSources:\n  ds_0: {url: \"jdbc:mysql://h:3306/d\", username: u";
        assertRefused(ds + ", weight: 300}\n",
                "config.yaml line 2: dataSources.ds_0.weight: 300 (expected: 0..256)");
        assertRefused(ds + ", drain: maybe}\n",
                "config.yaml line 2: dataSources.ds_0.drain: \"maybe\" (expected: true or false)");
        assertRefused(ds + "}\nloadBalancer: {type: LEASTCONN}\n",
                "config.yaml line 3: loadBalancer.type: \"LEASTCONN\" (expected: one of LEAST_CONNECTIONS, ROUND_ROBIN,"
                        + " WEIGHTED_ROUND_ROBIN, POWER_OF_TWO_CHOICES, FIRST_AVAILABLE)");
        assertRefused(ds + "}\nloadBalancer: {policy: ROUND_ROBIN}\n",
                "config.yaml line 3: loadBalancer.policy: unknown key (expected: one of type)");
        assertRefused(ds + "}\nhealthCheck:\n  rise: 0\n",
                "config.yaml line 4: healthCheck.rise: 0 (expected: >= 1)");
        assertRefused(ds + "}\nhealthCheck:\n  inter: 2000\n",
                "config.yaml line 4: healthCheck.inter: unknown key (expected: one of intervalMilliseconds,"
                        + " timeoutMilliseconds, rise, fall)");
    }

    @Test
    void healthChecksCanBeTurnedOff() {
        ProxyConfig config = parse("dataSources:\n  ds_0: {url: \"jdbc:mysql://h:3306/d\", username: u}\n"
                + "healthCheck: {intervalMilliseconds: 0}\n");
        assertThat(config.healthCheck().enabled()).isFalse();
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
                + "(expected: one of databaseName, dataSources, rules, server, authority, loadBalancer, healthCheck, "
                + "admin, metrics, statistics, shutdown, slowQueryLog, reload, capture, pooling)");
    }

    @Test
    void readsTransactionPooling() {
        ProxyConfig config = parse("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u}
                pooling:
                  mode: transaction
                  preparedStatementCacheSize: 32
                """);
        assertThat(config.pooling()).isEqualTo(new PoolingConfig(PoolingMode.TRANSACTION, 32));
        assertThat(config.pooling().sessionMovesPerSecond()).isEqualTo(100);
        assertThat(parse("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u}
                pooling: {mode: transaction, sessionMovesPerSecond: 0}
                """).pooling().sessionMovesPerSecond()).isZero();
        assertThatThrownBy(() -> parse("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u}
                pooling: {mode: transaction, sessionMovesPerSecond: -1}
                """)).isInstanceOf(ConfigException.class).hasMessageContaining("pooling.sessionMovesPerSecond: -1");
        assertThat(parse("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u}
                """).pooling()).isEqualTo(PoolingConfig.defaults());
        assertThatThrownBy(() -> parse("""
                dataSources:
                  ds_0: {url: "jdbc:mysql://h/d", username: u}
                pooling: {mode: statement}
                """)).isInstanceOf(ConfigException.class)
                .hasMessageStartingWith("config.yaml line 3: pooling.mode: ")
                .hasMessageContaining("SESSION").hasMessageContaining("TRANSACTION");
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
                + "password, passwordFile, connectionTimeoutMilliseconds, idleTimeoutMilliseconds, "
                + "maxLifetimeMilliseconds, maxPoolSize, minPoolSize, maxPoolSizePerAccount, weight, drain, sslMode, sslCa)");
    }

    @Test
    void refusesUnknownServerAuthorityAndUserKeys() {
        assertRefused("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                server:
                  prot: 3307
                """, "config.yaml line 3: server.prot: unknown key (expected: one of address, port, workerThreads, "
                + "connBufferSize, maxConnections, serverVersion, maxPacketSize, transport, "
                + "handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, netReadTimeoutMilliseconds, loginBackoff, "
                + "tls, proxyProtocol)");
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
                + "(expected: one of user, password, passwordFile, passwordHash, maxConnections, backendUser, "
                + "backendPassword, backendPasswordFile)");
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
                + "handshakeTimeoutMilliseconds, idleTimeoutMilliseconds, netReadTimeoutMilliseconds, loginBackoff, "
                + "tls, proxyProtocol)");
        assertRefused("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                authority:
                  users:
                    user: root
                """, "config.yaml line 4: authority.users: a mapping (expected: a list of {user: name@host, password: "
                + "...}, or FROM_BACKEND)");
        assertRefused("""
                - just
                - a list
                """, "config.yaml line 1: (top level): a list (expected: a mapping of databaseName, dataSources, "
                + "rules, server, authority, loadBalancer, healthCheck, admin, metrics, statistics, shutdown, "
                + "slowQueryLog, reload, capture, pooling)");
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
    void refusesRulesOtherThanReadWriteSplitting() {
        assertRefused(SHARDINGSPHERE_SEED.replace("rules: []", """
                rules:
                - !SHARDING
                  tables:
                    t_order:
                      actualDataNodes: ds_${0..1}.t_order_${0..1}
                """), "config.yaml line 13: rules[0]: !SHARDING (expected: !READWRITE_SPLITTING or"
                + " !QUERY_RULES; Sluice does not rewrite SQL, so sharding, encryption and the other ShardingSphere rules are not supported)");
        assertRefused(SHARDINGSPHERE_SEED.replace("rules: []", "rules: {sharding: {}}"),
                "config.yaml line 12: rules: a mapping (expected: a list of rules, such as - !READWRITE_SPLITTING"
                + " {dataSources: {...}})");
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

    // ---- security keys (issue 6) ----------------------------------------------------------------------------

    private static final String NATIVE_HASH = "*6C7A370C07660BC788681B3238D93E08BD74303C";

    @Test
    void readsTheSecurityKeysWithFileNamesRelativeToTheConfDir(@TempDir Path dir) throws IOException {
        for (String name : new String[] {"cert.pem", "key.pem", "clients-ca.pem", "db-ca.pem"}) {
            Files.writeString(dir.resolve(name), "PEM");
        }
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, """
                dataSources:
                  ds_0:
                    url: jdbc:mysql://db:3306/app
                    username: sluice
                    sslMode: verify_ca
                    sslCa: db-ca.pem
                  ds_1:
                    url: jdbc:mysql://db2:3306/app
                    username: sluice
                    sslMode: PREFERRED
                server:
                  handshakeTimeoutMilliseconds: 5_000
                  idleTimeoutMilliseconds: 28800000
                  netReadTimeoutMilliseconds: 60000
                  loginBackoff:
                    afterFailures: 3
                    delayMilliseconds: 250
                    maxDelayMilliseconds: 60000
                  tls:
                    enabled: true
                    certFile: cert.pem
                    keyFile: key.pem
                    caFile: clients-ca.pem
                    verifyClient: require
                    requireSecureTransport: true
                    provider: jdk
                    protocols: [TLSv1.3]
                authority:
                  users:
                    - user: app@10.%
                      passwordHash: 'HASH'
                      maxConnections: 20
                """.replace("HASH", NATIVE_HASH));

        ProxyConfig config = ConfigYaml.load(file);

        assertThat(config.dataSources().get("ds_0").sslMode()).isEqualTo(SslMode.VERIFY_CA);
        assertThat(config.dataSources().get("ds_0").sslCa()).isEqualTo(dir.resolve("db-ca.pem"));
        assertThat(config.dataSources().get("ds_1").sslMode()).isEqualTo(SslMode.PREFERRED);
        ServerConfig server = config.server();
        assertThat(server.handshakeTimeoutMilliseconds()).isEqualTo(5_000);
        assertThat(server.idleTimeoutMilliseconds()).isEqualTo(28_800_000);
        assertThat(server.netReadTimeoutMilliseconds()).isEqualTo(60_000);
        assertThat(server.loginBackoff()).isEqualTo(new LoginBackoff(3, 250, 60_000));
        assertThat(server.tls()).isEqualTo(new TlsConfig(true, dir.resolve("cert.pem"), dir.resolve("key.pem"),
                dir.resolve("clients-ca.pem"), TlsConfig.VerifyClient.REQUIRE, true, TlsConfig.Provider.JDK,
                List.of("TLSv1.3"), dir.toAbsolutePath()));
        assertThat(config.users()).containsExactly(new UserConfig("app", "10.%", "", NATIVE_HASH, 20));
    }

    @Test
    void tlsIsOnByDefaultWithCertificatesGeneratedIntoTheConfDir(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("config.yaml");
        Files.writeString(file, SHARDINGSPHERE_SEED);
        TlsConfig tls = ConfigYaml.load(file).server().tls();
        assertThat(tls.enabled()).isTrue();
        assertThat(tls.usesGeneratedCertificates()).isTrue();
        assertThat(tls.generatedDirectory()).isEqualTo(dir.toAbsolutePath());
        assertThat(tls.protocols()).containsExactly("TLSv1.3", "TLSv1.2");
        assertThat(tls.requireSecureTransport()).isFalse();
        assertThat(ConfigYaml.load(file).primaryDataSource().sslMode()).isEqualTo(SslMode.DISABLED);

        assertThat(parse("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                server:
                  tls:
                    enabled: false
                """).server().tls().enabled()).isFalse();
    }

    @Test
    void refusesSecurityKeysItCannotServeNamingTheLine() {
        String ds = "dataSources: {ds_0: {url: \"jdbc:mysql://h/d\", username: u}}\n";
        assertRefused(ds + """
                server:
                  tls:
                    certfile: server.pem
                """, "config.yaml line 4: server.tls.certfile: unknown key (expected: one of enabled, certFile, "
                + "keyFile, caFile, verifyClient, requireSecureTransport, provider, protocols)");
        assertRefused(ds + """
                server:
                  tls:
                    certFile: absent.pem
                """, "config.yaml line 4: server.tls.certFile: \"absent.pem\" (expected: a readable file; "
                + Path.of("absent.pem").toAbsolutePath() + " is not one)");
        assertRefused(ds + """
                server:
                  tls:
                    enabled: "true"
                """, "config.yaml line 4: server.tls.enabled: \"true\" (expected: true or false)");
        assertRefused(ds + """
                server:
                  tls:
                    verifyClient: always
                """, "config.yaml line 4: server.tls.verifyClient: \"always\" (expected: one of NONE, OPTIONAL, REQUIRE)");
        assertRefused(ds + """
                server:
                  tls:
                    protocols: [TLSv1.3, TLSv1.1]
                """, "config.yaml line 4: server.tls.protocols: TLSv1.1 (expected: TLSv1.3 or TLSv1.2)");
        assertRefused(ds + """
                server:
                  tls:
                    enabled: false
                    requireSecureTransport: true
                """, "config.yaml line 5: server.tls.requireSecureTransport: true "
                + "(expected: false while enabled is false)");
        assertRefused(ds + """
                server:
                  loginBackoff:
                    delayMilliseconds: 0
                """, "config.yaml line 4: server.loginBackoff.delayMilliseconds: 0 (expected: >= 1)");
        assertRefused(ds + """
                server:
                  handshakeTimeoutMilliseconds: -1
                """, "config.yaml line 3: server.handshakeTimeoutMilliseconds: -1 (expected: >= 0)");
        assertRefused(ds + """
                server:
                  netReadTimeoutMilliseconds: -1
                """, "config.yaml line 3: server.netReadTimeoutMilliseconds: -1 (expected: >= 0)");
        assertRefused(ds + """
                server:
                  proxyProtocol:
                    trustedNetworks: [10.0.0.0/33]
                """, "config.yaml line 4: server.proxyProtocol.trustedNetworks: '10.0.0.0/33' (expected: a prefix "
                + "length 0..32)");
        assertRefused(ds + """
                server:
                  proxyProtocol:
                    trustedNetworks: [lb.example.com]
                """, "config.yaml line 4: server.proxyProtocol.trustedNetworks: 'lb.example.com' (expected: an IP "
                + "address or CIDR block)");
    }

    @Test
    void readsTheNetworksTrustedToSendProxyProtocolHeaders() {
        ProxyConfig config = parse("""
                dataSources: {ds_0: {url: "jdbc:mysql://h/d", username: u}}
                server:
                  proxyProtocol:
                    trustedNetworks: [10.0.0.0/8, "::1", 192.168.1.7]
                """);
        ProxyProtocol proxyProtocol = config.server().proxyProtocol();
        assertThat(proxyProtocol.enabled()).isTrue();
        assertThat(proxyProtocol.trusts(address("10.200.3.4"))).isTrue();
        assertThat(proxyProtocol.trusts(address("11.0.0.1"))).isFalse();
        assertThat(proxyProtocol.trusts(address("192.168.1.7"))).isTrue();
        assertThat(proxyProtocol.trusts(address("192.168.1.8"))).isFalse();
        assertThat(proxyProtocol.trusts(address("::1"))).isTrue();
        assertThat(parse("dataSources: {ds_0: {url: \"jdbc:mysql://h/d\", username: u}}\n").server()
                .proxyProtocol().enabled()).as("off by default").isFalse();
    }

    private static java.net.InetAddress address(String literal) {
        try {
            return java.net.InetAddress.getByName(literal);
        } catch (java.net.UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void refusesUsersAndDataSourcesWithBadSecurityKeys() {
        String ds = "dataSources: {ds_0: {url: \"jdbc:mysql://h/d\", username: u}}\n";
        assertRefused(ds + """
                authority:
                  users:
                    - user: app
                      passwordHash: 'secret'
                """, "config.yaml line 5: authority.users[0].passwordHash: not a MySQL password hash (expected: "
                + "*<40 hex digits> for mysql_native_password, $A$005$<salt><digest> for caching_sha2_password, "
                + "or 0x<hex> of either)");
        assertRefused(ds + """
                authority:
                  users:
                    - user: app
                      password: pw
                      passwordHash: '%s'
                """.formatted(NATIVE_HASH), "config.yaml line 6: authority.users[0].passwordHash: set together "
                + "with password (expected: one of the two)");
        assertRefused(ds + """
                authority:
                  users:
                    - user: app
                      maxConnections: -2
                """, "config.yaml line 5: authority.users[0].maxConnections: -2 (expected: >= 0)");
        assertRefused("""
                dataSources:
                  ds_0:
                    url: jdbc:mysql://h/d
                    username: u
                    sslMode: on
                """, "config.yaml line 5: dataSources.ds_0.sslMode: on (expected: one of DISABLED, PREFERRED, "
                + "REQUIRED, VERIFY_CA, VERIFY_IDENTITY)");
    }

    // ---- operations (issue #5): admin, metrics, shutdown, slowQueryLog, reload ----

    @Test
    void operationsSectionsDefaultWhenAbsent() {
        OperationsConfig operations = parse(SHARDINGSPHERE_SEED).operations();

        assertThat(operations).isEqualTo(OperationsConfig.defaults());
        assertThat(operations.admin()).isEqualTo(new AdminConfig(true, "127.0.0.1", 3080, null));
        assertThat(operations.metrics().enabled()).isTrue();
        assertThat(operations.shutdown()).isEqualTo(new ShutdownConfig(0, 15_000));
        assertThat(operations.slowQueryLog()).isEqualTo(new SlowQueryLogConfig(false, 1000, 1024));
        assertThat(operations.watchConfigFile()).isTrue();
        assertThat(ProxyConfig.builder().dataSource("ds_0", "jdbc:mysql://h/d", "u", "").build().operations())
                .as("built in code: no admin port unless asked").isEqualTo(OperationsConfig.embedded());
    }

    @Test
    void readsStatisticsAsASectionOrAsOff() {
        assertThat(parse(SHARDINGSPHERE_SEED).operations().metrics().statistics())
                .isEqualTo(StatisticsConfig.defaults());
        assertThat(parse(SHARDINGSPHERE_SEED + "statistics: off\n").operations().metrics().statistics().enabled())
                .isFalse();
        assertThat(parse(SHARDINGSPHERE_SEED + "statistics: true\n").operations().metrics().statistics())
                .isEqualTo(StatisticsConfig.defaults());
        assertThat(parse(SHARDINGSPHERE_SEED + """
                statistics:
                  maxDigests: 500
                  metricsTopN: 5
                """).operations().metrics().statistics()).isEqualTo(new StatisticsConfig(true, 500, 5));
        assertThat(parse(SHARDINGSPHERE_SEED + "statistics: {enabled: false}\n").operations().metrics()
                .statistics().enabled()).isFalse();
        assertThatThrownBy(() -> parse(SHARDINGSPHERE_SEED + "statistics: {maxDigests: 0}\n"))
                .isInstanceOf(ConfigException.class).hasMessageContaining("maxDigests: 0 (expected: 1..10000000)");
    }

    @Test
    void readsEveryOperationsKey() {
        OperationsConfig operations = parse(SHARDINGSPHERE_SEED + """
                admin:
                  enabled: true
                  address: 0.0.0.0
                  port: 9090
                  token: secret-token
                metrics:
                  enabled: false
                shutdown:
                  gracefulWaitBeforeShutdownMilliseconds: 10_000
                  gracefulCloseTimeoutMilliseconds: 20000
                slowQueryLog:
                  enabled: true
                  thresholdMilliseconds: 250
                  maxSqlLength: 512
                reload:
                  watchFile: false
                """).operations();

        assertThat(operations.admin()).isEqualTo(new AdminConfig(true, "0.0.0.0", 9090, "secret-token"));
        assertThat(operations.admin().toString()).doesNotContain("secret-token");
        assertThat(operations.metrics().enabled()).isFalse();
        assertThat(operations.shutdown()).isEqualTo(new ShutdownConfig(10_000, 20_000));
        assertThat(operations.slowQueryLog()).isEqualTo(new SlowQueryLogConfig(true, 250, 512));
        assertThat(operations.watchConfigFile()).isFalse();
    }

    @Test
    void refusesBadOperationsValuesNamingKeyAndLine() {
        String ds = "dataSources:\n  ds_0: {url: \"jdbc:mysql://h/d\", username: u}\n";
        assertRefused(ds + "admin:\n  port: 70000\n",
                "config.yaml line 4: admin.port: 70000 (expected: 0..65535)");
        assertRefused(ds + "admin:\n  tokn: x\n",
                "config.yaml line 4: admin.tokn: unknown key (expected: one of enabled, address, port, token, "
                        + "tokenFile, readToken, readTokenFile)");
        assertRefused(ds + "metrics:\n  enabled: sometimes\n",
                "config.yaml line 4: metrics.enabled: \"sometimes\" (expected: true or false)");
        assertRefused(ds + "shutdown:\n  gracefulCloseTimeoutMilliseconds: -1\n",
                "config.yaml line 4: shutdown.gracefulCloseTimeoutMilliseconds: -1 (expected: >= 0)");
        assertRefused(ds + "slowQueryLog:\n  maxSqlLength: 3\n",
                "config.yaml line 4: slowQueryLog.maxSqlLength: 3 (expected: 16..1048576)");
        assertRefused(ds + "reload: yes\n",
                "config.yaml line 3: reload: yes (expected: a mapping of watchFile)");
    }
}
