package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Decision 203: a trigger made through Sluice counts for every session from the moment its statement is sent, not
 * from the reading of the catalogue after it ran. Here user A's {@code CREATE TRIGGER} waits for a table lock held on
 * the server directly, and user B's {@code INSERT} into the table is sent meanwhile, on the other server connection,
 * and waits behind it: it runs once the trigger exists, takes the trigger's named lock, and must keep its connection.
 * Before the decision it was read before the trigger existed, pooled as any INSERT, and its connection went back to
 * the pool holding the lock (the next session's {@code IS_USED_LOCK} saw it).
 */
@Tag("server")
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HiddenCodeDefinitionWindowTest {

    private static String db;

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.transactionPooling().maxPoolSize(2)
                    .workerThreads(1).connectionTimeoutMillis(20_000))
            .sluiceOnly("transaction pooling is a proxy feature")
            .beforeStart(mariaDb -> {
                db = mariaDb.createDatabase("sluice_hidden_window");
                mariaDb.executeIn(db, "CREATE TABLE waits (n INT) ENGINE=MyISAM");
            });

    @AfterAll
    static void dropSchema() {
        TestMariaDb.get().dropDatabase(db);
    }

    private static Connection user(boolean a) throws SQLException {
        JdbcDriver driver = JdbcDriver.MARIADB;
        return a ? driver.connect(proxy.jdbcUrl(driver, db, ""), proxy.user(), proxy.password())
                : driver.connect(proxy.jdbcUrl(driver, db, ""), proxy.user2(), proxy.password2());
    }

    @Test
    void aStatementSentWhileATriggerIsBeingMadeCountsItsCode() throws Exception {
        String lock = db + "_w";
        try (Connection root = TestMariaDb.get().connect(JdbcDriver.MARIADB, db, "");
                Connection a = user(true); Connection b = user(false)) {
            SessionIsolationTest.run(root, "LOCK TABLES waits WRITE");
            CompletableFuture<Void> create = CompletableFuture.runAsync(() -> run(a,
                    "CREATE TRIGGER waits_t BEFORE INSERT ON waits FOR EACH ROW DO GET_LOCK('" + lock + "', 0)"));
            awaitWaiting(root, "CREATE TRIGGER waits_t");
            CompletableFuture<Void> insert = CompletableFuture.runAsync(() -> run(b,
                    "INSERT INTO waits (n) VALUES (1)"));
            awaitWaiting(root, "INSERT INTO waits");
            SessionIsolationTest.run(root, "UNLOCK TABLES");
            create.get(20, TimeUnit.SECONDS);
            insert.get(20, TimeUnit.SECONDS);
            assertThat(SessionIsolationTest.pinnedBy(proxy.sluice(), b)).isEqualTo("stored_code");
            assertThat(SessionIsolationTest.one(b, "SELECT IS_USED_LOCK('" + lock + "') = CONNECTION_ID()"))
                    .as("B took the trigger's lock").isEqualTo("1");
        }
        // Both sessions ended: each connection was reset before it went back, and the lock with it
        try (Connection c = user(false)) {
            assertThat(SessionIsolationTest.one(c, "SELECT IS_USED_LOCK('" + lock + "')")).isNull();
        }
    }

    private static void run(Connection c, String sql) {
        try {
            SessionIsolationTest.run(c, sql);
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** Until a statement starting with {@code prefix} waits for a table's lock on the server. */
    private static void awaitWaiting(Connection root, String prefix) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try (Statement s = root.createStatement(); ResultSet rs = s.executeQuery(
                    "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '" + prefix
                            + "%' AND STATE LIKE 'Waiting for table%'")) {
                rs.next();
                if (rs.getInt(1) > 0) {
                    return;
                }
            }
            assertThat(System.nanoTime()).as("%s never waited for the table lock", prefix).isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
