package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Many sessions at once, and a connection pool (HikariCP) in front of the proxy reusing sessions. */
@Tag("server")
class ConcurrencyTest {

    private static final int SESSIONS = 200;

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.maxPoolSize(SESSIONS + 10))
            .beforeStart(mariaDb -> mariaDb.ensureMaxConnections(600)) // 200 backend sessions next to everyone else's
            .database("sluice_it_concurrency", "CREATE TABLE kv (k INT PRIMARY KEY, v BIGINT)",
                    "INSERT INTO kv SELECT seq, seq * seq FROM seq_1_to_1000");

    @Test
    void twoHundredConcurrentSessions() throws Exception {
        CyclicBarrier allOpen = new CyclicBarrier(SESSIONS);
        ExecutorService pool = Executors.newFixedThreadPool(SESSIONS);
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (int i = 0; i < SESSIONS; i++) {
                int session = i;
                JdbcDriver driver = i % 2 == 0 ? JdbcDriver.MARIADB : JdbcDriver.MYSQL;
                results.add(pool.submit(() -> {
                    try (Connection c = proxy.connect(driver, proxy.db(), "")) {
                        allOpen.await(60, TimeUnit.SECONDS); // all 200 sessions are open at the same time
                        long checked = 0;
                        try (Statement s = c.createStatement()) {
                            s.execute("SET @session = " + session);
                        }
                        try (PreparedStatement ps = c.prepareStatement("SELECT v, @session FROM kv WHERE k = ?")) {
                            for (int q = 1; q <= 5; q++) {
                                int k = session * 5 + q;
                                ps.setInt(1, k);
                                try (ResultSet rs = ps.executeQuery()) {
                                    assertThat(rs.next()).isTrue();
                                    assertThat(rs.getLong(1)).isEqualTo((long) k * k);
                                    assertThat(rs.getLong(2)).isEqualTo(session); // no session sees another's state
                                    checked++;
                                }
                            }
                        }
                        return checked;
                    }
                }));
            }
            long total = 0;
            for (Future<Long> f : results) {
                total += f.get(120, TimeUnit.SECONDS);
            }
            assertThat(total).isEqualTo(SESSIONS * 5L);
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void hikariPoolInFrontOfTheProxy(JdbcDriver driver) throws Exception {
        HikariConfig config = new HikariConfig();
        config.setDriverClassName(driver.className());
        config.setJdbcUrl(proxy.jdbcUrl(driver, proxy.db(), ""));
        config.setUsername(proxy.user());
        config.setPassword(proxy.password());
        config.setMaximumPoolSize(4);
        config.setPoolName("sluice-it-" + driver);
        try (HikariDataSource ds = new HikariDataSource(config)) {
            ExecutorService workers = Executors.newFixedThreadPool(8);
            try {
                List<Future<Long>> sums = new ArrayList<>();
                for (int w = 0; w < 8; w++) {
                    int worker = w;
                    sums.add(workers.submit(() -> {
                        long sum = 0;
                        for (int i = 0; i < 25; i++) {
                            try (Connection c = ds.getConnection()) {
                                // Leave state behind on purpose: Hikari resets autocommit and rolls back on return.
                                c.setAutoCommit(i % 2 == 0);
                                try (PreparedStatement ps = c.prepareStatement("SELECT SUM(v) FROM kv WHERE k <= ?")) {
                                    ps.setInt(1, worker * 100 + i + 1);
                                    try (ResultSet rs = ps.executeQuery()) {
                                        rs.next();
                                        sum += rs.getLong(1);
                                    }
                                }
                                if (!c.getAutoCommit()) {
                                    c.commit();
                                }
                            }
                        }
                        return sum;
                    }));
                }
                long total = 0;
                for (Future<Long> f : sums) {
                    total += f.get(120, TimeUnit.SECONDS);
                }
                long expected = 0;
                for (int w = 0; w < 8; w++) {
                    for (int i = 0; i < 25; i++) {
                        long n = w * 100L + i + 1;
                        expected += n * (n + 1) * (2 * n + 1) / 6;
                    }
                }
                assertThat(total).isEqualTo(expected);
                assertThat(ds.getHikariPoolMXBean().getTotalConnections()).isBetween(1, 4);
            } finally {
                workers.shutdownNow();
            }
        }
    }
}
