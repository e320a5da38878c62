package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.PoolingConfig;
import io.sluice.testing.JdbcDriver;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * State that cannot move to another server connection pins a session in {@code pooling: TRANSACTION} (issue #8): user
 * variables, temporary tables, LOCK TABLES, GET_LOCK, XA, SQL_CALC_FOUND_ROWS; transactions with savepoints keep their
 * connection anyway; LAST_INSERT_ID() is answered from the session's own last OK packet. Each script runs direct and
 * through Sluice with results compared, and through Sluice the session's {@code pinnedBy} must name the reason while it
 * holds and clear where the state clears, and a pinned session must stay on one server connection.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class PinningTest {

    private static final String UNIQUE = "sluice_mux_" + ProcessHandle.current().pid();

    @RegisterExtension
    static final DifferentialHarness harness = DifferentialHarness.of("sluice_mux_pin", PoolingConfig.transaction());

    private static DifferentialHarness.Run compare(JdbcDriver driver, Supplier<DifferentialHarness.Script> script) throws Exception {
        return harness.compare(driver, DifferentialHarness.params(driver, ""), script);
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void userVariablesMoveWithTheSessionWithTheirTypes(JdbcDriver driver) throws Exception {
        // MariaDB: Sluice reads them back before the connection goes and sets them on the next one, so they pin
        // nothing; their types and character sets come along (a decimal stays a decimal, a latin1 string latin1).
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .sql("SELECT 'before'",
                        "SET @a = 5",
                        "SELECT @a",
                        "SELECT @b := 7, @a",
                        "SELECT @a + @b, @c",
                        "SET @c = 'héllo', @d = 1.50, @e = 2.5e0, @f = _latin1 'caf\u00e9' COLLATE latin1_bin, "
                                + "@g = X'00ff', @h = 18446744073709551615, @i = NULL",
                        "SELECT @a, @b, @c, @d, @e, @f, HEX(@g), @h, @i",
                        "SELECT COLLATION(@c), COLLATION(@f), COLLATION(@g), @d / 3, @e / 3, @h - 1",
                        "SET @a = NULL",
                        "SELECT @a")
                // The read-back of user variables waits while a statement's warnings are there to be read (no probe
                // after this step: its SELECT would clear them).
                .stepWithoutProbe("SET @w = CAST('12abc' AS UNSIGNED)", (c, t) -> {
                    try (java.sql.Statement s = c.createStatement()) {
                        t.execute(s, "SET @w = CAST('12abc' AS UNSIGNED)");
                    }
                })
                .sql("SHOW WARNINGS", "SELECT @w"));
        run.assertSameResults().assertSwitchedConnections();
        // The warnings keep the session on their connection until its next statement but SHOW WARNINGS (issue #38;
        // the probe after SHOW WARNINGS is such a statement); nothing else pins.
        assertThat(run.pinAfter("SET @w = CAST('12abc' AS UNSIGNED)")).isEqualTo("diagnostics");
        assertThat(run.pins().subList(0, run.index("SET @w = CAST('12abc' AS UNSIGNED)"))).containsOnlyNulls();
        assertThat(run.pinAfter("SELECT @w")).isNull();
        assertThat(run.proxied().toString()).contains("[[12, null]]").contains("1292");
        assertThat(run.connectionsBetween("SET @a = 5", "SELECT @a")).hasSizeGreaterThanOrEqualTo(2);
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void userVariablesAssignedInSelectMoveToo(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS uv", "CREATE TABLE uv (id INT PRIMARY KEY)",
                        "INSERT INTO uv VALUES (1), (2), (3)")
                .sql("SELECT 1", "SELECT 2",
                        "SELECT @n := COUNT(*) FROM uv",
                        "SELECT @n * 10",
                        "SELECT @rank := @rank + 1 FROM uv, (SELECT @rank := 0) r ORDER BY id",
                        "SELECT @rank, @n"));
        assertThat(run.proxied().toString()).contains("[[30]]", "[[3.0, 3]]");
        run.assertSameResults().assertNeverPinned();
        assertThat(run.connectionsBetween("SELECT @n := COUNT(*) FROM uv", "SELECT @rank, @n"))
                .hasSizeGreaterThanOrEqualTo(2);
    }

    /**
     * A FLUSH that takes table locks holds them on its server connection until UNLOCK TABLES: the session stays on it
     * meanwhile (issue #27: FLUSH TABLES WITH READ LOCK left on an idle pooled connection blocked every write).
     * FOR EXPORT locks one table only, so the shared test server is not blocked.
     */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void flushForExportPinsUntilUnlockTables(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS fe", "CREATE TABLE fe (id INT PRIMARY KEY) ENGINE=InnoDB",
                        "INSERT INTO fe VALUES (1)")
                .sql("SELECT 'before'", "FLUSH TABLES fe FOR EXPORT", "SELECT COUNT(*) FROM fe", "UNLOCK TABLES",
                        "SELECT 'after'"));
        assertThat(run.pinAfter("FLUSH TABLES fe FOR EXPORT")).isEqualTo("table_lock");
        assertThat(run.pinAfter("SELECT COUNT(*) FROM fe")).isEqualTo("table_lock");
        assertThat(run.connectionsBetween("FLUSH TABLES fe FOR EXPORT", "UNLOCK TABLES")).hasSize(1);
        assertThat(run.pinAfter("UNLOCK TABLES")).isNull();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void temporaryTables(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .sql("SELECT 'free'", "SELECT 'free again'",
                        "CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY, v VARCHAR(10))",
                        "INSERT INTO tmp VALUES (1, 'a'), (2, 'b')",
                        "SELECT * FROM tmp ORDER BY id",
                        "UPDATE tmp SET v = 'c' WHERE id = 2",
                        "SELECT * FROM tmp ORDER BY id",
                        "DROP TEMPORARY TABLE tmp",
                        "SELECT * FROM tmp")); // 1146 both ways
        assertThat(run.proxied().toString()).contains("[[1, a], [2, c]]", "code=1146");
        assertThat(run.pinAfter("SELECT 'free again'")).isNull();
        assertThat(run.pinAfter("CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY, v VARCHAR(10))"))
                .isEqualTo("temporary_table");
        assertThat(run.pinAfter("SELECT * FROM tmp ORDER BY id")).isEqualTo("temporary_table");
        assertThat(run.connectionsBetween("CREATE TEMPORARY TABLE tmp (id INT PRIMARY KEY, v VARCHAR(10))",
                "DROP TEMPORARY TABLE tmp")).hasSize(1);
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void lockTablesUntilUnlockTables(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS lt", "CREATE TABLE lt (id INT PRIMARY KEY) ENGINE=InnoDB")
                .sql("LOCK TABLES lt WRITE",
                        "INSERT INTO lt VALUES (1)",
                        "SELECT COUNT(*) FROM lt",
                        "INSERT INTO lt VALUES (2)",
                        "SELECT * FROM sm_not_locked", // 1100: table was not locked with LOCK TABLES
                        "UNLOCK TABLES",
                        "SELECT COUNT(*) FROM lt",
                        "SELECT 'free'",
                        "SELECT 'free again'"));
        assertThat(run.proxied().toString()).contains("code=1100", "[[2]]");
        assertThat(run.pinAfter("LOCK TABLES lt WRITE")).isEqualTo("table_lock");
        assertThat(run.pinAfter("INSERT INTO lt VALUES (2)")).isEqualTo("table_lock");
        // Up to the last step under the lock: the probe after UNLOCK TABLES may run elsewhere, since the connection
        // the error left its diagnostics on is reset before it goes back (decision 135).
        assertThat(run.connectionsBetween("LOCK TABLES lt WRITE", "SELECT * FROM sm_not_locked")).hasSize(1);
        assertThat(run.pinAfter("UNLOCK TABLES")).isNull();
        assertThat(run.pinAfter("SELECT 'free again'")).isNull();
        assertThat(run.connectionsBetween("UNLOCK TABLES", "SELECT 'free again'")).hasSizeGreaterThanOrEqualTo(2);
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void getLockUntilEveryLockIsReleased(JdbcDriver driver) throws Exception {
        String a = "'" + UNIQUE + "_a'";
        String b = "'" + UNIQUE + "_b'";
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .sql("SELECT IS_FREE_LOCK(" + a + ")",
                        "SELECT GET_LOCK(" + a + ", 5)",
                        "SELECT IS_USED_LOCK(" + a + ") = CONNECTION_ID()",
                        "SELECT GET_LOCK(" + a + ", 5)", // the same lock again: counted twice
                        "SELECT RELEASE_LOCK(" + a + ")",
                        "SELECT IS_USED_LOCK(" + a + ") = CONNECTION_ID(), 'held once'",
                        "SELECT RELEASE_LOCK(" + a + ")",
                        "SELECT IS_FREE_LOCK(" + a + "), 'released'",
                        "SELECT 'free'",
                        "SELECT GET_LOCK(" + a + ", 5), GET_LOCK(" + b + ", 5)",
                        "SELECT IS_USED_LOCK(" + b + ") = CONNECTION_ID()",
                        "SELECT RELEASE_ALL_LOCKS()",
                        "SELECT IS_FREE_LOCK(" + a + "), IS_FREE_LOCK(" + b + ")",
                        "SELECT 'free at last'"));
        assertThat(run.proxied().toString()).contains("held once", "[[1, released]]", "[[1, 1]]");
        assertThat(run.pinAfter("SELECT IS_FREE_LOCK(" + a + ")")).isNull();
        assertThat(run.pinAfter("SELECT GET_LOCK(" + a + ", 5)")).isEqualTo("named_lock");
        assertThat(run.pinAfter("SELECT RELEASE_LOCK(" + a + ")")).as("after the first of two RELEASE_LOCK")
                .isEqualTo("named_lock"); // the step name occurs twice: index() finds the first
        assertThat(run.pins().get(run.stepNames().lastIndexOf("SELECT RELEASE_LOCK(" + a + ")") - 1))
                .as("after the first RELEASE_LOCK the lock is still held").isEqualTo("named_lock");
        assertThat(run.pins().get(run.stepNames().lastIndexOf("SELECT RELEASE_LOCK(" + a + ")")))
                .as("after the second RELEASE_LOCK").isNull();
        assertThat(run.pinAfter("SELECT GET_LOCK(" + a + ", 5), GET_LOCK(" + b + ", 5)")).isEqualTo("named_lock");
        assertThat(run.pinAfter("SELECT RELEASE_ALL_LOCKS()")).isNull();
        assertThat(run.pinAfter("SELECT 'free at last'")).isNull();
        assertThat(run.connectionsBetween(run.index("SELECT GET_LOCK(" + a + ", 5)"),
                run.stepNames().lastIndexOf("SELECT RELEASE_LOCK(" + a + ")"))).hasSize(1);
        run.assertSwitchedConnections();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void savepointsInsideATransaction(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS sp", "CREATE TABLE sp (id INT PRIMARY KEY) ENGINE=InnoDB")
                .sql("START TRANSACTION",
                        "INSERT INTO sp VALUES (1)",
                        "SAVEPOINT s1",
                        "INSERT INTO sp VALUES (2)",
                        "SAVEPOINT s2",
                        "INSERT INTO sp VALUES (3)",
                        "ROLLBACK TO SAVEPOINT s2",
                        "SELECT id FROM sp ORDER BY id",
                        "ROLLBACK TO s1",
                        "RELEASE SAVEPOINT s1",
                        "ROLLBACK TO s1", // 1305: the savepoint is gone
                        "COMMIT",
                        "SELECT id FROM sp ORDER BY id",
                        "SELECT 'free'")
                .step("jdbc savepoints", (c, t) -> {
                    c.setAutoCommit(false);
                    try (java.sql.Statement s = c.createStatement()) {
                        s.execute("INSERT INTO sp VALUES (10)");
                        java.sql.Savepoint save = c.setSavepoint("jdbc_sp");
                        s.execute("INSERT INTO sp VALUES (11)");
                        c.rollback(save);
                        c.commit();
                    }
                    c.setAutoCommit(true);
                })
                .sql("SELECT id FROM sp ORDER BY id"));
        assertThat(run.proxied().toString()).contains("[[1], [2]]", "code=1305", "[[1], [10]]");
        // Up to the last step of the transaction (the probe after COMMIT may run elsewhere: decision 135's reset of a
        // connection an error left its diagnostics on).
        assertThat(run.connectionsBetween(run.index("START TRANSACTION"), run.index("COMMIT") - 1)).hasSize(1);
        assertThat(run.states().get(run.index("ROLLBACK TO s1"))).isEqualTo("in_transaction");
        assertThat(run.pinAfter("COMMIT")).isNull();
        assertThat(run.states().get(run.index("SELECT 'free'"))).isEqualTo("idle");
        run.assertSwitchedConnections();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void xaTransactionFromStartToCommit(JdbcDriver driver) throws Exception {
        String xid = "'" + UNIQUE + "_xa'";
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS xat", "CREATE TABLE xat (id INT PRIMARY KEY) ENGINE=InnoDB")
                .sql("SELECT 'free'",
                        "XA START " + xid,
                        "INSERT INTO xat VALUES (1)",
                        "SELECT COUNT(*) FROM xat",
                        "XA END " + xid,
                        "XA PREPARE " + xid,
                        "XA COMMIT " + xid,
                        "SELECT COUNT(*) FROM xat",
                        "XA START " + xid,
                        "INSERT INTO xat VALUES (2)",
                        "XA END " + xid,
                        "XA ROLLBACK " + xid,
                        "XA START " + xid,
                        "INSERT INTO xat VALUES (3)",
                        "XA END " + xid,
                        "XA COMMIT " + xid + " ONE PHASE",
                        "SELECT id FROM xat ORDER BY id",
                        "SELECT 'free again'"));
        assertThat(run.proxied().toString()).contains("[[1], [3]]");
        assertThat(run.pinAfter("SELECT 'free'")).isNull();
        assertThat(run.pinAfter("XA START " + xid)).isEqualTo("xa");
        assertThat(run.pinAfter("XA END " + xid)).isEqualTo("xa");
        assertThat(run.pinAfter("XA PREPARE " + xid)).isEqualTo("xa");
        assertThat(run.pinAfter("XA COMMIT " + xid)).isNull();
        assertThat(run.pinAfter("XA ROLLBACK " + xid)).isNull();
        assertThat(run.pinAfter("XA COMMIT " + xid + " ONE PHASE")).isNull();
        assertThat(run.pinAfter("SELECT 'free again'")).isNull();
        assertThat(run.connectionsBetween("XA START " + xid, "XA COMMIT " + xid)).hasSize(1);
        run.assertSwitchedConnections();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void sqlCalcFoundRowsThenFoundRows(JdbcDriver driver) throws Exception {
        String calc = "SELECT SQL_CALC_FOUND_ROWS id FROM fr ORDER BY id LIMIT 2";
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS fr", "CREATE TABLE fr (id INT PRIMARY KEY)",
                        "INSERT INTO fr SELECT seq FROM seq_1_to_10")
                .sql("SELECT 'free'")
                .stepWithoutProbe(calc, (c, t) -> {
                    try (java.sql.Statement s = c.createStatement()) {
                        t.execute(s, calc);
                    }
                })
                .sql("SELECT FOUND_ROWS()")
                .stepWithoutProbe("calc again with a where clause", (c, t) -> {
                    try (java.sql.Statement s = c.createStatement()) {
                        t.execute(s, "SELECT SQL_CALC_FOUND_ROWS id FROM fr WHERE id > 6 LIMIT 1");
                    }
                })
                .sql("SELECT FOUND_ROWS() AS total", "SELECT 'free again'"));
        assertThat(run.proxied().toString()).contains("[[10]]", "[[4]]");
        assertThat(run.pinAfter("SELECT 'free'")).isNull();
        assertThat(run.pinAfter(calc)).isEqualTo("found_rows");
        assertThat(run.pinAfter("calc again with a where clause")).isEqualTo("found_rows");
        assertThat(run.pinAfter("SELECT 'free again'")).isNull();
        run.assertSwitchedConnections();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void lastInsertIdFromTheSessionsOwnInserts(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS li",
                        "CREATE TABLE li (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10)) AUTO_INCREMENT = 41")
                .sql("SELECT LAST_INSERT_ID()",
                        "INSERT INTO li (v) VALUES ('a')",
                        "SELECT LAST_INSERT_ID()",
                        "select last_insert_id()",
                        "INSERT INTO li (v) VALUES ('b'), ('c'), ('d')", // the first id of the three
                        "SELECT LAST_INSERT_ID()",
                        // Not here: an INSERT with an explicit id (100). Its OK packet says 100 while LAST_INSERT_ID()
                        // keeps 42; outside a transaction Sluice answers 100 (documented in configuration.md).
                        "UPDATE li SET v = 'u' WHERE id = 41", // insert id 0 in the OK packet
                        "SELECT LAST_INSERT_ID()",
                        "INSERT INTO li (v) VALUES ('e')",
                        "SELECT LAST_INSERT_ID()",
                        "SELECT LAST_INSERT_ID(500)",
                        "SELECT LAST_INSERT_ID()",
                        "INSERT INTO li (id, v) VALUES (41, 'dup')", // 1062
                        "SELECT LAST_INSERT_ID()"));
        assertThat(run.proxied().toString()).contains("[[41]]", "[[42]]", "[[500]]",
                "code=1062");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    /**
     * LAST_INSERT_ID() in any other form than exactly {@code SELECT LAST_INSERT_ID()} reads the value of whichever
     * server connection the statement lands on (a documented limitation of the design note). Directly it is the
     * session's own value.
     */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void lastInsertIdInsideALargerSelect(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS li2",
                        "CREATE TABLE li2 (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(10)) AUTO_INCREMENT = 71")
                .sql("INSERT INTO li2 (v) VALUES ('a')",
                        "SELECT LAST_INSERT_ID() AS last, 'with more columns'",
                        "SELECT v FROM li2 WHERE id = LAST_INSERT_ID()"));
        assertThat(run.proxied().toString()).contains("[[71, with more columns]]", "[[a]]");
    }

    private static double pins(String reason) {
        return io.sluice.testing.PrometheusText.parse(harness.proxy().metrics().scrape())
                .value("sluice_session_pins_total", "reason", reason);
    }

    @org.junit.jupiter.api.Test
    void pinEventsAreCountedPerReason() throws Exception {
        double userVariables = pins("user_variable");
        double tables = pins("temporary_table");
        double locks = pins("table_lock");
        try (java.sql.Connection c = harness.proxy().connect(JdbcDriver.MARIADB, harness.db(), "");
             java.sql.Statement s = c.createStatement()) {
            s.execute("SELECT 1");
            assertThat(pins("temporary_table")).as("no pin yet").isEqualTo(tables);
            s.execute("SET @counted = 1");
            s.execute("CREATE TEMPORARY TABLE counted_tmp (id INT)");
            s.execute("LOCK TABLES counted_tmp WRITE");
            assertThat(harness.snapshot(DifferentialHarness.greetingId(c)).pinnedBy()).isEqualTo("temporary_table");
            s.execute("UNLOCK TABLES");
        }
        assertThat(pins("temporary_table")).as("sluice_session_pins_total{reason=temporary_table}")
                .isEqualTo(tables + 1);
        assertThat(pins("table_lock")).as("counted although the session was pinned already").isEqualTo(locks + 1);
        assertThat(pins("user_variable")).as("MariaDB: user variables move with the session, never pin")
                .isEqualTo(userVariables);
    }
}
