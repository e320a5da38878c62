package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.config.QueryRuleConfig.Block;
import io.sluice.config.QueryRuleConfig.StatementClass;
import io.sluice.sql.SqlDigest;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.SluiceExtension;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code block} rules end to end, with real clients on the real server: exactly the shape a rule names is refused
 * with the configured error, before any server sees it; everything else runs, on the same connection; prepared
 * statements are refused at prepare and at execute, a rule added after the prepare included; a multi-statement is
 * one text; a reload adds and removes a rule while sessions run. Run under session and transaction pooling by the
 * two classes that extend it.
 */
abstract class QueryRuleBlockCases {

    static final String SETUP_TABLE = "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20))";
    static final String SETUP_ROWS = "INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')";

    abstract SluiceExtension proxy();

    private Connection connect(String params) throws SQLException {
        return proxy().connect(JdbcDriver.MARIADB, proxy().db(), params);
    }

    private void useRules(QueryRuleConfig... rules) {
        proxy().sluice().reload(proxy().sluice().config().withQueryRules(List.of(rules)));
    }

    private QueryRule running(String name) {
        return proxy().sluice().queryRules().rules().stream().filter(r -> r.name().equals(name)).findFirst()
                .orElseThrow();
    }

    static QueryRuleConfig block(String name, String digest, String pattern, List<StatementClass> classes,
            List<String> users) {
        return new QueryRuleConfig(name, digest, pattern, users, List.of(), List.of(), classes, Action.BLOCK, null,
                new Block(1142, "42000", "refused by rule " + name));
    }

    @AfterEach
    void noRules() {
        useRules();
    }

    @Test
    void refusesExactlyTheDigestItNamesAndNothingElse() throws SQLException {
        String digest = SqlDigest.of("SELECT c FROM t WHERE id = 1").hash();
        useRules(block("point", digest, null, List.of(), List.of()));
        try (Connection c = connect(""); Statement s = c.createStatement()) {
            for (int id = 1; id <= 3; id++) {
                int key = id;
                assertThatThrownBy(() -> s.executeQuery("SELECT c FROM t WHERE id = " + key))
                        .isInstanceOfSatisfying(SQLException.class, e -> {
                            assertThat(e.getErrorCode()).isEqualTo(1142);
                            assertThat(e.getSQLState()).isEqualTo("42000");
                            assertThat(e.getMessage()).contains("refused by rule point");
                        });
                // the same connection goes on: another shape, then the server's own view of what ran
                try (ResultSet rs = s.executeQuery("SELECT c FROM t WHERE id >= " + key + " ORDER BY id")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1)).isEqualTo(List.of("one", "two", "three").get(id - 1));
                }
            }
            try (ResultSet rs = s.executeQuery("select   C from T where ID=2 /* another spelling, same shape */")) {
                throw new AssertionError("the same shape in other spelling ran: " + rs);
            } catch (SQLException e) {
                assertThat(e.getErrorCode()).isEqualTo(1142);
            }
        }
        QueryRule.Counters counters = running("point").counters();
        assertThat(counters.matchedCount()).isEqualTo(4);
        assertThat(counters.actedCount()).isEqualTo(4);
        assertThat(counters.errorCount()).isZero();
    }

    @Test
    void aPatternIsCaseInsensitiveOnTheDigestTextAndUserScoped() throws SQLException {
        useRules(block("upd", null, "^UPDATE t SET", List.of(), List.of(proxy().user())),
                block("other-user", null, "^select", List.of(), List.of("rules_nobody")));
        try (Connection c = connect(""); Statement s = c.createStatement()) {
            assertThatThrownBy(() -> s.executeUpdate("update t set c = 'x' where id = 1"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1142));
            try (ResultSet rs = s.executeQuery("SELECT c FROM t WHERE id = 1")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("one"); // the refused UPDATE never ran
            }
        }
        assertThat(running("other-user").counters().matchedCount()).isZero();
    }

    @Test
    void preparedStatementsAreRefusedAtPrepareAndAtExecuteWhenTheRuleCameAfter() throws SQLException {
        try (Connection c = connect("useServerPrepStmts=true");
                PreparedStatement p = c.prepareStatement("SELECT c FROM t WHERE id = ?")) {
            p.setInt(1, 2);
            try (ResultSet rs = p.executeQuery()) {
                assertThat(rs.next()).isTrue();
            }
            useRules(block("late", null, "from t where id = \\?", List.of(), List.of()));
            assertThatThrownBy(p::executeQuery)
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(1142);
                        assertThat(e.getMessage()).contains("late");
                    });
            useRules();
            try (ResultSet rs = p.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("two");
            }
        }
        useRules(block("early", null, "from t where id = \\?", List.of(), List.of()));
        try (Connection c = connect("useServerPrepStmts=true")) {
            // Connector/J falls back to a text query when the server prepare fails: the rule refuses that too
            assertThatThrownBy(() -> {
                PreparedStatement p = c.prepareStatement("SELECT c FROM t WHERE id = ?");
                p.setInt(1, 1);
                p.executeQuery();
            }).isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1142));
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(3);
            }
        }
        assertThat(running("early").counters().actedCount()).isPositive();
    }

    @Test
    void aRawPrepareGetsTheRulesErrInStep() throws Exception {
        useRules(block("raw", null, "from t where id = \\?", List.of(), List.of()));
        try (RawMySqlClient raw = proxy().rawLogin(proxy().db())) {
            raw.sendCommand(0x16, "SELECT c FROM t WHERE id = ?".getBytes(StandardCharsets.UTF_8));
            RawMySqlClient.Packet answer = raw.readPacket();
            assertThat(answer.isErr()).isTrue();
            assertThat(answer.sequence()).isEqualTo(1);
            assertThat(answer.errorCode()).isEqualTo(1142);
            assertThat(answer.sqlState()).isEqualTo("42000");
            assertThat(answer.errorMessage()).isEqualTo("refused by rule raw");
            assertThat(raw.query("SELECT COUNT(*) FROM t").rows()).containsExactly(List.of("3"));
        }
        assertThat(running("raw").counters().matchedCount()).isEqualTo(1);
    }

    @Test
    void aMultiStatementIsOneTextWithTheClassesOfAllItsStatements() throws SQLException {
        useRules(block("no-ddl", null, null, List.of(StatementClass.DDL), List.of()));
        try (Connection c = connect("allowMultiQueries=true"); Statement s = c.createStatement()) {
            assertThatThrownBy(() -> s.execute("SELECT 1; DROP TABLE t"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1142));
            assertThat(s.execute("SELECT 1; SELECT 2")).isTrue();
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(3); // the table is still there
            }
        }
    }

    @Test
    void aReloadAddsAndRemovesARuleWhileSessionsRun() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        AtomicBoolean stop = new AtomicBoolean();
        AtomicLong refused = new AtomicLong();
        AtomicLong ran = new AtomicLong();
        AtomicReference<Throwable> unexpected = new AtomicReference<>();
        try {
            List<Future<?>> sessions = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++) {
                sessions.add(pool.submit(() -> {
                    try (Connection c = connect(""); Statement s = c.createStatement()) {
                        while (!stop.get()) {
                            try (ResultSet rs = s.executeQuery("SELECT c FROM t WHERE id = 3")) {
                                assertThat(rs.next()).isTrue();
                                ran.incrementAndGet();
                            } catch (SQLException e) {
                                if (e.getErrorCode() != 1142) {
                                    throw e;
                                }
                                refused.incrementAndGet();
                            }
                            try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
                                assertThat(rs.next()).isTrue(); // never refused: another shape
                            }
                        }
                    } catch (Throwable e) {
                        unexpected.compareAndSet(null, e);
                    }
                    return null;
                }));
            }
            awaitAbove(ran, 0);
            useRules(block("live", null, "where id = \\?$", List.of(), List.of()));
            awaitAbove(refused, 20);
            useRules();
            long ranBefore = ran.get();
            awaitAbove(ran, ranBefore + 20);
            stop.set(true);
            for (Future<?> session : sessions) {
                session.get(30, TimeUnit.SECONDS);
            }
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
        assertThat(unexpected.get()).isNull();
        assertThat(refused.get()).isGreaterThan(20);
    }

    private static void awaitAbove(AtomicLong counter, long floor) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (counter.get() <= floor) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("still " + counter.get() + " after 30 s (expected: above " + floor + ")");
            }
            Thread.sleep(5);
        }
    }
}
