package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.sluice.api.BackendSnapshot;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * HikariCP applications in front of Sluice in {@code pooling: TRANSACTION} (issue #8): a pool of eight client
 * connections, whose connections Hikari retires every 200 ms (as max-lifetime would, only faster), shares three server
 * connections. Transactions must all succeed and add up, and Sluice must never open more than {@code maxPoolSize}
 * server connections; with idle server connections at hand, new client logins must not cost server logins.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@Tag("server")
class HikariChurnTest {

    private static final int MAX_POOL = 3;
    private static final int HIKARI_POOL = 8;
    private static final int WORKERS = 6;
    private static final int COUNTERS = 5;
    private static final long CHURN_MILLIS = 5_000;

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension
            .with(b -> b.transactionPooling().maxPoolSize(MAX_POOL).connectionTimeoutMillis(20_000))
            .sluiceOnly("transaction pooling is a proxy feature")
            .database("sluice_mux_hikari");

    private static BackendSnapshot pool() {
        return proxy.sluice().backends().get(0);
    }

    private static HikariDataSource hikari(JdbcDriver driver, String name) {
        HikariConfig config = new HikariConfig();
        config.setDriverClassName(driver.className());
        config.setJdbcUrl(proxy.jdbcUrl(driver, proxy.db(), DifferentialHarness.params(driver,
                driver == JdbcDriver.MYSQL ? "useServerPrepStmts=true&cachePrepStmts=true" : "useServerPrepStmts=true")));
        config.setUsername(proxy.user());
        config.setPassword(proxy.password());
        config.setMaximumPoolSize(HIKARI_POOL);
        config.setMinimumIdle(HIKARI_POOL);
        config.setConnectionTimeout(30_000);
        config.setPoolName(name);
        return new HikariDataSource(config);
    }

    /** Samples the largest number of server connections Sluice had open, until stopped. */
    private static final class OpenConnectionsWatcher implements AutoCloseable {
        final AtomicInteger maxOpen = new AtomicInteger();
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread thread;

        OpenConnectionsWatcher() {
            thread = new Thread(() -> {
                while (!stop.get()) {
                    maxOpen.accumulateAndGet(pool().openConnections(), Math::max);
                    try {
                        Thread.sleep(2);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "open-connections-watcher");
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            stop.set(true);
            thread.join(5_000);
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void transactionsAddUpUnderMaxLifetimeChurn(JdbcDriver driver) throws Exception {
        String db = proxy.db();
        String table = "counter_" + driver.name().toLowerCase();
        TestMariaDb.get().execute("DROP TABLE IF EXISTS `" + db + "`." + table,
                "CREATE TABLE `" + db + "`." + table + " (id INT PRIMARY KEY, n BIGINT NOT NULL) ENGINE=InnoDB",
                "INSERT INTO `" + db + "`." + table + " SELECT seq, 0 FROM `" + db + "`.seq_1_to_" + COUNTERS,
                "DROP TABLE IF EXISTS `" + db + "`." + table + "_log",
                "CREATE TABLE `" + db + "`." + table + "_log (id BIGINT AUTO_INCREMENT PRIMARY KEY, counter INT,"
                        + " worker INT, tz VARCHAR(10)) ENGINE=InnoDB");
        Queue<String> errors = new ConcurrentLinkedQueue<>();
        AtomicLong committed = new AtomicLong();
        AtomicLong[] perCounter = new AtomicLong[COUNTERS + 1];
        for (int i = 0; i <= COUNTERS; i++) {
            perCounter[i] = new AtomicLong();
        }
        AtomicLong evictions = new AtomicLong();
        try (HikariDataSource ds = hikari(driver, "sluice-mux-churn-" + driver);
             OpenConnectionsWatcher watcher = new OpenConnectionsWatcher()) {
            ExecutorService threads = Executors.newFixedThreadPool(WORKERS + 1);
            AtomicBoolean stop = new AtomicBoolean();
            try {
                List<Future<?>> futures = new ArrayList<>();
                futures.add(threads.submit(() -> {
                    while (!stop.get()) {
                        ds.getHikariPoolMXBean().softEvictConnections();
                        evictions.incrementAndGet();
                        Thread.sleep(200);
                    }
                    return null;
                }));
                for (int w = 0; w < WORKERS; w++) {
                    int worker = w;
                    futures.add(threads.submit(() -> {
                        while (!stop.get()) {
                            int counter = 1 + ThreadLocalRandom.current().nextInt(COUNTERS);
                            String tz = worker % 2 == 0 ? "+01:00" : "-05:00";
                            try (Connection c = ds.getConnection()) {
                                try (Statement s = c.createStatement()) {
                                    s.execute("SET time_zone = '" + tz + "'"); // session state left for the next borrower
                                }
                                c.setAutoCommit(false);
                                try (PreparedStatement up = c.prepareStatement(
                                        "UPDATE " + table + " SET n = n + 1 WHERE id = ?");
                                     PreparedStatement log = c.prepareStatement(
                                             "INSERT INTO " + table + "_log (counter, worker, tz) VALUES (?, ?, @@time_zone)")) {
                                    up.setInt(1, counter);
                                    assertThat(up.executeUpdate()).isEqualTo(1);
                                    log.setInt(1, counter);
                                    log.setInt(2, worker);
                                    assertThat(log.executeUpdate()).isEqualTo(1);
                                }
                                c.commit();
                                committed.incrementAndGet();
                                perCounter[counter].incrementAndGet();
                                c.setAutoCommit(true);
                                try (Statement s = c.createStatement();
                                     ResultSet rs = s.executeQuery("SELECT @@time_zone, @@autocommit")) {
                                    rs.next();
                                    if (!tz.equals(rs.getString(1)) || rs.getInt(2) != 1) {
                                        errors.add("worker " + worker + " saw time_zone " + rs.getString(1)
                                                + " autocommit " + rs.getInt(2) + " (expected: " + tz + ", 1)");
                                    }
                                }
                            } catch (SQLException | AssertionError e) {
                                errors.add("worker " + worker + ": " + e);
                            }
                        }
                        return null;
                    }));
                }
                Thread.sleep(CHURN_MILLIS);
                stop.set(true);
                for (Future<?> f : futures) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                stop.set(true);
                threads.shutdownNow();
            }
            watcher.close();
            assertThat(errors).as("errors seen by the application").isEmpty();
            assertThat(evictions.get()).isGreaterThan(10);
            assertThat(committed.get()).isGreaterThan(50);
            assertThat(watcher.maxOpen.get()).as("server connections open at most").isBetween(1, MAX_POOL);
        }
        try (Connection root = TestMariaDb.get().rootConnection(); Statement s = root.createStatement()) {
            for (int counter = 1; counter <= COUNTERS; counter++) {
                try (ResultSet rs = s.executeQuery("SELECT n, (SELECT COUNT(*) FROM `" + db + "`." + table
                        + "_log WHERE counter = " + counter + ") FROM `" + db + "`." + table + " WHERE id = " + counter)) {
                    rs.next();
                    assertThat(rs.getLong(1)).as("counter %d", counter).isEqualTo(perCounter[counter].get());
                    assertThat(rs.getLong(2)).as("log rows of counter %d", counter).isEqualTo(perCounter[counter].get());
                }
            }
            try (ResultSet rs = s.executeQuery("SELECT COUNT(*), SUM(tz = IF(worker % 2 = 0, '+01:00', '-05:00'))"
                    + " FROM `" + db + "`." + table + "_log")) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(committed.get());
                assertThat(rs.getLong(2)).as("rows logged with the worker's own time_zone").isEqualTo(committed.get());
            }
        }
    }

    @Test
    void newClientConnectionsDoNotLogInToTheServerWhileIdleConnectionsExist() throws Exception {
        try (HikariDataSource ds = hikari(JdbcDriver.MARIADB, "sluice-mux-logins");
             OpenConnectionsWatcher watcher = new OpenConnectionsWatcher()) {
            // Warm-up: MAX_POOL transactions open at once, so that every event loop's share of the pool is opened
            // (each loop lends only its own connections; client connections are spread over the loops).
            List<Connection> held = new ArrayList<>();
            for (int i = 0; i < MAX_POOL; i++) {
                Connection c = ds.getConnection();
                c.setAutoCommit(false);
                try (Statement s = c.createStatement()) {
                    s.execute("SELECT 1");
                }
                held.add(c);
            }
            for (Connection c : held) {
                c.commit();
                c.setAutoCommit(true);
                c.close();
            }
            // `SELECT 1` touches no table, so the server may not report a transaction and Sluice may give a
            // connection back before the next one is taken: the transactions above need not have held MAX_POOL server
            // connections at once, nor opened one on every loop. One unmeasured churn round does: every loop then has
            // lent a connection to a session of its own.
            churnRound(ds);
            long createdAfterWarmUp = pool().createdConnections();
            long sluiceSessionsBefore = proxy.sluice().clientConnections();
            for (int round = 0; round < 10; round++) {
                churnRound(ds);
            }
            watcher.close();
            assertThat(sluiceSessionsBefore).isPositive();
            assertThat(pool().idleConnections()).as("idle server connections at the end").isPositive();
            assertThat(pool().createdConnections()).as("server logins after warm-up, while idle ones existed")
                    .isEqualTo(createdAfterWarmUp);
            assertThat(watcher.maxOpen.get()).isBetween(1, MAX_POOL);
        }
    }

    /** Every client connection is replaced, then each of the new ones runs one query, one after the other. */
    private static void churnRound(HikariDataSource ds) throws Exception {
        ds.getHikariPoolMXBean().softEvictConnections();
        for (int i = 0; i < HIKARI_POOL; i++) {
            try (Connection c = ds.getConnection(); Statement s = c.createStatement();
                 ResultSet rs = s.executeQuery("SELECT DATABASE()")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo(proxy.db());
            }
        }
        Thread.sleep(100);
    }
}
