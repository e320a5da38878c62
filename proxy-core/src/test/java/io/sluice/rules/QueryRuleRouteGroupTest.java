package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.QueryRuleConfig;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.ReplicationGroup;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code route} rules that name another group (decision 194), with real servers and clients: a private primary and
 * replica (group {@code app_rw}) and the shared MariaDB (data source {@code home}), each holding a table {@code t}
 * whose {@code origin} column says which it is. One Sluice has plain sessions on {@code home} (the group's servers
 * take no sessions of their own), another split sessions on {@code app_rw} ({@code home} takes none); both pool by
 * transaction. A matched statement runs on the other group, with the session's state; the next one at home; inside a
 * transaction it stays and the rule counts an error.
 */
@Tag("server")
class QueryRuleRouteGroupTest {
    private static final String READ = "SELECT @@port, origin FROM t WHERE id = ";
    private static ReplicationGroup servers;
    private static String db;
    /** Another database on the shared server: the data source {@code home} of the split Sluice's URL names it. */
    private static String alt;
    private static Sluice plain;
    private static Sluice split;
    private static Sluice sessionPooled;

    @BeforeAll
    static void start() {
        servers = ReplicationGroup.start("routegroup", 1);
        db = TestMariaDb.get().createDatabase("routegroup_");
        TestMariaDb.get().executeIn(db, "CREATE TABLE t (id INT PRIMARY KEY, origin VARCHAR(10))",
                "INSERT INTO t VALUES (1, 'home'), (2, 'home')", "CREATE TABLE w (v INT)");
        servers.primary().execute("CREATE DATABASE " + db,
                "CREATE TABLE " + db + ".t (id INT PRIMARY KEY, origin VARCHAR(10))",
                "INSERT INTO " + db + ".t VALUES (1, 'group'), (2, 'group')", "CREATE TABLE " + db + ".w (v INT)");
        alt = TestMariaDb.get().createDatabase("routegroup_alt_");
        TestMariaDb.get().executeIn(alt, "CREATE TABLE t (id INT PRIMARY KEY, origin VARCHAR(10))",
                "INSERT INTO t VALUES (1, 'alt'), (2, 'alt')");
        servers.awaitCaughtUp();
        plain = Sluice.start(config(0, 1, PoolingConfig.transaction(), db));
        split = Sluice.start(config(1, 0, PoolingConfig.transaction(), alt));
        sessionPooled = Sluice.start(config(0, 1, PoolingConfig.defaults(), db));
    }

    /**
     * Both groups and the rule targets, the group's servers weighted {@code groupWeight}, home {@code homeWeight}
     * with {@code homeDb} in its URL.
     */
    private static ProxyConfig config(int groupWeight, int homeWeight, PoolingConfig pooling, String homeDb) {
        return ProxyConfig.builder()
                .port(0)
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .healthCheck(new HealthCheckConfig(200, 1000, 1, 2))
                .dataSource(dataSource("primary", servers.primary().jdbcUrl(db), groupWeight))
                .dataSource(dataSource("replica_0", servers.replica(0).jdbcUrl(db), groupWeight))
                .dataSource(dataSource("home", TestMariaDb.get().jdbcUrl(homeDb), homeWeight))
                .readWriteSplitting(servers.splitGroup("app_rw"))
                .pooling(pooling)
                .build();
    }

    private static DataSourceConfig dataSource(String name, String url, int weight) {
        return new DataSourceConfig(name, url, TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD, 3000, 60_000,
                600_000, 8, 0, weight, false);
    }

    @AfterAll
    static void stop() {
        for (Sluice each : new Sluice[] {plain, split, sessionPooled}) {
            if (each != null) {
                each.close();
            }
        }
        if (db != null) {
            TestMariaDb.get().dropDatabase(db);
        }
        if (alt != null) {
            TestMariaDb.get().dropDatabase(alt);
        }
        if (servers != null) {
            servers.close();
        }
    }

    @AfterEach
    void noRules() {
        useRules(plain);
        useRules(split);
        useRules(sessionPooled);
    }

    private static void useRules(Sluice sluice, QueryRuleConfig... rules) {
        sluice.reload(sluice.config().withQueryRules(List.of(rules)));
    }

    private static QueryRuleConfig routeTo(String name, String pattern, String group) {
        return QueryRuleConfig.routeTo(name, null, pattern, List.of(), List.of(), List.of(), List.of(), group);
    }

    private static Connection connect(Sluice sluice, JdbcDriver driver, String schema, String params)
            throws SQLException {
        return driver.connect(driver.url("127.0.0.1", sluice.port(), schema, params), ProxyUnderTest.USER,
                ProxyUnderTest.PASSWORD);
    }

    private static QueryRule.Counters counters(Sluice sluice, String name) {
        return sluice.queryRules().rules().stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow()
                .counters();
    }

    /** The port and origin a query's first row names. */
    private static String where(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).isTrue();
            return rs.getInt(1) + "/" + rs.getString(2);
        }
    }

    private static String home() {
        return TestMariaDb.get().port() + "/home";
    }

    private static String replica() {
        return servers.replica(0).port() + "/group";
    }

    private static long count(ExtraMariaDb server, String sql) throws SQLException {
        try (Connection root = server.rootConnection(); Statement s = root.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void aMatchedTextReadRunsOnAReplicaOfTheGroupAndTheNextStatementAtHome() throws SQLException {
        try (Connection c = connect(plain, JdbcDriver.MARIADB, db, ""); Statement s = c.createStatement()) {
            assertThat(where(s, READ + 1)).isEqualTo(home()); // no rule yet
            useRules(plain, routeTo("reports", "from `?t`? where id = \\?$", "app_rw"));
            for (int i = 0; i < 3; i++) {
                assertThat(where(s, READ + 1)).isEqualTo(replica());
                assertThat(where(s, "SELECT @@port, origin FROM t ORDER BY id LIMIT 1")).isEqualTo(home());
            }
        }
        QueryRule.Counters counters = counters(plain, "reports");
        assertThat(counters.actedCount()).isEqualTo(3);
        assertThat(counters.errorCount()).isZero();
    }

    @Test
    void aMatchedWriteRunsOnThePrimaryOfTheGroup() throws SQLException {
        String table = db + ".w";
        long before = count(servers.primary(), "SELECT COUNT(*) FROM " + table);
        useRules(plain, routeTo("writes", "^insert into `?w`?", "app_rw"));
        try (Connection c = connect(plain, JdbcDriver.MARIADB, db, ""); Statement s = c.createStatement()) {
            assertThat(s.executeUpdate("INSERT INTO w VALUES (7)")).isEqualTo(1);
            assertThat(where(s, READ + 2)).isEqualTo(home()); // back at home
        }
        assertThat(count(servers.primary(), "SELECT COUNT(*) FROM " + table)).isEqualTo(before + 1);
        try (Connection home = TestMariaDb.get().rootConnection(); Statement s = home.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + table + " WHERE v = 7")) {
            rs.next();
            assertThat(rs.getLong(1)).isZero(); // not written at home
        }
        assertThat(counters(plain, "writes").actedCount()).isEqualTo(1);
    }

    @Test
    void aServerSidePreparedReadRunsOnTheGroupAndIsPreparedThere() throws SQLException {
        useRules(plain, routeTo("prepared", "from `?t`? where id = \\?$", "app_rw"));
        try (Connection c = connect(plain, JdbcDriver.MYSQL, db, "useServerPrepStmts=true&cachePrepStmts=false");
                PreparedStatement p = c.prepareStatement(READ + "?");
                Statement s = c.createStatement()) {
            for (int id = 1; id <= 2; id++) {
                p.setInt(1, id);
                try (ResultSet rs = p.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1) + "/" + rs.getString(2)).isEqualTo(replica());
                }
                assertThat(where(s, "SELECT @@port, origin FROM t ORDER BY id LIMIT 1")).isEqualTo(home());
            }
        }
        assertThat(counters(plain, "prepared").actedCount()).isGreaterThanOrEqualTo(2);
        assertThat(counters(plain, "prepared").errorCount()).isZero();
    }

    @Test
    void theSessionsStateIsAppliedToTheRoutedStatement() throws SQLException {
        useRules(plain, routeTo("state", "from `?t`? where id = \\?$", "app_rw"));
        try (Connection c = connect(plain, JdbcDriver.MARIADB, db, ""); Statement s = c.createStatement()) {
            s.execute("SET @answer = 42");
            s.execute("SET SESSION div_precision_increment = 7");
            try (ResultSet rs = s.executeQuery("SELECT @@port, @answer, @@div_precision_increment, DATABASE()"
                    + " FROM t WHERE id = 1")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(servers.replica(0).port());
                assertThat(rs.getInt(2)).isEqualTo(42);
                assertThat(rs.getInt(3)).isEqualTo(7);
                assertThat(rs.getString(4)).isEqualTo(db);
            }
        }
        assertThat(counters(plain, "state").actedCount()).isEqualTo(1);
    }

    @Test
    void insideATransactionTheStatementStaysAndTheRuleCountsAnError() throws SQLException {
        useRules(plain, routeTo("in-tx", "from `?t`? where id = \\?$", "app_rw"));
        try (Connection c = connect(plain, JdbcDriver.MARIADB, db, ""); Statement s = c.createStatement()) {
            c.setAutoCommit(false);
            assertThat(where(s, READ + 1)).isEqualTo(home());
            c.commit();
            s.execute("BEGIN");
            assertThat(where(s, READ + 1)).isEqualTo(home());
            s.execute("COMMIT");
            c.setAutoCommit(true);
            assertThat(where(s, READ + 1)).isEqualTo(replica()); // between transactions again: moved
        }
        QueryRule.Counters counters = counters(plain, "in-tx");
        assertThat(counters.errorCount()).isEqualTo(2);
        assertThat(counters.actedCount()).isEqualTo(1);
    }

    /**
     * The session asks for the group by its name, which each data source resolves to the database of its URL: the
     * group's servers to {@code db}, {@code home} (in this Sluice) to {@code alt}, where the routed read runs.
     */
    @Test
    void aSplitSessionsMatchedReadRunsOnAnotherDataSourceInItsDatabaseAndTheNextOnItsReplica() throws SQLException {
        try (Connection c = connect(split, JdbcDriver.MARIADB, "app_rw", ""); Statement s = c.createStatement()) {
            assertThat(where(s, READ + 1)).isEqualTo(replica());
            useRules(split, routeTo("to-home", "from `?t`? where id = \\?$", "home"));
            for (int i = 0; i < 3; i++) {
                assertThat(where(s, READ + 1)).isEqualTo(TestMariaDb.get().port() + "/alt");
                assertThat(where(s, "SELECT @@port, origin FROM t ORDER BY id LIMIT 1")).isEqualTo(replica());
            }
            s.executeUpdate("INSERT INTO w VALUES (8)"); // the session's own write: on its primary still
        }
        assertThat(count(servers.primary(), "SELECT COUNT(*) FROM " + db + ".w WHERE v = 8")).isEqualTo(1);
        assertThat(counters(split, "to-home").actedCount()).isEqualTo(3);
        assertThat(counters(split, "to-home").errorCount()).isZero();
    }

    @Test
    void aReloadAddsAndRemovesTheRuleWhileSessionsRun() throws Exception {
        AtomicBoolean running = new AtomicBoolean(true);
        AtomicInteger onGroup = new AtomicInteger();
        AtomicInteger atHome = new AtomicInteger();
        ExecutorService clients = Executors.newFixedThreadPool(4);
        List<Future<?>> runs = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                runs.add(clients.submit(() -> {
                    try (Connection c = connect(plain, JdbcDriver.MARIADB, db, "");
                            Statement s = c.createStatement()) {
                        while (running.get()) {
                            String at = where(s, READ + 1);
                            (at.equals(replica()) ? onGroup : atHome).incrementAndGet();
                            assertThat(at).isIn(replica(), home());
                            assertThat(where(s, "SELECT @@port, origin FROM t ORDER BY id LIMIT 1"))
                                    .isEqualTo(home());
                        }
                    }
                    return null;
                }));
            }
            for (int round = 0; round < 5; round++) {
                Thread.sleep(150);
                useRules(plain, routeTo("reloaded", "from `?t`? where id = \\?$", "app_rw"));
                Thread.sleep(150);
                useRules(plain);
            }
            Thread.sleep(150);
            running.set(false);
            for (Future<?> run : runs) {
                run.get(30, TimeUnit.SECONDS); // a client's failure fails the test here
            }
        } finally {
            running.set(false);
            clients.shutdownNow();
        }
        assertThat(onGroup.get()).isPositive();
        assertThat(atHome.get()).isPositive();
        try (Connection c = connect(plain, JdbcDriver.MARIADB, db, ""); Statement s = c.createStatement()) {
            assertThat(where(s, READ + 1)).isEqualTo(home()); // the rule is gone
        }
    }

    @Test
    void aPinnedSessionRunsTheStatementAtHomeAndTheRuleCountsAnError() throws SQLException {
        useRules(plain, routeTo("pinned", "from `?t`? where id = \\?$", "app_rw"));
        try (Connection c = connect(plain, JdbcDriver.MARIADB, db, ""); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT GET_LOCK('routegroup', 5)")) {
                assertThat(rs.next()).isTrue(); // the lock pins the session to its connection at home
            }
            assertThat(where(s, READ + 1)).isEqualTo(home());
            s.executeQuery("SELECT RELEASE_LOCK('routegroup')").close();
            assertThat(where(s, READ + 1)).isEqualTo(replica()); // unpinned: moved
        }
        assertThat(counters(plain, "pinned").errorCount()).isEqualTo(1);
        assertThat(counters(plain, "pinned").actedCount()).isEqualTo(1);
    }

    @Test
    void anErrorOnTheOtherGroupReachesTheClientAndTheNextStatementRunsAtHome() throws SQLException {
        TestMariaDb.get().executeIn(db, "CREATE TABLE IF NOT EXISTS only_home (id INT)");
        useRules(plain, routeTo("missing", "from `?only_home`?", "app_rw"));
        try (Connection c = connect(plain, JdbcDriver.MARIADB, db, ""); Statement s = c.createStatement()) {
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> s.executeQuery("SELECT id FROM only_home"))
                    .isInstanceOf(SQLException.class).hasMessageContaining("only_home"); // no such table there
            assertThat(where(s, "SELECT @@port, origin FROM t ORDER BY id LIMIT 1")).isEqualTo(home());
            try (ResultSet rs = s.executeQuery("SHOW WARNINGS")) {
                assertThat(rs.next()).isFalse(); // the other group's diagnostics stay there (decision 194)
            }
        }
    }

    @Test
    void aStatementPipelinedBehindARoutedOneRunsAtHome() throws Exception {
        useRules(plain, routeTo("pipelined", "from `?t`? where id = \\?$", "app_rw"));
        try (RawMySqlClient raw = RawMySqlClient.login("127.0.0.1", plain.port(), ProxyUnderTest.USER,
                ProxyUnderTest.PASSWORD, db)) {
            for (int round = 0; round < 5; round++) {
                raw.sendQuery(READ + 1); // both written before either is answered
                raw.sendQuery("SELECT @@port, origin FROM t ORDER BY id LIMIT 1");
                List<String> first = raw.readResult().rows().get(0);
                List<String> second = raw.readResult().rows().get(0);
                assertThat(first.get(0) + "/" + first.get(1)).isEqualTo(replica());
                assertThat(second.get(0) + "/" + second.get(1)).isEqualTo(home());
            }
        }
        assertThat(counters(plain, "pipelined").actedCount()).isEqualTo(5);
    }

    @Test
    void inSessionPoolingTheStatementStaysAndTheRuleCountsAnError() throws SQLException {
        useRules(sessionPooled, routeTo("session", "from `?t`? where id = \\?$", "app_rw"));
        try (Connection c = connect(sessionPooled, JdbcDriver.MARIADB, db, ""); Statement s = c.createStatement()) {
            assertThat(where(s, READ + 1)).isEqualTo(home());
        }
        assertThat(counters(sessionPooled, "session").errorCount()).isEqualTo(1);
        assertThat(counters(sessionPooled, "session").actedCount()).isZero();
    }

    @Test
    void aCursorsExecuteStaysWhereItsRowsWillBeFetched() throws SQLException {
        useRules(plain, routeTo("cursor", "from `?t`? where id = \\?$", "app_rw"));
        try (Connection c = connect(plain, JdbcDriver.MYSQL, db, "useServerPrepStmts=true&useCursorFetch=true");
                PreparedStatement p = c.prepareStatement(READ + "?")) {
            p.setFetchSize(1); // COM_STMT_EXECUTE opens a cursor; its rows come by COM_STMT_FETCH
            p.setInt(1, 1);
            try (ResultSet rs = p.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1) + "/" + rs.getString(2)).isEqualTo(home());
            }
        }
        assertThat(counters(plain, "cursor").errorCount()).isEqualTo(1);
        assertThat(counters(plain, "cursor").actedCount()).isZero();
    }
}
