package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.api.SessionSnapshot;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The attack run of issue #38, one test per leak it found: two proxy users share the ONE server connection of a
 * transaction-pooling data source ({@code maxPoolSize: 1}), so whatever the first leaves on it, the second meets.
 * User A makes some state in a way whose text hides it (EXECUTE IMMEDIATE, a procedure, a function) or that no
 * tracker reports; A must keep the connection while the state can exist (its {@code pinnedBy} says why), and after A
 * leaves, user B, on the same connection reset, must see none of it. Each test failed before issue #38.
 */
@Tag("server")
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class SessionIsolationTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.transactionPooling().maxPoolSize(1)
                    .workerThreads(1).connectionTimeoutMillis(5_000))
            .sluiceOnly("transaction pooling is a proxy feature")
            .database("sluice_iso",
                    "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(20))",
                    "CREATE TABLE other (id INT PRIMARY KEY)",
                    "INSERT INTO t (v) VALUES ('a'), ('b')",
                    "INSERT INTO other VALUES (1)",
                    "CREATE SEQUENCE sq",
                    "CREATE DATABASE IF NOT EXISTS sluice_iso",
                    "CREATE FUNCTION IF NOT EXISTS sluice_iso.lock_f(k VARCHAR(64)) RETURNS INT RETURN GET_LOCK(k, 0)",
                    "CREATE PROCEDURE take_lock(IN k VARCHAR(64)) BEGIN DO GET_LOCK(k, 0); END",
                    "CREATE FUNCTION lock_f(k VARCHAR(64)) RETURNS INT RETURN GET_LOCK(k, 0)",
                    "CREATE PROCEDURE make_temp() BEGIN CREATE TEMPORARY TABLE tmp_p (a INT); END",
                    "CREATE PROCEDURE add_row() BEGIN INSERT INTO t (v) VALUES ('p'); END",
                    // MyISAM: no transaction of its own to use up what the trigger sets for the next one
                    "CREATE TABLE next_ro (n INT) ENGINE=MyISAM",
                    "CREATE TRIGGER next_ro_t BEFORE INSERT ON next_ro FOR EACH ROW SET TRANSACTION READ ONLY");

    private static final String ROLE = "sluice_iso_role";

    @BeforeAll
    static void role() throws SQLException {
        // The role must be one the backend account may take: granted to the account Sluice logs in as.
        try (Connection c = proxy.mariaDb().connect(JdbcDriver.MARIADB, null, "");
             Statement s = c.createStatement()) {
            s.execute("CREATE ROLE IF NOT EXISTS " + ROLE);
            s.execute("GRANT SELECT ON mysql.* TO " + ROLE);
            s.execute("GRANT " + ROLE + " TO CURRENT_USER");
        }
    }

    private static Connection userA(JdbcDriver driver) throws SQLException {
        return driver.connect(proxy.jdbcUrl(driver, proxy.db(), ""), proxy.user(), proxy.password());
    }

    private static Connection userB(JdbcDriver driver) throws SQLException {
        return driver.connect(proxy.jdbcUrl(driver, proxy.db(), ""), proxy.user2(), proxy.password2());
    }

    static String one(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).as(sql).isTrue();
            return rs.getString(1);
        }
    }

    static void run(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.execute(sql);
        }
    }

    private static List<String> warnings(Connection c) throws SQLException {
        List<String> found = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW WARNINGS")) {
            while (rs.next()) {
                found.add(rs.getInt(2) + " " + rs.getString(3));
            }
        }
        return found;
    }

    /** Why Sluice keeps the session of {@code c} on its connection, or {@code null}. */
    private static String pinnedBy(Connection c) throws SQLException {
        return pinnedBy(proxy.sluice(), c);
    }

    /** Why {@code sluice} keeps the session of {@code c} on its connection, or {@code null}. */
    static String pinnedBy(io.sluice.Sluice sluice, Connection c) throws SQLException {
        long id = DifferentialHarness.greetingId(c);
        for (SessionSnapshot s : sluice.sessions()) {
            if (s.id() == (int) id) {
                return s.pinnedBy();
            }
        }
        throw new AssertionError("no session " + id);
    }

    /** A leaves after making its state; B then uses the one server connection, reset. */
    private static Connection afterALeft(JdbcDriver driver, Connection a) throws Exception {
        a.close();
        Connection b = userB(driver);
        // the reset runs once A's session has ended: B's first statement waits for it, never sees the state
        return b;
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aTemporaryTableMadeThroughExecuteImmediateStaysWithItsSession(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "EXECUTE IMMEDIATE 'CREATE TEMPORARY TABLE tmp_x (a INT)'");
            assertThat(pinnedBy(a)).isEqualTo("stored_code");
            run(a, "INSERT INTO tmp_x VALUES (7)");
            assertThat(one(a, "SELECT a FROM tmp_x")).isEqualTo("7");
            try (Connection b = afterALeft(driver, a)) {
                assertThatThrownBy(() -> one(b, "SELECT a FROM tmp_x")).isInstanceOf(SQLException.class)
                        .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1146));
            }
        }
    }

    /**
     * MariaDB Connector/J pipelines a server-side prepare and its execute (the execute naming "the statement just
     * prepared", id -1) only when the server offers MARIADB_CLIENT_STMT_BULK_OPERATIONS, which Sluice does not
     * (decision 062). Through Sluice it therefore prepares alone, the server refuses to prepare a {@code PREPARE}
     * (1295), and the driver runs it as text, which leaves those diagnostics: what SHOW WARNINGS shows is the server's
     * answer to the session's own commands, as on a direct connection of a client that does not pipeline. (Issue #38,
     * seed 108: a direct client that pipelines shows the execute's 1243 instead; decision 196.)
     */
    @Test
    void theDiagnosticsOfARefusedPrepareAreTheServersAnswerToTheSessionsOwnCommands() throws Exception {
        String params = "useServerPrepStmts=true";
        List<String> direct;
        try (Connection c = proxy.mariaDb().connect(JdbcDriver.MARIADB, proxy.db(), params + "&disablePipeline=true")) {
            prepareAPrepare(c);
            direct = warnings(c);
        }
        assertThat(direct).containsExactly("1295 This command is not supported in the prepared statement protocol yet");
        try (Connection a = JdbcDriver.MARIADB.connect(proxy.jdbcUrl(JdbcDriver.MARIADB, proxy.db(), params),
                proxy.user(), proxy.password())) {
            prepareAPrepare(a);
            assertThat(pinnedBy(a)).isEqualTo("sql_prepare"); // the text PREPARE the driver fell back to
            assertThat(warnings(a)).isEqualTo(direct);
        }
    }

    private static void prepareAPrepare(Connection c) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("PREPARE iso_ps FROM 'SELECT 42'")) {
            ps.execute();
        }
    }

    /**
     * A trigger's {@code SET TRANSACTION} (next transaction only) shows nowhere in the INSERT's text and no tracker but
     * the transaction characteristics reports it, not even as a state change. Before decision 197 A was not pinned:
     * its characteristic stayed on the pooled connection for whoever came next (issue #38, seeds 81, 287, 588 of
     * TransactionPoolingIsolationTest), and A's own next statement, on another connection, ran without it.
     */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aNextTransactionCharacteristicSetByATriggerStaysWithItsSession(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "INSERT INTO next_ro (n) VALUES (1)");
            // the tracker's report (decision 197), or, once Sluice has read the trigger, its table (decision 200)
            assertThat(pinnedBy(a)).isIn("set_transaction", "stored_code");
            try (Connection b = afterALeft(driver, a)) {
                String v = "'after ro " + driver.ordinal() + "'";
                run(b, "INSERT INTO t (v) VALUES (" + v + ")"); // 1792 if A's READ ONLY had been left for B
                assertThat(one(b, "SELECT COUNT(*) FROM t WHERE v = " + v)).isEqualTo("1");
                assertThat(pinnedBy(b)).isNull();
            }
        }
        try (Connection a = userA(driver)) {
            run(a, "INSERT INTO next_ro (n) VALUES (2)");
            assertThatThrownBy(() -> run(a, "INSERT INTO t (v) VALUES ('ro')")).isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1792));
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aTemporaryTableMadeInAProcedureStaysWithItsSession(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "CALL make_temp()");
            assertThat(pinnedBy(a)).isEqualTo("stored_code");
            run(a, "INSERT INTO tmp_p VALUES (8)");
            assertThat(one(a, "SELECT a FROM tmp_p")).isEqualTo("8");
            try (Connection b = afterALeft(driver, a)) {
                assertThatThrownBy(() -> one(b, "SELECT a FROM tmp_p")).isInstanceOf(SQLException.class)
                        .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1146));
            }
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void lockTablesThroughExecuteImmediatePinsAndIsGoneForTheNextUser(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "EXECUTE IMMEDIATE 'LOCK TABLES t READ'");
            assertThat(pinnedBy(a)).isEqualTo("stored_code");
            assertThat(Integer.parseInt(one(a, "SELECT COUNT(*) FROM t"))).isPositive();
            try (Connection b = afterALeft(driver, a)) {
                // with the lock left on the connection: 1100 "Table 'other' was not locked with LOCK TABLES"
                assertThat(Integer.parseInt(one(b, "SELECT COUNT(*) FROM other"))).isPositive();
                run(b, "UPDATE t SET v = v WHERE id = 1");
            }
        }
    }

    /** GET_LOCK in a procedure, a stored function and EXECUTE IMMEDIATE: the text shows no lock function. */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void namedLocksTakenByHiddenCodePinAndAreReleasedForTheNextUser(JdbcDriver driver) throws Exception {
        String[] ways = {"CALL take_lock('iso_k1')", "SELECT lock_f('iso_k2')",
            "EXECUTE IMMEDIATE 'DO GET_LOCK(''iso_k3'', 0)'", "SELECT `lock_f`('iso_k4')", "DO sluice_iso.lock_f('iso_k5')"};
        for (int i = 0; i < ways.length; i++) {
            String key = ways[i].replaceAll(".*(iso_k[0-9]).*", "$1");
            try (Connection a = userA(driver)) {
                run(a, ways[i]);
                assertThat(pinnedBy(a)).as(ways[i]).isNotNull();
                assertThat(one(a, "SELECT IS_USED_LOCK('" + key + "') = CONNECTION_ID()")).as(ways[i]).isEqualTo("1");
                try (Connection b = afterALeft(driver, a)) {
                    // left on the connection, B could release A's lock (1); released by the reset: NULL
                    assertThat(one(b, "SELECT RELEASE_LOCK('" + key + "')")).as(ways[i]).isNull();
                }
            }
        }
    }

    /**
     * Decision 202: a server-side prepared GET_LOCK counts its lock at each execute: the first (which MariaDB
     * Connector/J sends right behind the prepare, before its answer) and each later one, which the drivers send alone
     * for the statement they keep prepared. Counted once, at the prepare, the lock taken again after its release was
     * not counted: the session was let go with it, and the next user's RELEASE_LOCK released it (1).
     */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aNamedLockTakenAgainByTheSamePreparedStatementPins(JdbcDriver driver) throws Exception {
        String prepared = "useServerPrepStmts=true&cachePrepStmts=true";
        try (Connection a = driver.connect(proxy.jdbcUrl(driver, proxy.db(), prepared), proxy.user(), proxy.password())) {
            for (int i = 0; i < 2; i++) {
                try (PreparedStatement p = a.prepareStatement("SELECT GET_LOCK('iso_kp', 0)");
                        ResultSet rs = p.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1)).isEqualTo("1");
                }
                assertThat(pinnedBy(a)).as("execute %d", i + 1).isEqualTo("named_lock");
                if (i == 0) {
                    run(a, "DO RELEASE_LOCK('iso_kp')");
                    assertThat(pinnedBy(a)).as("released").isNull();
                }
            }
            assertThat(one(a, "SELECT IS_USED_LOCK('iso_kp') = CONNECTION_ID()")).isEqualTo("1");
            try (Connection b = afterALeft(driver, a)) {
                assertThat(one(b, "SELECT RELEASE_LOCK('iso_kp')")).isNull(); // released by the reset
            }
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aRoleIsGoneForTheNextUser(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "SET ROLE " + ROLE);
            assertThat(pinnedBy(a)).isEqualTo("role");
            assertThat(one(a, "SELECT CURRENT_ROLE()")).isEqualTo(ROLE);
            try (Connection b = afterALeft(driver, a)) {
                assertThat(one(b, "SELECT CURRENT_ROLE()")).isNull();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void warningsAreReadByTheirSessionOnlyAndNeverByTheNextUser(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "SELECT CAST('12abc' AS UNSIGNED)");
            assertThat(pinnedBy(a)).isEqualTo("diagnostics");
            assertThat(warnings(a)).singleElement().asString().startsWith("1292");
            run(a, "SELECT COUNT(*) FROM t");
            assertThat(pinnedBy(a)).isNull();
            run(a, "SELECT CAST('13abc' AS UNSIGNED)"); // A leaves with warnings on its connection
            try (Connection b = afterALeft(driver, a)) {
                assertThat(warnings(b)).isEmpty();
                assertThat(one(b, "SELECT @@warning_count")).isEqualTo("0");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void anErrorIsNeverReadByAnotherUser(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            assertThatThrownBy(() -> run(a, "INSERT INTO other VALUES (1)")).isInstanceOf(SQLException.class);
            assertThat(pinnedBy(a)).isEqualTo("diagnostics");
            run(a, "SELECT COUNT(*) FROM t"); // the error is A's until its next statement on a table, then gone
            assertThat(pinnedBy(a)).isNull();
            assertThatThrownBy(() -> run(a, "INSERT INTO other VALUES (1)")).isInstanceOf(SQLException.class);
            try (Connection b = afterALeft(driver, a); Statement s = b.createStatement();
                 ResultSet rs = s.executeQuery("SHOW ERRORS")) {
                assertThat(rs.next()).as("A's duplicate-key error, with the key's value").isFalse();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void insertIdIsNeverCarriedToAnotherUsersInsert(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "SET insert_id = 777000");
            assertThat(pinnedBy(a)).isEqualTo("statement_variable");
            try (Connection b = afterALeft(driver, a)) {
                run(b, "INSERT INTO t (v) VALUES ('b')");
                assertThat(Long.parseLong(one(b, "SELECT MAX(id) FROM t"))).isLessThan(777000);
            }
        }
    }

    /** The differential test's F8: a procedure's INSERT sets LAST_INSERT_ID(), which its OK packet does not show. */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void lastInsertIdAfterAProcedureIsTheSessionsOwn(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "CALL add_row()");
            String max = one(a, "SELECT MAX(id) FROM t");
            assertThat(one(a, "SELECT LAST_INSERT_ID()")).isEqualTo(max);
        }
    }

    /**
     * A cursor pins its session until its statement closes; COM_STMT_CLOSE has no response, so nothing after it gave
     * the connection back: the session held it, unpinned, until its next command, and the other user waited out the
     * pool's timeout (ERR 1040). Found with {@code PreparedPreviousValuesTest}'s cursor.
     */
    @Test
    void aClosedCursorGivesItsConnectionBackAtOnce() throws Exception {
        JdbcDriver driver = JdbcDriver.MYSQL;
        String cursors = "useServerPrepStmts=true&useCursorFetch=true";
        try (Connection a = driver.connect(proxy.jdbcUrl(driver, proxy.db(), cursors), proxy.user(), proxy.password());
                Connection b = userB(driver)) {
            try (PreparedStatement p = a.prepareStatement("SELECT id FROM t ORDER BY id")) {
                p.setFetchSize(1);
                try (ResultSet rs = p.executeQuery()) {
                    assertThat(rs.next()).isTrue();
                    assertThat(pinnedBy(a)).isEqualTo("cursor");
                }
            }
            // COM_STMT_CLOSE has no response: the driver's close returns before Sluice has read it
            long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
            while (pinnedBy(a) != null && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(pinnedBy(a)).as("once Sluice has read the close").isNull();
            assertThat(one(b, "SELECT 'served'")).as("the other user, on the one connection").isEqualTo("served");
        }
    }

    /** F16: ROW_COUNT() is the previous statement's of the session, not the connection's last user's. */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void rowCountIsTheSessionsOwnOnAnyConnection(JdbcDriver driver) throws Exception {
        int k = 700 + 10 * driver.ordinal();
        try (Connection a = userA(driver); Connection b = userB(driver)) {
            run(a, "INSERT INTO other VALUES (" + k + "), (" + (k + 1) + "), (" + (k + 2) + ")");
            run(b, "INSERT INTO other VALUES (" + (k + 3) + ")"); // the one server connection's last statement
            assertThat(one(a, "SELECT ROW_COUNT()")).as("A's own INSERT").isEqualTo("3");
            assertThat(one(b, "SELECT ROW_COUNT() AS n")).as("B's own, after A's SELECT").isEqualTo("1");
            run(a, "SELECT id FROM t LIMIT 1");
            run(b, "DELETE FROM other WHERE id >= " + k + " AND id < " + (k + 10));
            assertThat(one(a, "SELECT ROW_COUNT()")).as("after a SELECT").isEqualTo("-1");
        }
    }

    /** The differential test's connection parameters: multi-statements on, statements prepared on the server. */
    private static final String PARAMS = "allowMultiQueries=true&useServerPrepStmts=true";

    /**
     * A session that has run nothing yet reads the ROW_COUNT() and LAST_INSERT_ID() its driver's connect statements
     * left, as directly: never the values of the session that used its server connection before (the differential
     * test met both, after a session of the same user had inserted on the one server connection and gone).
     */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aFreshSessionReadsItsOwnPreviousStatementValues(JdbcDriver driver) throws Exception {
        String directRowCount;
        String directInsertId;
        try (Connection c = proxy.mariaDb().connect(driver, proxy.db(), PARAMS)) {
            directRowCount = one(c, "SELECT ROW_COUNT()");
        }
        try (Connection c = proxy.mariaDb().connect(driver, proxy.db(), PARAMS)) {
            directInsertId = one(c, "SELECT LAST_INSERT_ID()");
        }
        int k = 900 + 10 * driver.ordinal();
        for (int round = 0; round < 2; round++) {
            try (Connection old = driver.connect(proxy.jdbcUrl(driver, proxy.db(), PARAMS), proxy.user(),
                    proxy.password())) {
                run(old, "CREATE TABLE IF NOT EXISTS ai_fresh (id INT AUTO_INCREMENT PRIMARY KEY, n INT)");
                run(old, "INSERT INTO ai_fresh (n) VALUES (" + (k + round) + ")");
                assertThat(one(old, "SELECT LAST_INSERT_ID()")).isNotEqualTo("0");
            }
            try (Connection fresh = driver.connect(proxy.jdbcUrl(driver, proxy.db(), PARAMS), proxy.user(),
                    proxy.password())) {
                assertThat(one(fresh, round == 0 ? "SELECT LAST_INSERT_ID()" : "SELECT ROW_COUNT()"))
                        .as("a fresh session, as directly").isEqualTo(round == 0 ? directInsertId : directRowCount);
            }
        }
    }

    /** FOUND_ROWS() after a plain SELECT is the rows that SELECT of the session's returned. */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void foundRowsIsTheSessionsOwnOnAnyConnection(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver); Connection b = userB(driver)) {
            run(a, "SELECT id FROM t ORDER BY id LIMIT 2");
            run(b, "SELECT id FROM t ORDER BY id LIMIT 1"); // the one server connection's last SELECT
            assertThat(one(a, "SELECT FOUND_ROWS()")).isEqualTo("2");
            assertThat(one(b, "SELECT FOUND_ROWS() AS n")).as("after A's SELECT FOUND_ROWS()").isEqualTo("1");
        }
    }

    /** F1: SET TRANSACTION behind another statement of a multi-statement, and a DO that does not use it up. */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void theNextTransactionsCharacteristicsStayWithTheirSession(JdbcDriver driver) throws Exception {
        try (Connection a = driver.connect(proxy.jdbcUrl(driver, proxy.db(), "allowMultiQueries=true"),
                proxy.user(), proxy.password())) {
            run(a, "DO 0; SET TRANSACTION READ ONLY");
            assertThat(pinnedBy(a)).isEqualTo("set_transaction");
            run(a, "DO 1");
            assertThat(pinnedBy(a)).as("DO starts no transaction").isEqualTo("set_transaction");
            try (Connection b = afterALeft(driver, a)) {
                // ERR 1792 with A's READ ONLY left on the connection
                run(b, "INSERT INTO other VALUES (" + (600 + driver.ordinal()) + ")");
            }
        }
    }

    /** F2: FOUND_ROWS() after SQL_CALC_FOUND_ROWS, with a statement between that is not a SELECT. */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void foundRowsSurvivesAStatementThatIsNotASelect(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "SELECT SQL_CALC_FOUND_ROWS id FROM t ORDER BY id LIMIT 1");
            run(a, "SET @@session.time_zone = '+01:00'");
            assertThat(one(a, "SELECT FOUND_ROWS()")).isEqualTo(one(a, "SELECT COUNT(*) FROM t"));
        }
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void anOpenHandlerIsGoneForTheNextUser(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "HANDLER t OPEN AS h_iso");
            assertThat(pinnedBy(a)).isEqualTo("handler");
            try (Statement s = a.createStatement()) {
                assertThat(s.execute("HANDLER h_iso READ FIRST")).isTrue();
                assertThat(s.getResultSet().next()).isTrue();
            }
            try (Connection b = afterALeft(driver, a)) {
                assertThatThrownBy(() -> run(b, "HANDLER h_iso READ FIRST")).isInstanceOf(SQLException.class)
                        .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1109));
            }
        }
    }

    /**
     * A sequence's NEXTVAL: LASTVAL and PREVIOUS VALUE FOR read the value it returned on the server connection,
     * which no tracker reports. Before, the session went back to the pool after it and read NULL, or another
     * session's value, on the connection it got next; it now keeps its connection (pinned by {@code sequence}), and
     * the next user meets none of it.
     */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aSequencesLastValueStaysWithItsSession(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            String next = one(a, "SELECT NEXTVAL(sq)");
            assertThat(pinnedBy(a)).isEqualTo("sequence");
            run(a, "SELECT NEXT VALUE FOR sq");
            next = one(a, "SELECT LASTVAL(sq)");
            assertThat(one(a, "SELECT PREVIOUS VALUE FOR sq")).isEqualTo(next);
            try (Connection b = afterALeft(driver, a)) {
                assertThat(one(b, "SELECT LASTVAL(sq)")).isNull();
            }
        }
    }

    /**
     * MariaDB's BACKUP STAGE and BACKUP LOCK are held by the connection, and COM_RESET_CONNECTION does not release
     * them (checked on 10.11). Before, the connection went back to the pool holding the stage: nobody could start
     * another backup, and its later stages block every commit. The session now keeps its connection
     * ({@code backup_lock}), which is closed when it ends.
     */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void aBackupStageIsNeverLeftOnAPooledConnection(JdbcDriver driver) throws Exception {
        try (Connection a = userA(driver)) {
            run(a, "BACKUP STAGE START");
            assertThat(pinnedBy(a)).isEqualTo("backup_lock");
            run(a, "BACKUP STAGE END");
        }
        try (Connection a = userA(driver)) {
            run(a, "BACKUP STAGE START"); // left without an END
        }
        try (Connection direct = proxy.mariaDb().connect(JdbcDriver.MARIADB, null, "");
                Statement s = direct.createStatement()) {
            s.execute("SET SESSION lock_wait_timeout = 5");
            s.execute("BACKUP STAGE START"); // waited for the first session's server connection to close
            s.execute("BACKUP STAGE END");
        }
    }
}
