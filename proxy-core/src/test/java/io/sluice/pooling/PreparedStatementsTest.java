package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.PoolingConfig;
import io.sluice.config.PoolingMode;
import io.sluice.testing.JdbcDriver;
import java.io.ByteArrayInputStream;
import java.math.BigDecimal;
import java.sql.Date;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Server-side prepared statements in {@code pooling: TRANSACTION} (issue #8): the client's statement ids are Sluice's,
 * prepared lazily on whichever server connection the session is on, with a per-connection cache of four statements
 * here so that it evicts. Statements prepared on one connection must execute, batch, fail and close on another with
 * the same results as directly against MariaDB.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@Tag("server")
class PreparedStatementsTest {

    private static final int CACHE = 4;

    @RegisterExtension
    static final DifferentialHarness harness = DifferentialHarness.of("sluice_mux_ps",
            new PoolingConfig(PoolingMode.TRANSACTION, CACHE));

    private static void setRow(PreparedStatement ps, int k) throws SQLException {
        ps.setInt(1, k * 3 - 7);
        ps.setLong(2, k * 1_000_000_007L);
        ps.setBigDecimal(3, new BigDecimal(k + ".125"));
        ps.setDouble(4, k / 8.0);
        ps.setString(5, "row " + k + " héllo ✓");
        ps.setDate(6, Date.valueOf("2024-02-" + (10 + k)));
        ps.setTimestamp(7, Timestamp.valueOf("2024-02-29 23:59:" + (10 + k) + ".125"));
        ps.setBytes(8, new byte[] {(byte) k, 0, (byte) 0xFF});
        if (k % 2 == 0) {
            ps.setNull(9, Types.INTEGER);
        } else {
            ps.setInt(9, k);
        }
        ps.setBinaryStream(10, new ByteArrayInputStream(("blob " + k).repeat(50).getBytes()), 5 * 50 + 10);
    }

    private static int affected(int[] counts) {
        int total = 0;
        for (int count : counts) {
            total += count == Statement.SUCCESS_NO_INFO ? 1 : count;
        }
        return total;
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void parametersOfSeveralTypesBatchesAndReprepareAcrossConnections(JdbcDriver driver) throws Exception {
        String insertSql = "INSERT INTO pt (i, l, d, f, s, dt, ts, b, n, bl) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
        // Not the ids: MariaDB Connector/J's bulk batch (COM_STMT_BULK_EXECUTE, when offered) reserves more of them.
        String selectSql = "SELECT i, l, d, f, s, dt, ts, b, n, LENGTH(bl), MD5(bl) FROM pt"
                + " WHERE i >= ? AND s <> ? ORDER BY i";
        DifferentialHarness.Run run = harness.compare(driver, DifferentialHarness.serverPrepParams(driver), () -> {
            PreparedStatement[] insert = new PreparedStatement[1];
            PreparedStatement[] select = new PreparedStatement[1];
            DifferentialHarness.Script script = DifferentialHarness.script()
                    .quietly("DROP TABLE IF EXISTS pt", "CREATE TABLE pt (id INT AUTO_INCREMENT PRIMARY KEY, i INT,"
                            + " l BIGINT, d DECIMAL(12,3), f DOUBLE, s VARCHAR(40), dt DATE, ts DATETIME(3),"
                            + " b VARBINARY(16), n INT NULL, bl BLOB) DEFAULT CHARSET=utf8mb4")
                    .step("prepare insert", (c, t) -> insert[0] = c.prepareStatement(insertSql));
            for (int k = 1; k <= 3; k++) {
                int row = k;
                script.step("insert " + k, (c, t) -> {
                    setRow(insert[0], row);
                    t.add("affected", insert[0].executeUpdate());
                });
            }
            script.step("prepare select", (c, t) -> select[0] = c.prepareStatement(selectSql));
            for (int from : new int[] {-10, -2, 1}) {
                script.step("select from " + from, (c, t) -> {
                    select[0].setInt(1, from);
                    select[0].setString(2, "nothing");
                    try (ResultSet rs = select[0].executeQuery()) {
                        t.resultSet(rs);
                    }
                });
            }
            script.step("batch of 10", (c, t) -> {
                for (int k = 4; k < 14; k++) {
                    setRow(insert[0], k);
                    insert[0].addBatch();
                }
                int[] counts = insert[0].executeBatch();
                t.add("batch size", counts.length).add("batch affected", affected(counts));
            });
            script.step("select after batch", (c, t) -> {
                select[0].setInt(1, 20);
                select[0].setString(2, "row 12 héllo ✓");
                try (ResultSet rs = select[0].executeQuery()) {
                    t.resultSet(rs);
                }
            });
            script.step("close both", (c, t) -> {
                insert[0].close();
                select[0].close();
            });
            script.step("re-prepare and insert", (c, t) -> {
                insert[0] = c.prepareStatement(insertSql);
                setRow(insert[0], 20);
                t.add("affected", insert[0].executeUpdate());
            });
            script.step("re-prepare select", (c, t) -> {
                select[0] = c.prepareStatement(selectSql);
                select[0].setInt(1, 30);
                select[0].setString(2, "");
                try (ResultSet rs = select[0].executeQuery()) {
                    t.resultSet(rs);
                }
            });
            script.step("close at the end", (c, t) -> {
                insert[0].close();
                select[0].close();
            });
            script.sql("SELECT COUNT(*), SUM(i), SUM(d), MAX(s) FROM pt");
            return script;
        });
        assertThat(run.proxied().toString()).contains("batch affected, value=10", "row 20 héllo ✓", "[[14, ");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void moreStatementsThanTheCacheHolds(JdbcDriver driver) throws Exception {
        int statements = CACHE * 3;
        DifferentialHarness.Run run = harness.compare(driver, DifferentialHarness.serverPrepParams(driver), () -> {
            List<PreparedStatement> open = new ArrayList<>();
            DifferentialHarness.Script script = DifferentialHarness.script()
                    .step("prepare " + statements, (c, t) -> {
                        for (int k = 0; k < statements; k++) {
                            open.add(c.prepareStatement("SELECT ? + " + k + ", CONCAT('statement ', " + k + ", ?)"));
                        }
                    });
            for (int round = 0; round < 4; round++) {
                int r = round;
                script.step("round " + round, (c, t) -> {
                    // Round 0 in order, then backwards, then every third: each order evicts differently.
                    for (int i = 0; i < statements; i++) {
                        int k = r == 1 ? statements - 1 - i : r == 2 ? (i * 3) % statements : i;
                        PreparedStatement ps = open.get(k);
                        ps.setLong(1, 1000L * r + k);
                        ps.setString(2, " round " + r);
                        try (ResultSet rs = ps.executeQuery()) {
                            t.resultSet(rs);
                        }
                    }
                });
            }
            script.step("close half", (c, t) -> {
                for (int k = 0; k < statements; k += 2) {
                    open.get(k).close();
                }
            });
            script.step("the other half still works", (c, t) -> {
                for (int k = 1; k < statements; k += 2) {
                    PreparedStatement ps = open.get(k);
                    ps.setLong(1, -k);
                    ps.setString(2, "!");
                    try (ResultSet rs = ps.executeQuery()) {
                        t.resultSet(rs);
                    }
                    ps.close();
                }
            });
            return script;
        });
        assertThat(run.proxied().toString()).contains("statement 11 round 3", "statement 0 round 0");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void serverErrorsAreTheSameBothWays(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = harness.compare(driver, DifferentialHarness.serverPrepParams(driver), () -> {
            PreparedStatement[] insert = new PreparedStatement[1];
            return DifferentialHarness.script()
                    .quietly("DROP TABLE IF EXISTS pe", "CREATE TABLE pe (id INT PRIMARY KEY, v VARCHAR(3) NOT NULL)")
                    .step("prepare on a missing table", (c, t) -> {
                        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM no_such_table_mux WHERE id = ?")) {
                            ps.setInt(1, 1);
                            try (ResultSet rs = ps.executeQuery()) {
                                t.resultSet(rs);
                            }
                        } catch (SQLException e) {
                            t.error(e);
                        }
                    })
                    .step("syntax error", (c, t) -> {
                        try (PreparedStatement ps = c.prepareStatement("SELEC ? oops")) {
                            ps.setInt(1, 1);
                            ps.execute();
                        } catch (SQLException e) {
                            t.error(e);
                        }
                    })
                    .step("prepare insert", (c, t) -> insert[0] = c.prepareStatement("INSERT INTO pe VALUES (?, ?)"))
                    .step("insert 1", (c, t) -> {
                        insert[0].setInt(1, 1);
                        insert[0].setString(2, "a");
                        t.add("affected", insert[0].executeUpdate());
                    })
                    .step("duplicate key", (c, t) -> {
                        try {
                            insert[0].setInt(1, 1);
                            insert[0].setString(2, "b");
                            insert[0].executeUpdate();
                        } catch (SQLException e) {
                            t.error(e);
                        }
                    })
                    .step("null into not null", (c, t) -> {
                        try {
                            insert[0].setInt(1, 2);
                            insert[0].setNull(2, Types.VARCHAR);
                            insert[0].executeUpdate();
                        } catch (SQLException e) {
                            t.error(e);
                        }
                    })
                    .step("still usable", (c, t) -> {
                        insert[0].setInt(1, 3);
                        insert[0].setString(2, "c");
                        t.add("affected", insert[0].executeUpdate());
                        insert[0].close();
                    })
                    .step("table dropped under a prepared statement", (c, t) -> {
                        try (PreparedStatement ps = c.prepareStatement("SELECT v FROM pe WHERE id = ?")) {
                            ps.setInt(1, 3);
                            try (ResultSet rs = ps.executeQuery()) {
                                t.resultSet(rs);
                            }
                            try (Statement s = c.createStatement()) {
                                s.execute("DROP TABLE pe");
                            }
                            try (ResultSet rs = ps.executeQuery()) {
                                t.resultSet(rs);
                            } catch (SQLException e) {
                                t.error(e);
                            }
                        }
                    })
                    .sql("SELECT 'after the errors'");
        });
        assertThat(run.proxied().toString()).contains("code=1146", "code=1064", "code=1062", "code=1048",
                "after the errors");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    @ParameterizedTest
    @EnumSource(JdbcDriver.class)
    void preparedInATransactionUsedAfterItsCommit(JdbcDriver driver) throws Exception {
        DifferentialHarness.Run run = harness.compare(driver, DifferentialHarness.serverPrepParams(driver), () -> {
            PreparedStatement[] ps = new PreparedStatement[1];
            return DifferentialHarness.script()
                    .quietly("DROP TABLE IF EXISTS pc", "CREATE TABLE pc (id INT PRIMARY KEY) ENGINE=InnoDB")
                    .sql("START TRANSACTION")
                    .step("prepare inside", (c, t) -> ps[0] = c.prepareStatement("INSERT INTO pc VALUES (?)"))
                    .step("insert inside", (c, t) -> {
                        ps[0].setInt(1, 1);
                        t.add("affected", ps[0].executeUpdate());
                    })
                    .sql("COMMIT", "SELECT 'free'")
                    .step("insert after commit", (c, t) -> {
                        ps[0].setInt(1, 2);
                        t.add("affected", ps[0].executeUpdate());
                    })
                    .sql("SELECT 'free again'")
                    .step("insert once more", (c, t) -> {
                        ps[0].setInt(1, 3);
                        t.add("affected", ps[0].executeUpdate());
                        ps[0].close();
                    })
                    .sql("SELECT id FROM pc ORDER BY id");
        });
        assertThat(run.proxied().toString()).contains("[[1], [2], [3]]");
        run.assertSwitchedConnections().assertNeverPinned();
    }

    /** MySQL Connector/J fetches with a server-side cursor (COM_STMT_FETCH): the cursor pins until it closes. */
    @Test
    void cursorFetchPinsUntilTheStatementCloses() throws Exception {
        JdbcDriver driver = JdbcDriver.MYSQL;
        String params = DifferentialHarness.params(driver, "useServerPrepStmts=true&useCursorFetch=true");
        DifferentialHarness.Run run = harness.compare(driver, params, () -> {
            PreparedStatement[] ps = new PreparedStatement[1];
            ResultSet[] rs = new ResultSet[1];
            return DifferentialHarness.script()
                    .quietly("DROP TABLE IF EXISTS cf", "CREATE TABLE cf (id INT PRIMARY KEY)",
                            "INSERT INTO cf SELECT seq FROM seq_1_to_20")
                    .sql("SELECT 'free'")
                    .step("open cursor", (c, t) -> {
                        ps[0] = c.prepareStatement("SELECT id FROM cf WHERE id > ? ORDER BY id");
                        ps[0].setFetchSize(3);
                        ps[0].setInt(1, 5);
                        rs[0] = ps[0].executeQuery();
                    })
                    .step("read 4 rows", (c, t) -> {
                        for (int i = 0; i < 4 && rs[0].next(); i++) {
                            t.add("row", rs[0].getInt(1));
                        }
                    })
                    .step("read the rest", (c, t) -> {
                        while (rs[0].next()) {
                            t.add("row", rs[0].getInt(1));
                        }
                    })
                    .step("close", (c, t) -> {
                        rs[0].close();
                        ps[0].close();
                    })
                    .sql("SELECT 'free again'", "SELECT 'and again'");
        });
        assertThat(run.proxied().toString()).contains("row, value=6", "row, value=20");
        assertThat(run.pinAfter("open cursor")).isEqualTo("cursor");
        assertThat(run.pinAfter("read 4 rows")).isEqualTo("cursor");
        assertThat(run.connectionsBetween("open cursor", "read the rest")).hasSize(1);
        assertThat(run.pinAfter("close")).isNull();
        assertThat(run.pinAfter("SELECT 'and again'")).isNull();
        run.assertSwitchedConnections();
    }
}
