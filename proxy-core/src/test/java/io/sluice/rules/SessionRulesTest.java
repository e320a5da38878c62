package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.config.QueryRuleConfig.Block;
import io.sluice.config.QueryRuleConfig.StatementClass;
import io.sluice.sql.SqlDigest;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The rule engine without a server: matching by each matcher, first match wins, a reload's new version re-decides
 * cached shapes, and the steady state (every shape seen) allocates nothing.
 */
class SessionRulesTest {

    private static QueryRuleConfig block(String name, String digest, String pattern, List<String> users,
            List<String> schemas, List<String> networks, List<StatementClass> classes) {
        return new QueryRuleConfig(name, digest, pattern, users, schemas, networks, classes, Action.BLOCK, null,
                new Block(1148, "42000", "refused by " + name));
    }

    private static ByteBuf query(String sql) {
        byte[] text = sql.getBytes(StandardCharsets.UTF_8);
        ByteBuf frame = Unpooled.buffer(5 + text.length);
        frame.writeMediumLE(text.length + 1).writeByte(0).writeByte(3).writeBytes(text);
        return frame;
    }

    private static String ruleOf(SessionRules session, String sql, String user, String schema) {
        ByteBuf frame = query(sql);
        try {
            QueryRule rule = session.ruleFor(frame, 5, frame.writerIndex(), user, schema);
            return rule == null ? null : rule.name();
        } finally {
            frame.release();
        }
    }

    @Test
    void eachMatcherAndTheFirstMatchWins() throws Exception {
        QueryRules rules = new QueryRules(List.of(
                block("by-digest", SqlDigest.of("SELECT c FROM t WHERE id = 1").hash(), null, List.of(), List.of(),
                        List.of(), List.of()),
                block("ddl-for-app", null, null, List.of("app"), List.of(), List.of(), List.of(StatementClass.DDL)),
                block("dml-in-shop", null, null, List.of(), List.of("shop"), List.of(), List.of(StatementClass.DML)),
                block("pattern", null, "ORDERS_report", List.of(), List.of(), List.of(), List.of()),
                block("net", null, "^show", List.of(), List.of(), List.of("10.0.0.0/8"), List.of())));
        SessionRules inside = rules.forSession(ImmediateEventExecutor.INSTANCE, InetAddress.getByName("10.2.3.4"));
        SessionRules outside = rules.forSession(ImmediateEventExecutor.INSTANCE, InetAddress.getByName("192.0.2.7"));

        assertThat(ruleOf(inside, "select C from t where ID = 42", "web", null)).isEqualTo("by-digest");
        assertThat(ruleOf(inside, "SELECT c FROM t WHERE id > 42", "web", null)).isNull();
        assertThat(ruleOf(inside, "DROP TABLE t", "app", null)).isEqualTo("ddl-for-app");
        assertThat(ruleOf(inside, "DROP TABLE t", "web", null)).isNull();
        assertThat(ruleOf(inside, "SELECT 1; TRUNCATE t", "app", null)).isEqualTo("ddl-for-app");
        assertThat(ruleOf(inside, "UPDATE t SET a = 1", "web", "shop")).isEqualTo("dml-in-shop");
        assertThat(ruleOf(inside, "LOAD DATA INFILE 'x' INTO TABLE t", "web", "shop")).isEqualTo("dml-in-shop");
        assertThat(ruleOf(inside, "UPDATE t SET a = 1", "web", "blog")).isNull();
        assertThat(ruleOf(inside, "select * from orders_report", "web", null)).isEqualTo("pattern");
        assertThat(ruleOf(inside, "SHOW TABLES", "web", null)).isEqualTo("net");
        assertThat(ruleOf(outside, "SHOW TABLES", "web", null)).isNull();
        // the same shape and scope from the cache: the same answer
        assertThat(ruleOf(inside, "SHOW TABLES", "web", null)).isEqualTo("net");
        assertThat(ruleOf(outside, "SHOW TABLES", "web", null)).isNull();
    }

    @Test
    void aStatementLongerThanTheShapeIsDecidedAloneFromItsWholeText() {
        QueryRules rules = new QueryRules(List.of(
                block("ddl", null, null, List.of(), List.of(), List.of(), List.of(StatementClass.DDL))));
        SessionRules session = rules.forSession(ImmediateEventExecutor.INSTANCE, null);
        String padding = "SELECT '" + "x".repeat(5000) + "'";
        assertThat(ruleOf(session, padding + "; SELECT 2", "u", null)).isNull();
        // the same first 4096 bytes, a DROP after them: not the decision the first one left in the cache
        assertThat(ruleOf(session, padding + "; DROP TABLE t", "u", null)).isEqualTo("ddl");
        assertThat(ruleOf(session, padding + " /* DROP TABLE t */", "u", null)).isNull();
    }

    @Test
    void aNewRuleSetDecidesCachedShapesAgainAndKeepsUnchangedRulesCounters() {
        QueryRuleConfig first = block("first", null, "from a\\b", List.of(), List.of(), List.of(), List.of());
        QueryRules rules = new QueryRules(List.of(first));
        SessionRules session = rules.forSession(ImmediateEventExecutor.INSTANCE, null);
        assertThat(ruleOf(session, "SELECT * FROM b", "u", "s")).isNull();
        rules.rules().get(0).counters().matched();

        rules.update(List.of(first, block("second", null, "from b", List.of(), List.of(), List.of(), List.of())));
        assertThat(ruleOf(session, "SELECT * FROM b", "u", "s")).isEqualTo("second");
        assertThat(rules.rules().get(0).counters().matchedCount()).isEqualTo(1);

        rules.update(List.of());
        assertThat(ruleOf(session, "SELECT * FROM b", "u", "s")).isNull();
        assertThat(session.active()).isFalse();
    }

    @Test
    void findingTheDecisionOfAKnownShapeAllocatesNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        QueryRules rules = new QueryRules(List.of(
                block("ddl", null, null, List.of(), List.of(), List.of(), List.of(StatementClass.DDL)),
                block("report", null, "from orders_report", List.of("reporting"), List.of(), List.of(), List.of())));
        SessionRules session = rules.forSession(ImmediateEventExecutor.INSTANCE, null);
        ByteBuf[] frames = {
            query("SELECT c FROM sbtest1 WHERE id=17"),
            query("UPDATE sbtest1 SET k=k+1 WHERE id=17"),
            query("SELECT * FROM t WHERE id IN (1, 2, 3) AND b IS NULL"),
            query("DROP TABLE sbtest1"),
        };
        String user = "app";
        String schema = "sbtest";
        try {
            long matched = run(session, frames, user, schema, 1_000);
            long allocated = Long.MAX_VALUE;
            for (int round = 0; round < 3; round++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                matched += run(session, frames, user, schema, 20_000);
                allocated = Math.min(allocated, threads.getCurrentThreadAllocatedBytes() - before);
            }
            assertThat(allocated).as("bytes allocated by 80,000 statements").isLessThan(1_000);
            assertThat(matched).isEqualTo(1_000 + 3 * 20_000); // the DROP, once per round
        } finally {
            for (ByteBuf frame : frames) {
                frame.release();
            }
        }
    }

    private static long run(SessionRules session, ByteBuf[] frames, String user, String schema, int rounds) {
        long matched = 0;
        for (int round = 0; round < rounds; round++) {
            for (ByteBuf frame : frames) {
                if (session.ruleFor(frame, 5, frame.writerIndex(), user, schema) != null) {
                    matched++;
                }
            }
        }
        return matched;
    }
}
