package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code maxConcurrency} rules end to end on the real server, with MariaDB Connector/J (text) and MySQL Connector/J
 * (server-side prepared): N {@code SELECT SLEEP(1)} run at once and one more waits for a permit, or, past its wait,
 * gets ERR 1226; clients killed mid-statement give their permits back; statements running across a reload that keeps the rule still count;
 * every permit is back once all have ended.
 * Run under session and transaction pooling by the two classes that extend it.
 */
abstract class QueryRuleConcurrencyCases {
    private static final int LIMIT = 2;

    abstract SluiceExtension proxy();

    private void useRules(QueryRuleConfig... rules) {
        proxy().sluice().reload(proxy().sluice().config().withQueryRules(List.of(rules)));
    }

    private static QueryRuleConfig concurrency(String name, long limit, long maxWait) {
        return new QueryRuleConfig(name, null, "^select sleep", List.of(), List.of(), List.of(), List.of(),
                Action.MAX_CONCURRENCY, null, null, limit, null, maxWait);
    }

    private QueryRule.Counters counters() {
        return proxy().sluice().queryRules().rules().stream().filter(r -> r.concurrency() != null).findFirst()
                .orElseThrow().counters();
    }

    @AfterEach
    void noRules() {
        useRules();
    }

    /** Sleeps {@code seconds} through its own connection; returns the milliseconds it took. */
    private long sleep(JdbcDriver driver, double seconds) throws SQLException {
        String options = driver == JdbcDriver.MYSQL ? "useServerPrepStmts=true" : "";
        try (Connection c = proxy().connect(driver, proxy().db(), options)) {
            long start = System.nanoTime();
            if (driver == JdbcDriver.MYSQL) {
                try (PreparedStatement p = c.prepareStatement("SELECT SLEEP(?)")) {
                    p.setDouble(1, seconds);
                    try (ResultSet rs = p.executeQuery()) {
                        assertThat(rs.next()).isTrue();
                    }
                }
            } else {
                try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT SLEEP(" + seconds + ")")) {
                    assertThat(rs.next()).isTrue();
                }
            }
            return (System.nanoTime() - start) / 1_000_000;
        }
    }

    /** Notes when a client's statement ended; returns its time. */
    private static long ended(long[] ends, int which, long millis) {
        synchronized (ends) {
            ends[which] = System.nanoTime();
        }
        return millis;
    }

    private void awaitRunning(int expected) throws InterruptedException {
        awaitRunning(expected, 10_000);
    }

    private void awaitRunning(int expected, long millis) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (counters().runningCount() != expected && System.nanoTime() < end) {
            Thread.sleep(10);
        }
        assertThat(counters().runningCount()).as("statements holding a permit").isEqualTo(expected);
    }

    @Test
    void oneMoreThanTheLimitWaitsForAPermitThenRuns() throws Exception {
        useRules(concurrency("two-sleepers", LIMIT, 5000));
        ExecutorService clients = Executors.newFixedThreadPool(LIMIT + 1);
        try {
            long[] ends = new long[LIMIT + 1];
            List<Future<Long>> first = new ArrayList<>();
            first.add(clients.submit(() -> ended(ends, 0, sleep(JdbcDriver.MARIADB, 1))));
            first.add(clients.submit(() -> ended(ends, 1, sleep(JdbcDriver.MYSQL, 1))));
            awaitRunning(LIMIT);
            Future<Long> third = clients.submit(() -> ended(ends, 2, sleep(JdbcDriver.MARIADB, 0.2)));
            for (Future<Long> each : first) {
                assertThat(each.get(10, TimeUnit.SECONDS)).isBetween(900L, 1_900L);
            }
            third.get(10, TimeUnit.SECONDS);
            // it waited for one of the first two to end, then ran its own 0.2 s
            assertThat((ends[2] - Math.min(ends[0], ends[1])) / 1_000_000).isGreaterThanOrEqualTo(150L);
        } finally {
            clients.shutdownNow();
        }
        awaitRunning(0);
        assertThat(counters().actedCount()).as("held back").isGreaterThanOrEqualTo(1);
        assertThat(counters().errorCount()).isZero();
    }

    @Test
    void oneMoreThanTheLimitIsRefusedPastItsWaitAndTheSessionGoesOn() throws Exception {
        useRules(concurrency("two-sleepers", LIMIT, 200));
        ExecutorService clients = Executors.newFixedThreadPool(LIMIT);
        try (Connection c = proxy().connect(JdbcDriver.MARIADB, proxy().db(), ""); Statement s = c.createStatement()) {
            List<Future<Long>> first = new ArrayList<>();
            first.add(clients.submit(() -> sleep(JdbcDriver.MARIADB, 1)));
            first.add(clients.submit(() -> sleep(JdbcDriver.MYSQL, 1)));
            awaitRunning(LIMIT);
            long start = System.nanoTime();
            assertThatThrownBy(() -> s.executeQuery("SELECT SLEEP(0.1)"))
                    .isInstanceOfSatisfying(SQLException.class, e -> {
                        assertThat(e.getErrorCode()).isEqualTo(1226);
                        assertThat(e.getSQLState()).isEqualTo("42000");
                        assertThat(e.getMessage()).contains("query rule two-sleepers", "2 statements");
                    });
            assertThat((System.nanoTime() - start) / 1_000_000).isBetween(150L, 800L);
            try (ResultSet rs = s.executeQuery("SELECT 41 + 1")) { // another shape: not held, the session goes on
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(42);
            }
            for (Future<Long> each : first) {
                each.get(10, TimeUnit.SECONDS);
            }
            awaitRunning(0);
            try (ResultSet rs = s.executeQuery("SELECT SLEEP(0)")) { // and runs the rule's shape again
                assertThat(rs.next()).isTrue();
            }
        } finally {
            clients.shutdownNow();
        }
        assertThat(counters().errorCount()).isEqualTo(1);
        awaitRunning(0);
    }

    @Test
    void statementsRunningAcrossAReloadThatKeepsTheRuleStillCount() throws Exception {
        QueryRuleConfig rule = concurrency("two-sleepers", LIMIT, 300);
        useRules(rule);
        ExecutorService clients = Executors.newFixedThreadPool(LIMIT);
        try (Connection c = proxy().connect(JdbcDriver.MARIADB, proxy().db(), ""); Statement s = c.createStatement()) {
            List<Future<Long>> first = new ArrayList<>();
            first.add(clients.submit(() -> sleep(JdbcDriver.MARIADB, 1.5)));
            first.add(clients.submit(() -> sleep(JdbcDriver.MYSQL, 1.5)));
            awaitRunning(LIMIT);
            useRules(new QueryRuleConfig("other", null, "^select 1 from dual", List.of(), List.of(), List.of(),
                    List.of(), Action.BLOCK, null, new QueryRuleConfig.Block(1148, "42000", "no (other)")), rule);
            assertThat(counters().runningCount()).as("kept across the reload").isEqualTo(LIMIT);
            assertThatThrownBy(() -> s.executeQuery("SELECT SLEEP(0.1)"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1226));
            for (Future<Long> each : first) {
                each.get(10, TimeUnit.SECONDS);
            }
            awaitRunning(0);
        } finally {
            clients.shutdownNow();
        }
    }

    @Test
    void clientsKilledMidStatementGiveTheirPermitsBack() throws Exception {
        useRules(concurrency("two-sleepers", LIMIT, 5000));
        ExecutorService clients = Executors.newFixedThreadPool(LIMIT);
        List<RawMySqlClient> killed = new ArrayList<>();
        try {
            for (int i = 0; i < LIMIT; i++) {
                RawMySqlClient raw = proxy().rawLogin(proxy().db());
                killed.add(raw);
                raw.sendQuery("SELECT SLEEP(5)");
            }
            awaitRunning(LIMIT);
            // one more waits behind them, its client killed too while it waits
            RawMySqlClient waiter = proxy().rawLogin(proxy().db());
            killed.add(waiter);
            waiter.sendQuery("SELECT SLEEP(5)");
            Thread.sleep(200);
            assertThat(counters().runningCount()).isEqualTo(LIMIT);
            long killedAt = System.nanoTime();
            for (RawMySqlClient each : killed) {
                each.abort(); // the socket closes under the running (or waiting) statement
            }
            awaitRunning(0, 2_000); // at the sessions' close, not when the server ends the 5 s sleeps
            assertThat((System.nanoTime() - killedAt) / 1_000_000).isLessThan(2_000L);
            // the limit is whole again: two run at once, without waiting for the killed ones' 5 s
            long start = System.nanoTime();
            Future<Long> a = clients.submit(() -> sleep(JdbcDriver.MARIADB, 0.5));
            Future<Long> b = clients.submit(() -> sleep(JdbcDriver.MYSQL, 0.5));
            assertThat(a.get(10, TimeUnit.SECONDS)).isLessThan(1_400L);
            assertThat(b.get(10, TimeUnit.SECONDS)).isLessThan(1_400L);
            assertThat((System.nanoTime() - start) / 1_000_000).isLessThan(3_000L);
        } finally {
            clients.shutdownNow();
            for (RawMySqlClient each : killed) {
                each.close();
            }
        }
        awaitRunning(0);
    }
}
