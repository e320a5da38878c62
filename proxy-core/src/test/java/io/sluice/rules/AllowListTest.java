package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ImmediateEventExecutor;
import io.sluice.config.AllowListConfig;
import io.sluice.config.AllowListConfig.Mode;
import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.config.QueryRuleConfig.Block;
import io.sluice.sql.SqlDigest;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The allow-list in the rule engine, without a server: which statements are outside it, how DRY_RUN leaves the rules
 * to act and counts once per command, how ENFORCE refuses before any rule, users it does not name, and that a known
 * shape, inside or outside, costs a probe of the decision cache and nothing allocated.
 */
class AllowListTest {

    private static final String POINT = "SELECT c FROM sbtest1 WHERE id = 1";
    private static final String EXTRA = "SELECT COUNT(*) FROM sbtest1 WHERE k > 3";

    private static AllowListConfig list(Mode mode) {
        return new AllowListConfig(mode, Map.of("app", Set.of(SqlDigest.of(POINT).hash())));
    }

    private static QueryRuleConfig block(String name, String pattern) {
        return new QueryRuleConfig(name, null, pattern, List.of(), List.of(), List.of(), List.of(), Action.BLOCK,
                null, new Block(1142, "42000", "refused by " + name));
    }

    private static ByteBuf query(String sql) {
        byte[] text = sql.getBytes(StandardCharsets.UTF_8);
        ByteBuf frame = Unpooled.buffer(5 + text.length);
        frame.writeMediumLE(text.length + 1).writeByte(0).writeByte(3).writeBytes(text);
        return frame;
    }

    /** One command's arrival as the rule hook makes it: the lookup between arriving and arrived. */
    private static QueryRule arrive(SessionRules session, String sql, String user) {
        ByteBuf frame = query(sql);
        try {
            session.arriving();
            QueryRule rule = session.ruleFor(frame, 5, frame.writerIndex(), user, null);
            session.arrived();
            // looked up again as it is routed or sent: not counted again
            session.ruleFor(frame, 5, frame.writerIndex(), user, null);
            return rule;
        } finally {
            frame.release();
        }
    }

    @Test
    void dryRunLetsTheRulesActAndCountsEachOutsideCommandOnce() {
        QueryRules rules = new QueryRules(List.of(block("no-count", "count \\(")), list(Mode.DRY_RUN));
        SessionRules session = rules.forSession(ImmediateEventExecutor.INSTANCE, null);
        assertThat(session.active()).isTrue();
        assertThat(arrive(session, "select c from sbtest1 where id = 42", "app")).isNull();
        for (int i = 0; i < 3; i++) {
            assertThat(arrive(session, EXTRA, "app").name()).isEqualTo("no-count"); // the rule still acts
        }
        assertThat(arrive(session, "SELECT 1", "app")).isNull();
        assertThat(arrive(session, "SELECT 2", "other")).isNull(); // a user the list does not name
        assertThat(rules.outsideAllowList()).extracting(QueryRules.OutsideShape::digest, QueryRules.OutsideShape::count)
                .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(SqlDigest.of(EXTRA).hash(), 3L),
                        org.assertj.core.groups.Tuple.tuple(SqlDigest.of("SELECT 1").hash(), 1L));
    }

    @Test
    void dryRunLogsEachOutsideShapeOnceAMinuteAtMostAndTwentyLinesASecond() {
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        Logger logger = (Logger) LoggerFactory.getLogger(AllowList.class);
        logger.addAppender(logged);
        try {
            QueryRules rules = new QueryRules(List.of(), list(Mode.DRY_RUN));
            SessionRules session = rules.forSession(ImmediateEventExecutor.INSTANCE, null);
            for (int i = 0; i < 100; i++) {
                arrive(session, EXTRA, "app");
                arrive(session, "SELECT 1", "app");
                arrive(session, POINT, "app");
            }
            assertThat(logged.list).extracting(ILoggingEvent::getFormattedMessage).containsExactlyInAnyOrder(
                    "Allow-list (DRY_RUN) would refuse user app digest " + SqlDigest.of(EXTRA).hash()
                            + ": select count (*) from sbtest1 where k > ? (1 so far)",
                    "Allow-list (DRY_RUN) would refuse user app digest " + SqlDigest.of("SELECT 1").hash()
                            + ": select ? (1 so far)");
            logged.list.clear();
            for (int i = 0; i < 100; i++) {
                arrive(session, "SELECT c" + i + " FROM t", "app");
            }
            assertThat(logged.list.size()).as("a burst of new shapes").isBetween(1, 20);
        } finally {
            logger.detachAppender(logged);
        }
    }

    @Test
    void enforceRefusesOutsideShapesBeforeAnyRuleAndNamesTheDigest() {
        QueryRules rules = new QueryRules(List.of(block("no-count", "count \\(")), list(Mode.ENFORCE));
        SessionRules session = rules.forSession(ImmediateEventExecutor.INSTANCE, null);
        QueryRule refusal = arrive(session, EXTRA, "app");
        assertThat(refusal.config().action()).isEqualTo(Action.BLOCK);
        assertThat(refusal.config().block().code()).isEqualTo(1148);
        assertThat(refusal.config().block().message()).contains("allow-list", "app", SqlDigest.of(EXTRA).hash());
        assertThat(arrive(session, "select C from sbtest1 where ID=7", "app")).isNull();
        assertThat(arrive(session, EXTRA, "web").name()).isEqualTo("no-count");
        assertThat(rules.explain(EXTRA, "app", null, null).rule()).isSameAs(refusal);
        assertThat(rules.judge(SqlDigest.of(EXTRA), "app", null).outsideAllowList()).isTrue();

        rules.update(List.of(), null); // a reload without the list: from the next statement
        assertThat(arrive(session, EXTRA, "app")).isNull();
        assertThat(session.active()).isFalse();
    }

    @Test
    void shapesOutsideTheListAreBoundedAndTheRestShareOneEntry() {
        QueryRules rules = new QueryRules(List.of(), list(Mode.DRY_RUN));
        SessionRules session = rules.forSession(ImmediateEventExecutor.INSTANCE, null);
        int shapes = AllowList.MAX_SHAPES + 5;
        for (int i = 0; i < shapes; i++) {
            arrive(session, "SELECT c" + i + " FROM t", "app");
        }
        List<QueryRules.OutsideShape> outside = rules.outsideAllowList();
        assertThat(outside).hasSize(AllowList.MAX_SHAPES + 1);
        assertThat(outside.get(AllowList.MAX_SHAPES).digest()).isEqualTo("other");
        assertThat(outside.get(AllowList.MAX_SHAPES).count()).isEqualTo(5);
        assertThat(outside.stream().mapToLong(QueryRules.OutsideShape::count).sum()).isEqualTo(shapes);
    }

    @Test
    void aKnownShapeInsideOrOutsideAllocatesNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        QueryRules rules = new QueryRules(List.of(), list(Mode.DRY_RUN));
        SessionRules session = rules.forSession(ImmediateEventExecutor.INSTANCE, null);
        ByteBuf inside = query(POINT);
        ByteBuf outside = query(EXTRA);
        try {
            long allocated = Long.MAX_VALUE;
            for (int round = 0; round < 4; round++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 20_000; i++) {
                    session.ruleFor(inside, 5, inside.writerIndex(), "app", "db");
                    session.ruleFor(outside, 5, outside.writerIndex(), "app", "db");
                }
                allocated = Math.min(allocated, threads.getCurrentThreadAllocatedBytes() - before);
            }
            assertThat(allocated).as("bytes allocated by 40,000 lookups").isLessThan(1_000);
        } finally {
            inside.release();
            outside.release();
        }
    }
}
