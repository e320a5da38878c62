package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.sluice.testing.Endpoints;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import io.sluice.testing.Trace;
import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.sql.Types;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Pass-through of ordinary traffic: each scenario runs directly against MariaDB and through the proxy, with both
 * drivers, and what the client observed (rows, column metadata, update counts, generated keys, warnings, errors) must
 * be identical. Each scenario also checks a few absolute values, so a scenario that silently observes nothing fails.
 */
@Tag("server")
class QueryCompatibilityTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults().database("sluice_it_query");
    private static final Endpoints endpoints = proxy.endpoints();

    private static Trace compare(JdbcDriver driver, String params, Endpoints.Scenario scenario) throws Exception {
        Trace[] traces = endpoints.runBothWays(driver, proxy.db(), params, scenario);
        assertThat(traces[1]).as("through the proxy vs direct (%s %s)", driver, params).isEqualTo(traces[0]);
        return traces[0];
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void plainQueriesTypesMetadataWarningsAndErrors(JdbcDriver driver) throws Exception {
        Trace trace = compare(driver, "", (c, t) -> {
            try (Statement s = c.createStatement()) {
                Trace.quietly(s, "DROP TABLE IF EXISTS types");
                t.execute(s, "CREATE TABLE types (id INT AUTO_INCREMENT PRIMARY KEY, ti TINYINT, si SMALLINT UNSIGNED,"
                        + " bi BIGINT, de DECIMAL(12,4), fl FLOAT, dbl DOUBLE, ch CHAR(3), vc VARCHAR(40) NOT NULL,"
                        + " tx TEXT, bl BLOB, vb VARBINARY(8), da DATE, dt DATETIME(3), tm TIME, yr YEAR,"
                        + " en ENUM('a','b'), st SET('x','y'), bt BIT(5), js JSON) DEFAULT CHARSET=utf8mb4");
                t.execute(s, "INSERT INTO types (ti, si, bi, de, fl, dbl, ch, vc, tx, bl, vb, da, dt, tm, yr, en, st, bt, js)"
                        + " VALUES (-1, 65535, -9223372036854775808, 12345678.1234, 1.5, 2.25e100, 'abc', 'héllo wörld ✓',"
                        + " REPEAT('t', 3000), X'00FF10', X'DEADBEEF', '2024-02-29', '2024-02-29 23:59:59.123',"
                        + " '23:59:58', 2155, 'b', 'x,y', b'10101', '{\"k\": [1, 2]}'),"
                        + " (NULL, NULL, NULL, NULL, NULL, NULL, NULL, '', NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
                        + " NULL, NULL, NULL, NULL)");
                t.execute(s, "SELECT * FROM types ORDER BY id");
                t.execute(s, "SELECT id AS `the id`, vc AS label, LENGTH(tx), 1 + 1, NULL, 'x' FROM types t ORDER BY 1");
                t.execute(s, "SELECT 1/0, CAST('12abc' AS SIGNED)"); // warnings 1365 and 1292
                t.execute(s, "SELECT * FROM no_such_table"); // 1146, 42S02
                t.execute(s, "SELEC oops"); // 1064, 42000
                t.execute(s, "INSERT INTO types (vc) VALUES (NULL)"); // 1048, 23000
                t.execute(s, "UPDATE types SET ti = ti + 1 WHERE id > 0");
                t.execute(s, "DELETE FROM types WHERE vc = ''");
                t.execute(s, "SELECT COUNT(*) FROM types");
                t.execute(s, "SELECT 'still usable after errors'");
            }
        });
        assertThat(trace.toString())
                .contains("héllo wörld ✓", "0x00ff10", "UpdateCount[count=2]")
                .contains("code=1146, sqlState=42S02", "code=1064, sqlState=42000", "code=1048, sqlState=23000")
                .contains("Warning[code=1365", "still usable after errors");
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void serverSidePreparedStatementsAndBatches(JdbcDriver driver) throws Exception {
        String params = driver == JdbcDriver.MYSQL ? "useServerPrepStmts=true&cachePrepStmts=true" : "useServerPrepStmts=true";
        Trace trace = compare(driver, params, (c, t) -> {
            try (Statement s = c.createStatement()) {
                Trace.quietly(s, "DROP TABLE IF EXISTS ps");
                t.execute(s, "CREATE TABLE ps (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(20), amount DECIMAL(10,2),"
                        + " at DATETIME, data VARBINARY(16))");
            }
            try (PreparedStatement insert = c.prepareStatement("INSERT INTO ps (name, amount, at, data) VALUES (?, ?, ?, ?)",
                    Statement.RETURN_GENERATED_KEYS)) {
                for (int i = 0; i < 50; i++) {
                    insert.setString(1, "n" + i);
                    insert.setBigDecimal(2, new BigDecimal(i + ".25"));
                    insert.setTimestamp(3, java.sql.Timestamp.valueOf("2025-01-01 10:00:0" + (i % 10)));
                    if (i % 7 == 0) {
                        insert.setNull(4, Types.VARBINARY);
                    } else {
                        insert.setBytes(4, new byte[] {(byte) i, 0, (byte) 0xFF});
                    }
                    insert.addBatch();
                }
                int[] counts = insert.executeBatch();
                t.add("batch size", counts.length);
                int total = 0;
                for (int count : counts) {
                    total += count == Statement.SUCCESS_NO_INFO ? 1 : count;
                }
                t.add("batch affected", total);
                t.warnings(insert.getWarnings());
                insert.setString(1, "single");
                insert.setBigDecimal(2, BigDecimal.ONE);
                insert.setNull(3, Types.TIMESTAMP);
                insert.setNull(4, Types.VARBINARY);
                t.add("single affected", insert.executeUpdate());
                t.generatedKeys(insert);
            }
            try (PreparedStatement select = c.prepareStatement(
                    "SELECT id, name, amount, at, data FROM ps WHERE id BETWEEN ? AND ? ORDER BY id")) {
                for (int from : new int[] {1, 20, 45}) {
                    select.setInt(1, from);
                    select.setInt(2, from + 9);
                    try (ResultSet rs = select.executeQuery()) {
                        t.resultSet(rs);
                    }
                }
            }
            try (PreparedStatement bad = c.prepareStatement("SELECT * FROM ps WHERE nope = ?")) {
                bad.setInt(1, 1);
                bad.executeQuery();
                t.add("unexpected", "no error");
            } catch (java.sql.SQLException e) {
                t.error(e);
            }
            try (Statement s = c.createStatement()) {
                t.execute(s, "SELECT COUNT(*), SUM(amount) FROM ps");
            }
        });
        assertThat(trace.toString()).contains("batch affected, value=50", "single affected, value=1",
                "generatedKeys, value=[51]", "sqlState=42S22", "n44");
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void batchedTextInsertsAndGeneratedKeys(JdbcDriver driver) throws Exception {
        Trace trace = compare(driver, "rewriteBatchedStatements=true", (c, t) -> {
            try (Statement s = c.createStatement()) {
                Trace.quietly(s, "DROP TABLE IF EXISTS b");
                t.execute(s, "CREATE TABLE b (id INT AUTO_INCREMENT PRIMARY KEY, v INT UNIQUE)");
                for (int i = 0; i < 20; i++) {
                    s.addBatch("INSERT INTO b (v) VALUES (" + i + ")");
                }
                int[] counts = s.executeBatch();
                t.add("batch", counts.length);
                t.execute(s, "INSERT INTO b (v) VALUES (100), (101), (102)"); // records the generated keys
                t.execute(s, "INSERT INTO b (v) VALUES (1)"); // duplicate key 1062
                t.execute(s, "INSERT IGNORE INTO b (v) VALUES (1), (200)"); // one row, one warning
                t.execute(s, "SELECT LAST_INSERT_ID(), ROW_COUNT()");
                t.execute(s, "SELECT id, v FROM b ORDER BY id");
            }
        });
        assertThat(trace.toString()).contains("batch, value=20", "generatedKeys, value=[21", "code=1062, sqlState=23000",
                "Warning[code=1062");
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void multiStatementsAndProcedureWithSeveralResultSets(JdbcDriver driver) throws Exception {
        Trace trace = compare(driver, "allowMultiQueries=true", (c, t) -> {
            try (Statement s = c.createStatement()) {
                Trace.quietly(s, "DROP TABLE IF EXISTS m");
                t.execute(s, "CREATE TABLE m (id INT PRIMARY KEY, v VARCHAR(10));"
                        + " INSERT INTO m VALUES (1, 'one'), (2, 'two'); SELECT * FROM m ORDER BY id;"
                        + " UPDATE m SET v = 'uno' WHERE id = 1; SELECT v FROM m WHERE id = 1");
                t.execute(s, "SELECT 1; SELECT * FROM missing_table; SELECT 3"); // error in the middle stops the rest
                t.execute(s, "SELECT 'after the failed batch'");
                Trace.quietly(s, "DROP PROCEDURE IF EXISTS three_results");
                t.execute(s, "CREATE PROCEDURE three_results(IN n INT) BEGIN"
                        + " SELECT id, v FROM m ORDER BY id;"
                        + " SELECT n * 2 AS doubled, 'two' AS second;"
                        + " UPDATE m SET v = 'dos' WHERE id = 2;"
                        + " SELECT COUNT(*) AS c FROM m; END");
                t.execute(s, "CALL three_results(21)");
            }
            try (java.sql.CallableStatement call = c.prepareCall("{call three_results(?)}")) {
                call.setInt(1, 5);
                t.results(call, call.execute());
            }
        });
        assertThat(trace.toString()).contains("uno", "code=1146", "after the failed batch", "[42, two]", "[10, two]");
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void transactionsCommitAndRollback(JdbcDriver driver) throws Exception {
        Trace trace = compare(driver, "", (c, t) -> {
            try (Statement s = c.createStatement()) {
                Trace.quietly(s, "DROP TABLE IF EXISTS tx");
                t.execute(s, "CREATE TABLE tx (id INT PRIMARY KEY, v INT) ENGINE=InnoDB");
                c.setAutoCommit(false);
                t.execute(s, "INSERT INTO tx VALUES (1, 10), (2, 20)");
                t.execute(s, "SELECT @@in_transaction");
                c.commit();
                t.execute(s, "UPDATE tx SET v = v * 100");
                t.execute(s, "INSERT INTO tx VALUES (3, 30)");
                t.execute(s, "SELECT * FROM tx ORDER BY id"); // uncommitted changes are visible inside
                c.rollback();
                t.execute(s, "SELECT * FROM tx ORDER BY id");
                t.execute(s, "START TRANSACTION");
                t.execute(s, "DELETE FROM tx WHERE id = 1");
                java.sql.Savepoint sp = c.setSavepoint("sp1");
                t.execute(s, "DELETE FROM tx WHERE id = 2");
                c.rollback(sp);
                c.commit();
                c.setAutoCommit(true);
                t.execute(s, "SELECT * FROM tx ORDER BY id");
                t.execute(s, "SELECT @@autocommit, @@in_transaction");
            }
        });
        assertThat(trace.toString()).contains("[1, 1000], [2, 2000], [3, 30]", "rows=[[2, 20]]]")
                .doesNotContain("rows=[[1, 10], [2, 20], [3, 30]]");
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void streamedHundredThousandRows(JdbcDriver driver) throws Exception {
        Trace trace = compare(driver, "", (c, t) -> {
            try (Statement s = c.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
                s.setFetchSize(driver == JdbcDriver.MYSQL ? Integer.MIN_VALUE : 1000);
                long rows = 0;
                long sum = 0;
                long padding = 0;
                try (ResultSet rs = s.executeQuery("SELECT seq, REPEAT('x', 100) FROM seq_1_to_100000")) {
                    while (rs.next()) {
                        rows++;
                        sum += rs.getLong(1);
                        padding += rs.getString(2).length();
                    }
                }
                t.add("rows", rows).add("sum", sum).add("padding", padding);
                t.execute(s, "SELECT 'next query on the same connection'");
            }
        });
        assertThat(trace.toString()).contains("rows, value=100000", "sum, value=5000050000", "padding, value=10000000");
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void cursorFetch(JdbcDriver driver) throws Exception {
        // MySQL Connector/J opens a server-side cursor (COM_STMT_EXECUTE with a cursor flag, then COM_STMT_FETCH);
        // MariaDB Connector/J has no cursor mode, and fetch size only streams.
        assumeTrue(driver == JdbcDriver.MYSQL, "cursor fetch is a MySQL Connector/J feature");
        Trace trace = compare(driver, "useCursorFetch=true&defaultFetchSize=7", (c, t) -> {
            try (Statement s = c.createStatement()) {
                Trace.quietly(s, "DROP TABLE IF EXISTS cur");
                t.execute(s, "CREATE TABLE cur (id INT PRIMARY KEY, v VARCHAR(10))");
                t.execute(s, "INSERT INTO cur SELECT seq, CONCAT('v', seq) FROM seq_1_to_100");
            }
            try (PreparedStatement ps = c.prepareStatement("SELECT id, v FROM cur WHERE id > ? ORDER BY id")) {
                ps.setFetchSize(7);
                ps.setInt(1, 10);
                try (ResultSet rs = ps.executeQuery()) {
                    t.resultSet(rs);
                }
                ps.setInt(1, 95);
                try (ResultSet rs = ps.executeQuery()) {
                    t.resultSet(rs);
                }
            }
        });
        assertThat(trace.toString()).contains("[11, v11]", "[100, v100]", "[96, v96]");
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void useOtherDatabaseAndSetCatalog(JdbcDriver driver) throws Exception {
        String other = TestMariaDb.get().createDatabase("sluice_it_other");
        try {
            TestMariaDb.get().execute("CREATE TABLE `" + other + "`.o (id INT)", "INSERT INTO `" + other + "`.o VALUES (7)");
            Trace trace = compare(driver, "", (c, t) -> {
                try (Statement s = c.createStatement()) {
                    t.execute(s, "SELECT DATABASE()");
                    t.execute(s, "USE `" + other + "`");
                    t.execute(s, "SELECT DATABASE(), id FROM o");
                    c.setCatalog(proxy.db());
                    t.add("catalog", c.getCatalog());
                    t.execute(s, "SELECT DATABASE()");
                    t.execute(s, "SELECT id FROM o"); // not in db: 1146
                    t.execute(s, "USE no_such_database_sluice"); // 1049
                    try {
                        c.setCatalog("no_such_database_sluice");
                        t.add("setCatalog", "no error");
                    } catch (java.sql.SQLException e) {
                        t.error(e);
                    }
                    t.execute(s, "SELECT DATABASE()");
                }
            });
            assertThat(trace.toString()).contains("[" + other + ", 7]", "catalog, value=" + proxy.db(),
                    "code=1049, sqlState=42000", "code=1146");
        } finally {
            TestMariaDb.get().dropDatabase(other);
        }
    }
}
