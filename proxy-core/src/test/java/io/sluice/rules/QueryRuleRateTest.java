package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.PoolingConfig;
import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.SluiceExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code maxPerSecond} rules end to end under transaction pooling: a client that sends as fast as it can is held to
 * the rate (within 10 %) by waiting, without an error, text and prepared alike; other shapes run at full speed
 * meanwhile; a statement whose turn would come after its wait gets ERR 1226 at once, and the session goes on.
 */
@Tag("server")
class QueryRuleRateTest {
    private static final int RATE = 20;

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.pooling(PoolingConfig.transaction()))
            .sluiceOnly("Sluice's own query rules")
            .database("rules_rate_", "CREATE TABLE t (id INT PRIMARY KEY, c INT)", "INSERT INTO t VALUES (1, 1)");

    private static void useRules(QueryRuleConfig... rules) {
        proxy.sluice().reload(proxy.sluice().config().withQueryRules(List.of(rules)));
    }

    private static QueryRuleConfig rate(String name, String pattern, long perSecond, long maxWait) {
        return new QueryRuleConfig(name, null, pattern, List.of(), List.of(), List.of(), List.of(),
                Action.MAX_PER_SECOND, null, null, perSecond, null, maxWait);
    }

    @AfterEach
    void noRules() {
        useRules();
    }

    @Test
    void aClientAsFastAsItCanIsHeldToTheRateByWaiting() throws Exception {
        useRules(rate("twenty", "from t where id = \\?$", RATE, 1000));
        List<Long> done = new ArrayList<>();
        long start = System.nanoTime();
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), "useServerPrepStmts=true");
                Statement s = c.createStatement();
                PreparedStatement p = c.prepareStatement("SELECT c FROM t WHERE id = ?")) {
            p.setInt(1, 1);
            while (System.nanoTime() - start < 3_500_000_000L) {
                if (done.size() % 2 == 0) {
                    try (ResultSet rs = s.executeQuery("SELECT c FROM t WHERE id = 1")) {
                        assertThat(rs.next()).isTrue();
                    }
                } else {
                    try (ResultSet rs = p.executeQuery()) {
                        assertThat(rs.next()).isTrue();
                    }
                }
                done.add(System.nanoTime());
            }
            // another shape meanwhile: not held back
            long other = System.nanoTime();
            for (int i = 0; i < 100; i++) {
                try (ResultSet rs = s.executeQuery("SELECT c FROM t WHERE id > " + i)) {
                    rs.next();
                }
            }
            assertThat((System.nanoTime() - other) / 1_000_000).isLessThan(2_000);
        }
        // after the burst (one second's worth), the rate holds
        int first = RATE;
        int last = done.size() - 1;
        double seconds = (done.get(last) - done.get(first)) / 1e9;
        double rate = (last - first) / seconds;
        assertThat(rate).as("statements a second after the burst, %d in all", done.size())
                .isBetween(RATE * 0.9, RATE * 1.1);
        QueryRule.Counters counters = proxy.sluice().queryRules().rules().get(0).counters();
        assertThat(counters.matchedCount()).isEqualTo(done.size() + 1L); // and the prepare, which is not held back
        assertThat(counters.errorCount()).isZero();
        assertThat(counters.actedCount()).as("held back").isGreaterThanOrEqualTo(done.size() - RATE - 2L);
    }

    @Test
    void aStatementWhoseTurnComesAfterItsWaitIsRefusedAtOnce() throws SQLException {
        useRules(rate("one", "^select c from t where id = \\?$", 1, 100));
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), ""); Statement s = c.createStatement()) {
            try (ResultSet rs = s.executeQuery("SELECT c FROM t WHERE id = 1")) {
                assertThat(rs.next()).isTrue(); // the burst of one
            }
            long start = System.nanoTime();
            assertThatThrownBy(() -> s.executeQuery("SELECT c FROM t WHERE id = 1"))
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(1226);
                        assertThat(e.getSQLState()).isEqualTo("42000");
                        assertThat(e.getMessage()).contains("query rule one", "more than 1 a second");
                    });
            assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(500);
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) { // the session goes on
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(1);
            }
        }
        assertThat(proxy.sluice().queryRules().rules().get(0).counters().errorCount()).isEqualTo(1);
    }

    @Test
    void whatAPipeliningClientSentBehindAWaitingStatementWaitsBehindIt() throws Exception {
        useRules(rate("pipelined", "^select \\? as turn$", 1, 3000));
        try (RawMySqlClient raw = proxy.rawLogin(proxy.db())) {
            raw.sendQuery("SELECT 1 AS turn");
            raw.sendQuery("SELECT 2 AS turn"); // waits about a second for its turn
            raw.sendQuery("SELECT 3 AS other"); // another shape, behind it: answered after it
            long start = System.nanoTime();
            List<String> answers = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                answers.add(raw.readResult().rows().get(0).get(0));
            }
            assertThat(answers).containsExactly("1", "2", "3");
            assertThat((System.nanoTime() - start) / 1_000_000).isBetween(700L, 2_500L);
        }
    }

    @Test
    void aWaitThatEndsInTimeRunsTheStatementAndWhatCameBehindItInOrder() throws SQLException {
        useRules(rate("two", "^update t set c = \\?", 2, 2000));
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), "allowMultiQueries=false");
                Statement s = c.createStatement()) {
            long start = System.nanoTime();
            for (int v = 10; v < 16; v++) {
                assertThat(s.executeUpdate("UPDATE t SET c = " + v + " WHERE id = 1")).isEqualTo(1);
            }
            // burst of 2, then one every 500 ms: 4 waits
            assertThat((System.nanoTime() - start) / 1_000_000).isBetween(1_700L, 3_500L);
            try (ResultSet rs = s.executeQuery("SELECT c FROM t WHERE id = 1")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(15);
            }
        }
    }
}
