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
                mariaDb.executeIn(db, "CREATE TABLE `attentes_é` (n INT) ENGINE=MyISAM");
                mariaDb.executeIn(db, "CREATE TABLE `attentes_è` (n INT) ENGINE=MyISAM");
            });

    @AfterAll
    static void dropSchema() {
        TestMariaDb.get().dropDatabase(db);
    }

    private static Connection user(boolean a) throws SQLException {
        return user(a, JdbcDriver.MARIADB, "");
    }

    private static Connection user(boolean a, JdbcDriver driver, String params) throws SQLException {
        return a ? driver.connect(proxy.jdbcUrl(driver, db, params), proxy.user(), proxy.password())
                : driver.connect(proxy.jdbcUrl(driver, db, params), proxy.user2(), proxy.password2());
    }

    @Test
    void aStatementSentWhileATriggerIsBeingMadeCountsItsCode() throws Exception {
        checkWindow("waits", "_w", user(true));
    }

    /**
     * As above, the trigger prepared on the server (the driver sends COM_STMT_PREPARE, then the execute) and its
     * table's name not ASCII: Sluice keeps a prepared statement's text byte for byte, and read the names it defines
     * from those bytes as ISO-8859-1, so {@code attentes_é} counted as {@code attentes_Ã©} and the INSERT into it
     * pooled as any.
     */
    @Test
    void aPreparedDefinitionCountsANameThatIsNotAscii() throws Exception {
        checkWindow("`attentes_é`", "_p", user(true, JdbcDriver.MARIADB, "useServerPrepStmts=true"));
    }

    /**
     * As above, the trigger's statement a COM_QUERY in latin1 (MySQL Connector/J's {@code characterEncoding}), the
     * INSERT in UTF-8: Sluice read the definition's text as UTF-8, so {@code attentes_è}'s one byte made no name it
     * knew, and the INSERT pooled as any.
     */
    @Test
    void aDefinitionInLatin1CountsItsNameForEveryCharacterSet() throws Exception {
        checkWindow("`attentes_è`", "_l", user(true, JdbcDriver.MYSQL, "characterEncoding=ISO-8859-1"));
    }

    private static void checkWindow(String table, String suffix, Connection a) throws Exception {
        String lock = db + suffix;
        String trigger = "t" + suffix;
        try (Connection root = TestMariaDb.get().connect(JdbcDriver.MARIADB, db, "");
                a; Connection b = user(false)) {
            SessionIsolationTest.run(root, "LOCK TABLES " + table + " WRITE");
            CompletableFuture<Void> create = CompletableFuture.runAsync(() -> prepared(a, "CREATE TRIGGER " + trigger
                    + " BEFORE INSERT ON " + table + " FOR EACH ROW DO GET_LOCK('" + lock + "', 0)"));
            awaitWaiting(root, "CREATE TRIGGER " + trigger);
            CompletableFuture<Void> insert = CompletableFuture.runAsync(() -> run(b,
                    "INSERT INTO " + table + " (n) VALUES (1)"));
            awaitWaiting(root, "INSERT INTO " + table);
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

    /** Runs {@code sql} as a prepared statement: server-side when the connection was opened so. */
    private static void prepared(Connection c, String sql) {
        try (java.sql.PreparedStatement ps = c.prepareStatement(sql)) {
            ps.execute();
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
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
