package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.PoolingConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Session state that moves with a session in {@code pooling: TRANSACTION} (issue #8): every tracked variable, set by
 * the client, must hold on whichever server connection the session's next statement lands, although the disturbing
 * sessions of {@link DifferentialHarness} leave other values on those connections. Each script runs directly against MariaDB
 * and through Sluice, and the client must observe the same both ways; none of this state may pin the session.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class SessionStateTest {

    @RegisterExtension
    static final DifferentialHarness harness = DifferentialHarness.of("sluice_mux_state", PoolingConfig.transaction());

    private static DifferentialHarness.Run compare(JdbcDriver driver, java.util.function.Supplier<DifferentialHarness.Script> script)
            throws Exception {
        return harness.compare(driver, DifferentialHarness.params(driver, ""), script);
    }

    /** Rows of {@code sql} as another client (root, direct) sees them now. */
    private static DifferentialHarness.Action outsideCount(String label, String table) {
        return (c, t) -> {
            try (Connection root = TestMariaDb.get().rootConnection(); Statement s = root.createStatement();
                 ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM `" + harness.db() + "`." + table)) {
                rs.next();
                t.add(label, rs.getLong(1));
            }
        };
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void sqlMode(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS sm", "CREATE TABLE sm (id INT PRIMARY KEY, v VARCHAR(4))")
                .sql("SET SESSION sql_mode = 'STRICT_TRANS_TABLES,PIPES_AS_CONCAT,ERROR_FOR_DIVISION_BY_ZERO'",
                        "SELECT @@SESSION.sql_mode",
                        "SELECT 'a' || 'b'",
                        "INSERT INTO sm VALUES (1, 'too long for v')",
                        "SELECT 'still strict', @@sql_mode",
                        "SET sql_mode = ''",
                        "INSERT INTO sm VALUES (2, 'too long for v')",
                        "SELECT 'a' || 'b', @@sql_mode",
                        "SELECT id, v FROM sm ORDER BY id",
                        "SET @@session.sql_mode = 'ANSI_QUOTES'",
                        "SELECT \"sm\".\"id\" FROM \"sm\"",
                        "SET sql_mode = DEFAULT",
                        "SELECT @@sql_mode = @@GLOBAL.sql_mode"));
        assertThat(run.proxied().toString()).contains("code=1406", "[[ab]]").contains("[[2, too ]]");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    /**
     * {@code SET @@name = ...} without a scope: MariaDB 10.11's tracker does not report it (where it reports
     * {@code SET name} and {@code SET @@SESSION.name}), so Sluice gives it its explicit, same scope; the variables
     * follow the session like any others (issue #27: the MariaDB test suite's {@code commit.test} set
     * {@code @@autocommit} and {@code @@completion_type} this way).
     */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void unscopedAssignmentsFollowTheSessionToo(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .sql("SET @@sql_mode = 'ANSI_QUOTES', @@time_zone = '+03:00'",
                        "SELECT @@sql_mode, @@time_zone",
                        "SET @@completion_type = 1",
                        "SELECT @@completion_type, @@time_zone",
                        "SET @@global.max_connections = @@global.max_connections",
                        "SET @@max_connections = 10"));
        run.assertSwitchedConnections().assertNeverPinned();
        assertThat(run.proxied().toString()).contains("[[ANSI_QUOTES, +03:00]]", "[[CHAIN, +03:00]]", "code=1229");
    }

    /**
     * Sluice keeps the server reporting every variable when a client narrows {@code session_track_system_variables},
     * but the client's own value is still assigned first, so what the server refuses is refused (issue #27: through
     * Sluice these used to succeed, and the GLOBAL one set the global list).
     */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void trackerSettingsTheServerRefusesAreRefusedThroughSluiceToo(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .sql("SET SESSION session_track_system_variables = NULL",
                        "SET @@GLOBAL.session_track_system_variables = NULL",
                        "SET session_track_system_variables = 'autocommit,time_zone'",
                        "SET time_zone = '+03:00'",
                        "SET sql_mode = 'ANSI_QUOTES'",
                        "SELECT @@time_zone, @@sql_mode"));
        assertThat(run.proxied().toString()).contains("code=1231").contains("[[+03:00, ANSI_QUOTES]]");
        run.assertNeverPinned();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void timeZone(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS tz", "CREATE TABLE tz (id INT PRIMARY KEY, ts TIMESTAMP NULL)")
                .sql("SET time_zone = '+03:00'",
                        "SELECT @@time_zone, CAST(FROM_UNIXTIME(0) AS CHAR)",
                        "INSERT INTO tz VALUES (1, '2024-06-01 12:00:00')",
                        "SELECT UNIX_TIMESTAMP(ts), CAST(ts AS CHAR) FROM tz",
                        "SET SESSION time_zone = '-07:00'",
                        "SELECT UNIX_TIMESTAMP(ts), CAST(ts AS CHAR), @@session.time_zone FROM tz",
                        "SET time_zone = 'SYSTEM'",
                        "SELECT @@time_zone, UNIX_TIMESTAMP(ts) FROM tz"));
        assertThat(run.proxied().toString()).contains("1717232400", "2024-06-01 02:00:00", "-07:00");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    /**
     * A set clock moves with the session, and so does its return to the running clock. MariaDB reports
     * {@code timestamp} for each assignment, but after {@code SET timestamp = DEFAULT} with the statement's start
     * (the old value) and after {@code = 0} with the time it ran: taken as the session's, it set the old value again
     * on the session's next connection (issue #38, the isolation long run's seed 762).
     */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void timestampSetAndBackToTheClock(JdbcDriver driver) throws Exception {
        String clock = "SELECT IF(@@timestamp < 1500000000, @@timestamp, 'now'),"
                + " IF(UNIX_TIMESTAMP() < 1500000000, YEAR(NOW()), 'now')";
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .sql("SET timestamp = 1000000004",
                        clock,
                        "SET timestamp = DEFAULT",
                        clock,
                        "SET SESSION timestamp = 1000000000 + 5",
                        clock,
                        "SET timestamp = 0",
                        clock,
                        "SET @@session.timestamp = 1000000006.5",
                        clock,
                        "SET timestamp = DEFAULT",
                        "SET timestamp = DEFAULT",
                        clock));
        assertThat(run.proxied().toString()).contains("[[1000000004.000000, 2001]]", "[[1000000005.000000, 2001]]",
                "[[1000000006.500000, 2001]]", "[[now, now]]");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void setNamesAndCollation(JdbcDriver driver) throws Exception {
        String vars = "SELECT @@character_set_client, @@character_set_connection, @@character_set_results,"
                + " @@collation_connection";
        // MariaDB Connector/J 3.5.11 (decision 064; 3.5.6 did not) closes its connection when told that the client
        // or results character set left UTF-8: with it, only the connection's own character set goes to latin1.
        String latin1 = driver == JdbcDriver.MARIADB
                ? "SET character_set_connection = latin1, collation_connection = latin1_swedish_ci"
                : "SET NAMES latin1";
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .sql(vars,
                        "SELECT 'héllo ✓', HEX('é'), 'a' = 'A'",
                        "SET NAMES utf8mb4 COLLATE utf8mb4_bin",
                        vars,
                        "SELECT 'a' = 'A', COLLATION('x'), CHARSET('x')",
                        latin1,
                        vars,
                        "SELECT HEX('é'), COLLATION('x'), CHARSET('x'), 'a' = 'A'",
                        "SET character_set_results = NULL",
                        vars,
                        "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci",
                        vars,
                        "SELECT 'ß' = 'ss', 'héllo ✓', COLLATION('x')",
                        "SET collation_connection = utf8mb4_general_ci",
                        vars));
        assertThat(run.proxied().toString()).contains("utf8mb4_bin", "latin1_swedish_ci", "utf8mb4_unicode_ci",
                "héllo ✓");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void autocommitOffImplicitTransactionsCommitAndRollback(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS ac", "CREATE TABLE ac (id INT PRIMARY KEY) ENGINE=InnoDB")
                .sql("SET autocommit = 0", "SELECT @@autocommit", "INSERT INTO ac VALUES (1)")
                .step("outside after uncommitted insert", outsideCount("outside", "ac"))
                .sql("SELECT COUNT(*) FROM ac", "ROLLBACK", "SELECT COUNT(*) FROM ac")
                .sql("SELECT @@autocommit", "INSERT INTO ac VALUES (2)")
                .step("outside before commit", outsideCount("outside", "ac"))
                .sql("COMMIT")
                .step("outside after commit", outsideCount("outside", "ac"))
                .sql("SELECT @@autocommit")
                .step("jdbc autocommit on", (c, t) -> c.setAutoCommit(true))
                .sql("INSERT INTO ac VALUES (3)")
                .step("outside after autocommitted insert", outsideCount("outside", "ac"))
                .step("jdbc autocommit off", (c, t) -> c.setAutoCommit(false))
                .sql("INSERT INTO ac VALUES (4)")
                .step("outside during jdbc transaction", outsideCount("outside", "ac"))
                .step("jdbc rollback", (c, t) -> c.rollback())
                .sql("INSERT INTO ac VALUES (5)")
                .step("jdbc commit", (c, t) -> c.commit())
                .step("outside after jdbc commit", outsideCount("outside", "ac"))
                .step("jdbc autocommit on again", (c, t) -> c.setAutoCommit(true))
                .sql("SELECT id FROM ac ORDER BY id", "SELECT @@autocommit"));
        assertThat(run.proxied().toString()).contains("[[2], [3], [5]]");
        run.assertSwitchedConnections().assertNeverPinned();
        // An implicit transaction keeps its connection until COMMIT / ROLLBACK.
        assertThat(run.connectionsBetween("INSERT INTO ac VALUES (2)", "outside before commit")).hasSize(1);
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void isolationLevel(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS iso", "CREATE TABLE iso (id INT PRIMARY KEY) ENGINE=InnoDB",
                        "INSERT INTO iso VALUES (1)")
                .sql("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED", "SELECT @@tx_isolation",
                        "START TRANSACTION", "SELECT COUNT(*) FROM iso")
                .step("outside inserts", (c, t) -> TestMariaDb.get().execute(
                        "INSERT INTO `" + harness.db() + "`.iso VALUES (2)"))
                .sql("SELECT COUNT(*) FROM iso", "COMMIT") // READ COMMITTED sees the outside row: 2
                .sql("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ", "SELECT @@tx_isolation",
                        "START TRANSACTION", "SELECT COUNT(*) FROM iso")
                .step("outside inserts again", (c, t) -> TestMariaDb.get().execute(
                        "INSERT INTO `" + harness.db() + "`.iso VALUES (3)"))
                .sql("SELECT COUNT(*) FROM iso", "COMMIT", "SELECT COUNT(*) FROM iso") // 2 inside, 3 after
                .step("jdbc serializable", (c, t) -> c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE))
                .sql("SELECT @@tx_isolation")
                .step("jdbc isolation", (c, t) -> t.add("isolation", c.getTransactionIsolation()))
                .sql("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED", "SELECT @@session.tx_isolation"));
        assertThat(run.proxied().toString()).contains("READ-COMMITTED", "REPEATABLE-READ", "SERIALIZABLE",
                "READ-UNCOMMITTED");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void readOnly(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS ro", "CREATE TABLE ro (id INT PRIMARY KEY) ENGINE=InnoDB")
                .sql("SET SESSION TRANSACTION READ ONLY", "SELECT @@tx_read_only",
                        "INSERT INTO ro VALUES (1)", // 1792: read-only transaction
                        "SELECT COUNT(*) FROM ro",
                        "START TRANSACTION", "INSERT INTO ro VALUES (2)", "COMMIT",
                        "SET SESSION TRANSACTION READ WRITE", "SELECT @@tx_read_only",
                        "INSERT INTO ro VALUES (3)",
                        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY",
                        "SELECT @@tx_read_only, @@tx_isolation",
                        "INSERT INTO ro VALUES (4)",
                        "SET SESSION tx_read_only = 0",
                        "SELECT id FROM ro ORDER BY id"));
        assertThat(run.proxied().toString()).contains("code=1792").contains("[[3]]");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void plainSessionVariables(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS sv", "CREATE TABLE sv (id INT PRIMARY KEY, v VARCHAR(10))",
                        "INSERT INTO sv VALUES (1, 'alpha'), (2, 'beta'), (3, 'gamma')")
                .sql("SET SESSION group_concat_max_len = 8",
                        "SELECT GROUP_CONCAT(v ORDER BY id) FROM sv",
                        "SET @@session.div_precision_increment = 2",
                        "SELECT 1/3, 2/3",
                        "SET lc_time_names = 'de_DE'",
                        "SELECT DATE_FORMAT('2024-03-01', '%W %M'), @@lc_time_names",
                        "SET SESSION max_join_size = 2",
                        "SELECT COUNT(*) FROM sv a, sv b", // 1104: more than max_join_size rows
                        "SELECT @@group_concat_max_len, @@div_precision_increment, @@max_join_size, @@sql_big_selects",
                        "SET SESSION max_join_size = DEFAULT, group_concat_max_len = 1024",
                        "SELECT COUNT(*) FROM sv a, sv b",
                        "SELECT GROUP_CONCAT(v ORDER BY id), 1/3, DATE_FORMAT('2024-03-01', '%M') FROM sv",
                        "SET LOCAL div_precision_increment = 6",
                        "SELECT 1/3",
                        "SET SESSION lc_time_names = DEFAULT",
                        "SELECT DATE_FORMAT('2024-03-01', '%M')"));
        assertThat(run.proxied().toString()).contains("Freitag März", "code=1104", "0.33", "alpha,be");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void useAndSetCatalog(JdbcDriver driver) throws Exception {
        String other = harness.otherDb();
        String mine = harness.db();
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .quietly("DROP TABLE IF EXISTS `" + mine + "`.which", "DROP TABLE IF EXISTS `" + other + "`.which",
                        "CREATE TABLE `" + mine + "`.which (v VARCHAR(10))",
                        "CREATE TABLE `" + other + "`.which (v VARCHAR(10))",
                        "INSERT INTO `" + mine + "`.which VALUES ('mine')",
                        "INSERT INTO `" + other + "`.which VALUES ('other')")
                .sql("SELECT DATABASE(), v FROM which",
                        "USE `" + other + "`",
                        "SELECT DATABASE(), v FROM which",
                        "INSERT INTO which VALUES ('other2')",
                        "SELECT COUNT(*) FROM which",
                        "USE no_such_database_sluice", // 1049, and the schema stays
                        "SELECT DATABASE()")
                .step("setCatalog mine", (c, t) -> c.setCatalog(mine))
                .sql("SELECT DATABASE(), v FROM which")
                .step("getCatalog", (c, t) -> t.add("catalog", c.getCatalog()))
                .step("setCatalog other", (c, t) -> c.setCatalog(other))
                .sql("SELECT DATABASE(), COUNT(*) FROM which")
                .step("getCatalog again", (c, t) -> t.add("catalog", c.getCatalog())));
        assertThat(run.proxied().toString()).contains("code=1049", "[[" + other + ", 2]]", "[[" + mine + ", mine]]");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void everythingAtOnceInOneStatement(JdbcDriver driver) throws Exception {
        String all = "SELECT @@sql_mode, @@time_zone, @@character_set_client, @@character_set_results,"
                + " @@collation_connection, @@autocommit, @@tx_isolation, @@tx_read_only, @@group_concat_max_len,"
                + " @@div_precision_increment, @@lc_time_names, DATABASE()";
        DifferentialHarness.Run run = compare(driver, () -> DifferentialHarness.script()
                .sql(all,
                        "SET SESSION sql_mode = 'TRADITIONAL', time_zone = '+01:00', group_concat_max_len = 99,"
                                + " div_precision_increment = 3, lc_time_names = 'es_ES'",
                        all,
                        "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_520_ci",
                        "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED",
                        all,
                        all,
                        "USE `" + harness.otherDb() + "`",
                        all,
                        all));
        run.assertSwitchedConnections().assertNeverPinned();
    }

    /** The smallest case behind most session_state pins seen in the scripts: a SET on a connection used before. */
    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void setOnAServerConnectionAnotherSessionUsedDoesNotPin(JdbcDriver driver) throws Exception {
        String params = DifferentialHarness.params(driver, "");
        for (int i = 0; i < 3; i++) {
            try (Connection before = harness.proxy().connect(driver, harness.db(), params);
                 Statement s = before.createStatement()) {
                s.execute("SELECT 1");
            }
        }
        try (Connection c = harness.proxy().connect(driver, harness.db(), params); Statement s = c.createStatement()) {
            s.execute("SET SESSION group_concat_max_len = 8");
            try (ResultSet rs = s.executeQuery("SELECT @@group_concat_max_len")) {
                rs.next();
                assertThat(rs.getLong(1)).isEqualTo(8);
            }
            assertThat(harness.snapshot(DifferentialHarness.greetingId(c)).pinnedBy())
                    .as("pinnedBy after a plain SET SESSION").isNull();
        }
    }
}
