package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.config.QueryRuleConfig.Target;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.ReplicationGroup;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code route} rules in a read/write split group on private primary and replica servers: a read a rule sends to the
 * primary runs there (text and prepared), a write a rule sends to the replicas still runs on the primary (a replica
 * is never written through Sluice) and counts as an error of the rule, and the rule goes with a reload.
 */
@Tag("server")
class QueryRuleRouteTest {
    private static final String READ = "SELECT @@port, v FROM t WHERE id = ";
    private static ReplicationGroup servers;
    private static Sluice sluice;

    @BeforeAll
    static void start() {
        servers = ReplicationGroup.start("rulesrw", 1);
        servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
                "INSERT INTO app.t VALUES (1, 1), (2, 2), (3, 3)");
        servers.awaitCaughtUp();
        ProxyConfig config = servers.sluiceConfig(3000)
                .pooling(PoolingConfig.defaults())
                .readWriteSplitting(servers.splitGroup("app_rw"))
                .build();
        sluice = Sluice.start(config);
    }

    @AfterAll
    static void stop() {
        if (sluice != null) {
            sluice.close();
        }
        if (servers != null) {
            servers.close();
        }
    }

    @AfterEach
    void noRules() {
        useRules();
    }

    private static void useRules(QueryRuleConfig... rules) {
        sluice.reload(sluice.config().withQueryRules(List.of(rules)));
    }

    private static QueryRuleConfig route(String name, String pattern, Target target) {
        return new QueryRuleConfig(name, null, pattern, List.of(), List.of(), List.of(), List.of(), Action.ROUTE,
                target, null);
    }

    private static Connection connect(String params) throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), "app_rw", params),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    private static QueryRule.Counters counters(String name) {
        return sluice.queryRules().rules().stream().filter(r -> r.name().equals(name)).findFirst().orElseThrow()
                .counters();
    }

    private static int portOf(Statement s, int id) throws SQLException {
        try (ResultSet rs = s.executeQuery(READ + id)) {
            assertThat(rs.next()).isTrue();
            assertThat(rs.getInt(2)).isEqualTo(id);
            return rs.getInt(1);
        }
    }

    @Test
    void aReadARuleSendsToThePrimaryRunsThereAndOthersStillGoToTheReplica() throws SQLException {
        int primary = servers.primary().port();
        int replica = servers.replica(0).port();
        try (Connection c = connect(""); Statement s = c.createStatement()) {
            assertThat(portOf(s, 1)).isEqualTo(replica); // without rules: a read goes to the replica
            useRules(route("hot-read", "from t where id = \\?$", Target.PRIMARY));
            for (int id = 1; id <= 3; id++) {
                assertThat(portOf(s, id)).isEqualTo(primary);
            }
            try (ResultSet rs = s.executeQuery("SELECT @@port FROM t WHERE id > 0 LIMIT 1")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(replica); // another shape: the replica, as before
            }
            useRules();
            assertThat(portOf(s, 2)).isEqualTo(replica);
        }
    }

    @Test
    void preparedExecutionsFollowTheRuleOfTheirSql() throws SQLException {
        int primary = servers.primary().port();
        useRules(route("hot-prepared", "from t where id = \\?$", Target.PRIMARY));
        try (Connection c = connect("useServerPrepStmts=true");
                PreparedStatement p = c.prepareStatement("SELECT @@port, v FROM t WHERE id = ?")) {
            for (int id = 1; id <= 3; id++) {
                p.setInt(1, id);
                try (ResultSet rs = p.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getInt(1)).isEqualTo(primary);
                }
            }
        }
        assertThat(counters("hot-prepared").actedCount()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void aWriteARuleSendsToTheReplicasStillRunsOnThePrimary() throws SQLException {
        useRules(route("wrong-way", "^update t", Target.REPLICA));
        try (Connection c = connect(""); Statement s = c.createStatement()) {
            assertThat(s.executeUpdate("UPDATE t SET v = 30 WHERE id = 3")).isEqualTo(1);
            try (Connection root = servers.primary().rootConnection(); Statement direct = root.createStatement();
                    ResultSet rs = direct.executeQuery("SELECT v FROM app.t WHERE id = 3")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(30); // written on the primary (a replica is read-only anyway)
            }
            s.executeUpdate("UPDATE t SET v = 31 WHERE id = 3");
            s.executeUpdate("UPDATE t SET v = 3 WHERE id = 3");
        }
        QueryRule.Counters counters = counters("wrong-way");
        assertThat(counters.matchedCount()).isEqualTo(3);
        assertThat(counters.actedCount()).isZero();
        assertThat(counters.errorCount()).isEqualTo(3);
    }
}
