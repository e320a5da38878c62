package io.sluice.accounts;

import static io.sluice.accounts.ThreeAccounts.ADMIN;
import static io.sluice.accounts.ThreeAccounts.READER;
import static io.sluice.accounts.ThreeAccounts.WRITER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.AdminConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.UserConfig;
import io.sluice.testing.AdminClient;
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
import java.util.Set;
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
 * Mapped accounts (issue #39, decision 145): Sluice users with a {@code backendUser} run on the server as that
 * account, in session and transaction pooling, with MariaDB Connector/J, MySQL Connector/J and the mariadb client.
 * Each sees exactly its own identity, grants and processlist rows; a user without one still runs as the data source's
 * account; a transaction-pooled connection never serves another account; COM_CHANGE_USER switches accounts.
 */
@Tag("server")
@Tag("tools")
class MappedAccountsTest {
    private static final String TOKEN = "acc-token";

    private static ThreeAccounts accounts;
    private static ProxyUnderTest sessionPooling;
    private static ProxyUnderTest transactionPooling;

    @BeforeAll
    static void start() {
        accounts = new ThreeAccounts();
        sessionPooling = mapped(ProxyUnderTest.builder()).admin(AdminConfig.on("127.0.0.1", 0, TOKEN)).start();
        transactionPooling = mapped(ProxyUnderTest.builder()).transactionPooling().start();
    }

    @AfterAll
    static void stop() {
        if (sessionPooling != null) {
            sessionPooling.close();
        }
        if (transactionPooling != null) {
            transactionPooling.close();
        }
        if (accounts != null) {
            accounts.close();
        }
    }

    /** Sluice's users {@code reader}, {@code writer} and {@code admin}, each mapped to its server account. */
    static ProxyUnderTest.Builder mapped(ProxyUnderTest.Builder builder) {
        return builder
                .user(new UserConfig("reader", "%", "reader-secret", null, 0, READER, ThreeAccounts.READER_PASSWORD))
                .user(new UserConfig("writer", "%", "writer-secret", null, 0, WRITER, ThreeAccounts.WRITER_PASSWORD))
                .user(new UserConfig("admin", "%", "admin-secret", null, 0, ADMIN, ThreeAccounts.ADMIN_PASSWORD));
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

    private static ProxyUnderTest proxy(String pooling) {
        return "SESSION".equals(pooling) ? sessionPooling : transactionPooling;
    }

    static Connection connect(ProxyUnderTest proxy, JdbcDriver driver, String user) throws SQLException {
        return driver.connect(proxy.jdbcUrl(driver, accounts.db, ""), user, user + "-secret");
    }

    static String one(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).as(sql).isTrue();
            return rs.getString(1);
        }
    }

    static List<String> column(Connection c, String sql) throws SQLException {
        List<String> values = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                values.add(rs.getString(1));
            }
        }
        return values;
    }

    @ParameterizedTest(name = "{0} pooling, {1}")
    @MethodSource("poolingAndDriver")
    void eachUserHasItsOwnAccountsIdentityGrantsAndProcesslist(String pooling, JdbcDriver driver) throws Exception {
        ProxyUnderTest proxy = proxy(pooling);
        try (Connection reader = connect(proxy, driver, "reader"); Connection writer = connect(proxy, driver, "writer");
             Connection admin = connect(proxy, driver, "admin")) {
            assertThat(one(reader, "SELECT CURRENT_USER()")).startsWith(READER + "@");
            assertThat(one(reader, "SELECT USER()")).startsWith(READER + "@");
            assertThat(one(writer, "SELECT CURRENT_USER()")).startsWith(WRITER + "@");
            assertThat(one(admin, "SELECT CURRENT_USER()")).startsWith(ADMIN + "@");

            assertThat(String.join("\n", column(reader, "SHOW GRANTS"))).contains("GRANT SELECT ON `" + accounts.db)
                    .doesNotContain("INSERT").doesNotContain("PROCESS");
            assertThat(String.join("\n", column(writer, "SHOW GRANTS")))
                    .contains("GRANT SELECT, INSERT, UPDATE, DELETE ON `" + accounts.db);
            assertThat(String.join("\n", column(admin, "SHOW GRANTS"))).contains("GRANT PROCESS ON *.*");

            // The server decides: the reader may not write, the writer may.
            assertThatThrownBy(() -> reader.createStatement().executeUpdate("INSERT INTO t VALUES (2, 'two')"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1142));
            int id = 100 + (int) (System.nanoTime() % 1000);
            try (Statement s = writer.createStatement()) {
                assertThat(s.executeUpdate("INSERT INTO t VALUES (" + id + ", 'w')")).isEqualTo(1);
                assertThat(s.executeUpdate("DELETE FROM t WHERE id = " + id)).isEqualTo(1);
            }

            // Without PROCESS an account sees its own sessions only, as on a direct connection.
            assertThat(new HashSet<>(column(reader, "SELECT USER FROM information_schema.PROCESSLIST")))
                    .containsExactly(READER);
            assertThat(new HashSet<>(column(writer, "SELECT USER FROM information_schema.PROCESSLIST")))
                    .containsExactly(WRITER);
            if ("SESSION".equals(pooling)) {
                // Each session holds its connection: the admin sees the three accounts' sessions.
                assertThat(column(admin, "SELECT USER FROM information_schema.PROCESSLIST WHERE USER LIKE 'acc\\_%'"))
                        .contains(READER, WRITER, ADMIN);
            }
        }
    }

    @Test
    void aUserWithoutBackendUserStillRunsAsTheDataSourceAccount() throws Exception {
        try (Connection c = sessionPooling.connect(JdbcDriver.MARIADB, null, "")) {
            assertThat(one(c, "SELECT CURRENT_USER()")).startsWith(TestMariaDb.ROOT_USER + "@");
        }
    }

    /**
     * Transaction pooling on one event loop, two sessions of two accounts taking turns: each statement's connection
     * is its own account's (CURRENT_USER() and the server's processlist agree), the two sets of server connection ids
     * never meet, and within an account connections are still shared.
     */
    @Test
    void transactionPoolingNeverLendsOneAccountsConnectionToAnother() throws Exception {
        try (ProxyUnderTest proxy = mapped(ProxyUnderTest.builder()).transactionPooling().workerThreads(1)
                .maxPoolSize(4).start();
             Connection reader = connect(proxy, JdbcDriver.MARIADB, "reader");
             Connection writer = connect(proxy, JdbcDriver.MARIADB, "writer");
             Connection reader2 = connect(proxy, JdbcDriver.MYSQL, "reader")) {
            Set<String> readerIds = new HashSet<>();
            Set<String> writerIds = new HashSet<>();
            for (int i = 0; i < 20; i++) {
                for (Connection c : new Connection[] {reader, writer, reader2}) {
                    String[] row = row(c, "SELECT CONNECTION_ID(), CURRENT_USER()");
                    boolean isWriter = c == writer;
                    assertThat(row[1]).startsWith((isWriter ? WRITER : READER) + "@");
                    (isWriter ? writerIds : readerIds).add(row[0]);
                }
            }
            assertThat(readerIds).doesNotContainAnyElementsOf(writerIds);
            // The two reader sessions took turns on their account's pooled connection(s): sharing still works.
            assertThat(readerIds.size()).isLessThan(40);
            for (String id : readerIds) {
                assertThat(serverUserOf(id)).isIn(READER, null); // null: closed meanwhile
            }
            for (String id : writerIds) {
                assertThat(serverUserOf(id)).isIn(WRITER, null);
            }
        }
    }

    /**
     * {@code maxPoolSizePerAccount}: a reader holding its account's only connection in a transaction makes the second
     * reader wait and fail with 1040 naming the setting, while the writer, another account, works on.
     */
    @Test
    void anAccountAtItsBoundWaitsWhileAnotherAccountWorks() throws Exception {
        try (ProxyUnderTest proxy = mapped(ProxyUnderTest.builder()).transactionPooling().maxPoolSize(3)
                .connectionTimeoutMillis(1_000).dataSource(ds -> ds.withMaxPoolSizePerAccount(1)).start();
             Connection first = connect(proxy, JdbcDriver.MARIADB, "reader");
             Connection second = connect(proxy, JdbcDriver.MARIADB, "reader");
             Connection writer = connect(proxy, JdbcDriver.MARIADB, "writer")) {
            try (Statement s = first.createStatement()) {
                s.execute("BEGIN");
                s.executeQuery("SELECT * FROM t").close();
            }
            assertThatThrownBy(() -> one(second, "SELECT 1")).isInstanceOfSatisfying(SQLException.class, e -> {
                assertThat(e.getErrorCode()).isEqualTo(1040);
                assertThat(e.getMessage()).contains("maxPoolSizePerAccount");
            });
            assertThat(one(writer, "SELECT CURRENT_USER()")).startsWith(WRITER + "@");
            try (Statement s = first.createStatement()) {
                s.execute("COMMIT");
            }
            assertThat(one(second, "SELECT CURRENT_USER()")).startsWith(READER + "@");
        }
    }

    /**
     * Two event loops, one connection per account: the second reader waits for the first's connection, which comes
     * free when the first leaves (session pooling) or commits (transaction pooling), on whichever loop it was; the
     * writer, another account, never waits.
     */
    @ParameterizedTest(name = "{0} pooling")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"SESSION", "TRANSACTION"})
    void aWaitingSessionGetsItsAccountsConnectionWhenItComesFree(String pooling) throws Exception {
        ProxyUnderTest.Builder builder = mapped(ProxyUnderTest.builder()).workerThreads(2).maxPoolSize(3)
                .connectionTimeoutMillis(10_000).dataSource(ds -> ds.withMaxPoolSizePerAccount(1));
        boolean transaction = "TRANSACTION".equals(pooling);
        try (ProxyUnderTest proxy = (transaction ? builder.transactionPooling() : builder).start()) {
            Connection first = connect(proxy, JdbcDriver.MARIADB, "reader");
            assertThat(one(first, "SELECT CURRENT_USER()")).startsWith(READER + "@");
            if (transaction) {
                first.createStatement().execute("BEGIN");
                one(first, "SELECT COUNT(*) FROM t");
            }
            java.util.concurrent.CompletableFuture<String> second = java.util.concurrent.CompletableFuture.supplyAsync(
                    () -> {
                        try (Connection c = connect(proxy, JdbcDriver.MARIADB, "reader")) {
                            return one(c, "SELECT CURRENT_USER()");
                        } catch (SQLException e) {
                            throw new IllegalStateException(e);
                        }
                    });
            Thread.sleep(500);
            assertThat(second).as("waits while the first reader holds the account's connection").isNotDone();
            try (Connection writer = connect(proxy, JdbcDriver.MARIADB, "writer")) {
                assertThat(one(writer, "SELECT CURRENT_USER()")).startsWith(WRITER + "@");
            }
            if (transaction) {
                first.createStatement().execute("COMMIT");
            } else {
                first.close();
            }
            assertThat(second.get(8, TimeUnit.SECONDS)).startsWith(READER + "@");
            first.close();
        }
    }

    @ParameterizedTest(name = "{0} pooling")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"SESSION", "TRANSACTION"})
    void changeUserSwitchesTheServerAccount(String pooling) throws Exception {
        ProxyUnderTest proxy = proxy(pooling);
        try (Connection c = connect(proxy, JdbcDriver.MYSQL, "reader")) {
            assertThat(one(c, "SELECT CURRENT_USER()")).startsWith(READER + "@");
            c.unwrap(com.mysql.cj.jdbc.JdbcConnection.class).changeUser("writer", "writer-secret");
            assertThat(one(c, "SELECT CURRENT_USER()")).startsWith(WRITER + "@");
            assertThat(column(c, "SELECT USER FROM information_schema.PROCESSLIST")).containsOnly(WRITER);
            c.unwrap(com.mysql.cj.jdbc.JdbcConnection.class).changeUser(ProxyUnderTest.USER,
                    ProxyUnderTest.PASSWORD);
            assertThat(one(c, "SELECT CURRENT_USER()")).startsWith(TestMariaDb.ROOT_USER + "@");
        }
    }

    @Test
    void sessionsAndMetricsShowTheAccount() throws Exception {
        try (Connection reader = connect(sessionPooling, JdbcDriver.MARIADB, "reader")) {
            one(reader, "SELECT 1");
            AdminClient admin = new AdminClient("127.0.0.1", sessionPooling.adminPort());
            String sessions = admin.get("/api/sessions?verbose", TOKEN).body();
            assertThat(sessions).contains("\"user\":\"reader\",\"account\":\"" + READER + "\"");
            assertThat(admin.scrape().value("sluice_backend_account_connections", "backend", "ds_0", "account",
                    READER)).isGreaterThanOrEqualTo(1);
        }
    }

    @Test
    void mariadbClientRunsAsItsAccount() throws Exception {
        String out = run(Tool.MARIADB.path().toString(), "--no-defaults", "-h" + sessionPooling.host(),
                "-P" + sessionPooling.port(), "-ureader", "-preader-secret", "-D" + accounts.db, "-N", "-e",
                "SELECT CURRENT_USER(); INSERT INTO t VALUES (3, 'x')");
        assertThat(out).contains(READER + "@").contains("ERROR 1142");
    }

    private static String[] row(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).isTrue();
            return new String[] {rs.getString(1), rs.getString(2)};
        }
    }

    /** The account the server shows for connection {@code id}, asked as root; {@code null} when it is gone. */
    private static String serverUserOf(String id) throws SQLException {
        try (Connection root = TestMariaDb.get().rootConnection()) {
            List<String> users = column(root, "SELECT USER FROM information_schema.PROCESSLIST WHERE ID = " + id);
            return users.isEmpty() ? null : users.get(0);
        }
    }

    private static String run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return out;
    }
}
