package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Decision 200: state that a table's trigger or a view's function leaves on the session, though the statement's text
 * is a plain INSERT or SELECT. Two proxy users share the ONE server connection of a transaction-pooling data source:
 * user A runs the statement and must keep the connection ({@code stored_code}); after A leaves, user B on the same
 * connection must find none of A's state. Before the decision each of these left A's named lock or sequence value on
 * the pooled connection for B (docs/isolation.md's former known limits).
 *
 * <p>The schema is made before Sluice starts, as an application's is, so that the first reading (at start) finds
 * it; the last two tests make triggers while Sluice runs, through it and on the server directly.
 */
@Tag("server")
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class HiddenCodeIsolationTest {

    private static String db;

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.transactionPooling().maxPoolSize(1)
                    .workerThreads(1).connectionTimeoutMillis(5_000))
            .sluiceOnly("transaction pooling is a proxy feature")
            .beforeStart(HiddenCodeIsolationTest::schema);

    private static void schema(TestMariaDb mariaDb) {
        db = mariaDb.createDatabase("sluice_hidden");
        mariaDb.executeIn(db,
                "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, n INT) ENGINE=MyISAM",
                "CREATE TABLE lock_trg (n INT) ENGINE=MyISAM",
                "CREATE TRIGGER lock_trg_t BEFORE INSERT ON lock_trg FOR EACH ROW DO GET_LOCK(CONCAT('" + db
                        + "_trg', NEW.n), 0)",
                "CREATE SEQUENCE sq NOCACHE",
                "CREATE TABLE seq_trg (n INT, s BIGINT) ENGINE=MyISAM",
                "CREATE TRIGGER seq_trg_t BEFORE INSERT ON seq_trg FOR EACH ROW SET NEW.s = NEXTVAL(sq)",
                "CREATE FUNCTION lock_f(k VARCHAR(64)) RETURNS INT NOT DETERMINISTIC RETURN GET_LOCK(k, 0)",
                "CREATE VIEW lock_v AS SELECT lock_f(CONCAT(DATABASE(), '_view')) AS got",
                // an audit trigger: it leaves nothing, so its table's statements pool as any
                "CREATE TABLE audited (n INT, by_user VARCHAR(64)) ENGINE=MyISAM",
                "CREATE TRIGGER audited_t BEFORE INSERT ON audited FOR EACH ROW SET NEW.by_user = CURRENT_USER()");
    }

    @AfterAll
    static void dropSchema() {
        TestMariaDb.get().dropDatabase(db);
    }

    private static Connection userA(JdbcDriver driver) throws SQLException {
        return driver.connect(proxy.jdbcUrl(driver, db, ""), proxy.user(), proxy.password());
    }

    private static Connection userB(JdbcDriver driver) throws SQLException {
        return driver.connect(proxy.jdbcUrl(driver, db, ""), proxy.user2(), proxy.password2());
    }

    private static String one(Connection c, String sql) throws SQLException {
        return SessionIsolationTest.one(c, sql);
    }

    private static void run(Connection c, String sql) throws SQLException {
        SessionIsolationTest.run(c, sql);
    }

    private static String pinnedBy(Connection c) throws SQLException {
        return SessionIsolationTest.pinnedBy(proxy.sluice(), c);
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aNamedLockATriggerTakesStaysWithItsSession(JdbcDriver driver) throws Exception {
        String lock = "'" + db + "_trg" + driver.ordinal() + "'";
        try (Connection a = userA(driver)) {
            run(a, "INSERT INTO lock_trg (n) VALUES (" + driver.ordinal() + ")");
            assertThat(pinnedBy(a)).isEqualTo("stored_code");
            assertThat(one(a, "SELECT IS_USED_LOCK(" + lock + ") = CONNECTION_ID()")).isEqualTo("1");
        }
        try (Connection b = userB(driver)) {
            // before: the lock stayed on the pooled connection, B's own (IS_USED_LOCK = B's connection id)
            assertThat(one(b, "SELECT IS_USED_LOCK(" + lock + ")")).isNull();
            assertThat(one(b, "SELECT GET_LOCK(" + lock + ", 0)")).isEqualTo("1");
            run(b, "DO RELEASE_LOCK(" + lock + ")");
            assertThat(pinnedBy(b)).isNull();
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aNamedLockAViewsFunctionTakesStaysWithItsSession(JdbcDriver driver) throws Exception {
        String lock = "'" + db + "_view'";
        try (Connection a = userA(driver)) {
            assertThat(one(a, "SELECT got FROM lock_v")).isEqualTo("1");
            assertThat(pinnedBy(a)).isEqualTo("stored_code");
        }
        try (Connection b = userB(driver)) {
            assertThat(one(b, "SELECT IS_USED_LOCK(" + lock + ")")).isNull();
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aSequenceValueATriggerDrawsStaysWithItsSession(JdbcDriver driver) throws Exception {
        String drawn;
        try (Connection a = userA(driver)) {
            run(a, "INSERT INTO seq_trg (n) VALUES (1)");
            assertThat(pinnedBy(a)).isEqualTo("stored_code");
            drawn = one(a, "SELECT LASTVAL(sq)");
            assertThat(drawn).isNotNull();
        }
        try (Connection b = userB(driver)) {
            assertThat(one(b, "SELECT LASTVAL(sq)")).as("A drew %s", drawn).isNull();
        }
    }

    /** What leaves nothing pools as any statement: an audit trigger, a table without triggers. */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aTriggerThatLeavesNothingDoesNotKeepTheSession(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "INSERT INTO audited (n) VALUES (1)");
            run(a, "INSERT INTO t (n) VALUES (1)");
            assertThat(pinnedBy(a)).isNull();
        }
    }

    /**
     * A trigger made through Sluice: its session keeps the connection (its next statement may come before the new
     * definition is read), and the others' statements count it at once, not at the next scheduled reading (10 s).
     * Dropped, its table's statements pool again.
     */
    @Test
    void aTriggerMadeThroughSluiceCountsAtOnceAndNoLongerOnceDropped() throws Exception {
        try (Connection a = userA(JdbcDriver.MARIADB)) {
            run(a, "CREATE TABLE made (n INT) ENGINE=MyISAM");
            run(a, "CREATE TRIGGER made_t BEFORE INSERT ON made FOR EACH ROW DO GET_LOCK('" + db + "_made', 0)");
            // the first reason: the body's GET_LOCK is read as the text's own
            assertThat(pinnedBy(a)).isIn("stored_code", "named_lock");
        }
        assertThat(pinWithin(3_000, "INSERT INTO made (n) VALUES (1)", "stored_code")).isEqualTo("stored_code");
        try (Connection a = userA(JdbcDriver.MARIADB)) {
            run(a, "DROP TRIGGER made_t");
        }
        // Until the reading the DROP starts has ended, the table still counts (erring towards keeping the session):
        // a session that comes sooner keeps its connection. Once read, it pools again.
        assertThat(pinWithin(3_000, "INSERT INTO made (n) VALUES (2)", null)).isNull();
    }

    /** A trigger made on the server directly (a migration run without Sluice) counts from the next reading. */
    @Test
    void aTriggerMadeOnTheServerCountsFromTheNextReading() throws Exception {
        TestMariaDb.get().executeIn(db, "CREATE TABLE direct (n INT) ENGINE=MyISAM",
                "CREATE TRIGGER direct_t BEFORE INSERT ON direct FOR EACH ROW DO GET_LOCK('" + db + "_direct', 0)");
        assertThat(pinWithin(15_000, "INSERT INTO direct (n) VALUES (1)", "stored_code")).isEqualTo("stored_code");
    }

    /**
     * Runs {@code sql} in new sessions of user B until its session's pin is {@code expected} ({@code null}: none) or
     * the time is up; the last pin seen.
     */
    private static String pinWithin(long millis, String sql, String expected) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        String pin;
        do {
            try (Connection b = userB(JdbcDriver.MARIADB)) {
                run(b, sql);
                pin = pinnedBy(b);
            }
            if (java.util.Objects.equals(expected, pin)) {
                return pin;
            }
            Thread.sleep(100);
        } while (System.nanoTime() < deadline);
        return pin;
    }
}
