package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code mirror} rules end to end: each statement a rule matches runs as usual for the client and, as a copy, on
 * the rule's data source (here the same server, so the copy's effect can be counted), off the client's path; other
 * statements are not copied; a copy's result is discarded and its connection reset before it is pooled again.
 */
@Tag("server")
class QueryRuleMirrorTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.config(c -> c.withQueryRules(List.of(
                    new QueryRuleConfig("shadow-writes", null, "^insert into `?rules_mir_\\w*`?\\.events", List.of(),
                            List.of(), List.of(), List.of(), Action.MIRROR, null, null, 0, "ds_0")))))
            .sluiceOnly("Sluice's own query rules").database("rules_mir_", "CREATE TABLE events (v INT)");

    private static long count(String sql) throws SQLException {
        try (Connection root = TestMariaDb.get().rootConnection(); Statement s = root.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void matchedStatementsRunAgainOnTheMirrorAndOthersDoNot() throws Exception {
        String table = proxy.db() + ".events";
        try (Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), ""); Statement s = c.createStatement()) {
            for (int v = 1; v <= 5; v++) {
                assertThat(s.executeUpdate("INSERT INTO " + table + " (v) VALUES (" + v + ")")).isEqualTo(1);
            }
            assertThat(s.executeUpdate("INSERT INTO events (v) VALUES (100)")).isEqualTo(1); // not the rule's shape
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM events")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getLong(1)).isBetween(6L, 11L); // the client's own rows at least, copies may lag
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        QueryRule.Counters counters = proxy.sluice().queryRules().rules().get(0).counters();
        // a copy counts as acted when its response has been read, a moment after its row is there
        while ((count("SELECT COUNT(*) FROM " + table) < 11 || counters.actedCount() < 5)
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(count("SELECT COUNT(*) FROM " + table)).isEqualTo(11); // 5 + 5 copies + 1 not copied
        assertThat(count("SELECT COUNT(*) FROM " + table + " WHERE v = 100")).isEqualTo(1);
        assertThat(counters.matchedCount()).isEqualTo(5);
        assertThat(counters.actedCount()).isEqualTo(5);
        assertThat(counters.errorCount()).isZero();
    }
}
