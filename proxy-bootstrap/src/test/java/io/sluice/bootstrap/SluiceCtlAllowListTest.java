package io.sluice.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Sluice;
import io.sluice.capture.CaptureOptions;
import io.sluice.config.AllowListConfig;
import io.sluice.config.QueryRulesFile;
import io.sluice.replay.RuleCheck;
import io.sluice.rules.QueryRules;
import io.sluice.sql.SqlDigest;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The allow-list learned from traffic (issue #41 item 3), end to end on the real server: an oltp_read_write-like
 * workload (sysbench's statements over MariaDB Connector/J, text and server-side prepared) is captured through Sluice;
 * {@code sluice-ctl rules learn} writes its allow-list; {@code sluice-ctl rules check} finds 0 would-be refusals in that
 * capture and exactly the one extra shape in a second capture that adds one; then the list runs in Sluice, in
 * {@code DRY_RUN} (counted, nothing refused) and in {@code ENFORCE} (exactly that shape refused with ERR 1148).
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class SluiceCtlAllowListTest {
    private static final int ROWS = 200;
    private static final String EXTRA = "SELECT COUNT(*) FROM sbtest1 WHERE k > ";

    private static TestMariaDb server;
    private static String db;
    private static Sluice sluice;
    private static Path plain;
    private static Path withExtra;

    @TempDir
    static Path tmp;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeAll
    static void captureTheWorkloadTwice() throws Exception {
        server = TestMariaDb.get();
        db = server.createDatabase("allow_");
        StringBuilder insert = new StringBuilder("INSERT INTO `" + db + "`.sbtest1 (id, k, c, pad) VALUES ");
        for (int id = 1; id <= ROWS; id++) {
            insert.append(id == 1 ? "" : ",").append("(").append(id).append(",").append(id * 7 % ROWS)
                    .append(",'c").append(id).append("','pad").append(id).append("')");
        }
        server.execute("CREATE TABLE `" + db + "`.sbtest1 (id INT NOT NULL PRIMARY KEY, k INT NOT NULL DEFAULT 0,"
                + " c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k)) ENGINE=InnoDB",
                insert.toString());
        sluice = Sluice.start(ProxyUnderTest.builder().config());
        plain = tmp.resolve("plain");
        sluice.startCapture(CaptureOptions.of(plain).withMinFreeSpace(0));
        readWrite(0, 0);
        readWrite(1, 0);
        Thread.sleep(200); // the session ends reach the proxy a moment after the clients' close returns
        assertThat(sluice.stopCapture().dropped()).isZero();
        withExtra = tmp.resolve("extra");
        sluice.startCapture(CaptureOptions.of(withExtra).withMinFreeSpace(0));
        readWrite(2, 3);
        Thread.sleep(200);
        assertThat(sluice.stopCapture().dropped()).isZero();
    }

    @AfterAll
    static void stop() {
        if (sluice != null) {
            sluice.close();
        }
        server.dropDatabase(db);
    }

    @AfterEach
    void noAllowList() {
        sluice.reload(sluice.config().withAllowList(null));
    }

    private int ctl(String... args) {
        out.reset();
        err.reset();
        return SluiceCtl.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());
    }

    private static Connection connect(boolean serverPrepared) throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), db,
                serverPrepared ? "useServerPrepStmts=true" : ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    /**
     * sysbench oltp_read_write's statements for a few transactions, server-side prepared on even sessions, and
     * {@code extra} times a statement shape the workload does not have, as text.
     */
    private static void readWrite(int session, int extra) throws SQLException {
        Random random = new Random(session);
        try (Connection c = connect(session % 2 == 0)) {
            c.setAutoCommit(false);
            try (PreparedStatement point = c.prepareStatement("SELECT c FROM sbtest1 WHERE id = ?");
                    PreparedStatement range = c.prepareStatement("SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ?");
                    PreparedStatement sum = c.prepareStatement(
                            "SELECT SUM(k) FROM sbtest1 WHERE id BETWEEN ? AND ?");
                    PreparedStatement order = c.prepareStatement(
                            "SELECT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c");
                    PreparedStatement distinct = c.prepareStatement(
                            "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c");
                    PreparedStatement updateIndex = c.prepareStatement("UPDATE sbtest1 SET k = k + 1 WHERE id = ?");
                    PreparedStatement updateNonIndex = c.prepareStatement("UPDATE sbtest1 SET c = ? WHERE id = ?");
                    PreparedStatement delete = c.prepareStatement("DELETE FROM sbtest1 WHERE id = ?");
                    PreparedStatement insert = c.prepareStatement(
                            "INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)");
                    Statement text = c.createStatement()) {
                for (int t = 0; t < 5; t++) {
                    for (int i = 0; i < 4; i++) {
                        point.setInt(1, 1 + random.nextInt(ROWS));
                        drain(point.executeQuery());
                    }
                    for (PreparedStatement r : List.of(range, sum, order, distinct)) {
                        int from = 1 + random.nextInt(ROWS - 20);
                        r.setInt(1, from);
                        r.setInt(2, from + 9);
                        drain(r.executeQuery());
                    }
                    int own = 1 + random.nextInt(ROWS);
                    updateIndex.setInt(1, own);
                    updateIndex.executeUpdate();
                    updateNonIndex.setString(1, "s" + session + "-" + t);
                    updateNonIndex.setInt(2, own);
                    updateNonIndex.executeUpdate();
                    delete.setInt(1, own);
                    delete.executeUpdate();
                    insert.setInt(1, own);
                    insert.setInt(2, random.nextInt(ROWS));
                    insert.setString(3, "i" + session + "-" + t);
                    insert.setString(4, "pad");
                    insert.executeUpdate();
                    c.commit();
                }
                for (int i = 0; i < extra; i++) {
                    drain(text.executeQuery(EXTRA + i));
                }
                c.commit();
            }
        }
    }

    private static void drain(ResultSet rs) throws SQLException {
        try (rs) {
            while (rs.next()) {
                rs.getString(1);
            }
        }
    }

    /** The allow-list {@code rules learn} writes for the first capture, in {@code mode}. */
    private Path learned(String mode) throws Exception {
        Path file = tmp.resolve("allow-" + mode + ".yaml");
        assertThat(ctl("rules", "learn", "--capture", plain.toString(), "--output", file.toString(), "--mode", mode))
                .as(err.toString()).isZero();
        return file;
    }

    @Test
    void learnThenCheckFindsNothingInTheSameTrafficAndExactlyTheExtraShapeInOther() throws Exception {
        Path file = learned("DRY_RUN");
        String yaml = Files.readString(file);
        assertThat(yaml).contains("!QUERY_RULES", "allowList:", "mode: DRY_RUN", "'" + ProxyUnderTest.USER + "':")
                .contains(SqlDigest.of("SELECT c FROM sbtest1 WHERE id = 1").hash() + "'   # 40x select c from"
                        + " sbtest1 where id = ?")
                .doesNotContain(SqlDigest.of(EXTRA + "1").hash());
        QueryRulesFile rules = QueryRulesFile.load(file);
        assertThat(rules.allowList().users().get(ProxyUnderTest.USER))
                .contains(SqlDigest.of("INSERT INTO sbtest1 (id, k, c, pad) VALUES (?, ?, ?, ?)").hash(),
                        SqlDigest.of("COMMIT").hash());

        assertThat(ctl("rules", "check", "--capture", plain.toString(), "--rules", file.toString()))
                .as(err.toString()).isZero();
        assertThat(out.toString()).contains("Would refuse 0 statement(s) of 0 shape(s)");
        assertThat(RuleCheck.run(rules, plain, null).refusedStatements()).isZero();

        assertThat(ctl("rules", "check", "--capture", withExtra.toString(), "--rules", file.toString()))
                .as(err.toString()).isZero();
        String extraDigest = SqlDigest.of(EXTRA + "1").hash();
        assertThat(out.toString()).contains("Would refuse 3 statement(s) of 1 shape(s)", extraDigest, "allow-list");
        String checked = out.toString();
        // The same dry run under the name, a replay judged by the rules instead of sent to a server.
        assertThat(ctl("traffic", "replay", "--input", withExtra.toString(), "--rules", file.toString()))
                .as(err.toString()).isZero();
        assertThat(out.toString()).isEqualTo(checked);
        assertThat(ctl("traffic", "replay", "--input", plain.toString(), "--rules", file.toString()))
                .as(err.toString()).isZero();
        assertThat(out.toString()).contains("Would refuse 0 statement(s) of 0 shape(s)");
        assertThat(ctl("traffic", "replay", "--input", plain.toString(), "--rules", file.toString(), "--target",
                "127.0.0.1:3306", "--user", "root")).isEqualTo(2);
        assertThat(err.toString()).contains("--rules is a dry run that needs no server");
        assertThat(ctl("traffic", "replay", "--input", plain.toString())).isEqualTo(2);
        assertThat(err.toString()).contains("--target and --user are required");
        RuleCheck check = RuleCheck.run(rules, withExtra, null);
        assertThat(check.refused()).singleElement().satisfies(entry -> {
            assertThat(entry.getKey().digest()).isEqualTo(extraDigest);
            assertThat(entry.getKey().user()).isEqualTo(ProxyUnderTest.USER);
            assertThat(entry.getValue()).isEqualTo(3);
        });
    }

    @Test
    void dryRunCountsTheExtraShapeAndRefusesNothing() throws Exception {
        AllowListConfig list = QueryRulesFile.load(learned("DRY_RUN")).allowList();
        sluice.reload(sluice.config().withAllowList(list));
        readWrite(4, 5); // would throw on any refusal
        List<QueryRules.OutsideShape> outside = sluice.queryRules().outsideAllowList();
        assertThat(outside).singleElement().satisfies(shape -> {
            assertThat(shape.digest()).isEqualTo(SqlDigest.of(EXTRA + "1").hash());
            assertThat(shape.user()).isEqualTo(ProxyUnderTest.USER);
            assertThat(shape.count()).isEqualTo(5);
        });
    }

    @Test
    void enforceRefusesExactlyTheExtraShapeOnTheSameConnectionAndOnlyForListedUsers() throws Exception {
        AllowListConfig list = QueryRulesFile.load(learned("ENFORCE")).allowList();
        assertThat(list.mode()).isEqualTo(AllowListConfig.Mode.ENFORCE);
        sluice.reload(sluice.config().withAllowList(list));
        readWrite(5, 0); // the learned workload runs untouched, text and prepared
        String extraDigest = SqlDigest.of(EXTRA + "1").hash();
        try (Connection c = connect(true); Statement s = c.createStatement()) {
            assertThatThrownBy(() -> s.executeQuery(EXTRA + "7")).isInstanceOfSatisfying(SQLException.class, e -> {
                assertThat(e.getErrorCode()).isEqualTo(1148);
                assertThat(e.getSQLState()).isEqualTo("42000");
                assertThat(e.getMessage()).contains("allow-list", ProxyUnderTest.USER, extraDigest);
            });
            assertThatThrownBy(() -> {
                try (PreparedStatement p = c.prepareStatement(EXTRA + "?")) {
                    p.setInt(1, 5);
                    p.executeQuery().close(); // Connector/J prepares on the server at the first execution
                }
            }).isInstanceOfSatisfying(SQLException.class,
                            e -> assertThat(e.getErrorCode()).as(e.toString()).isEqualTo(1148));
            try (ResultSet rs = s.executeQuery("SELECT c FROM sbtest1 WHERE id = 3")) {
                assertThat(rs.next()).isTrue(); // the connection goes on with a learned shape
            }
        }
        // another user the list does not name is not restricted by it
        try (Connection other = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), db, ""),
                ProxyUnderTest.USER2, ProxyUnderTest.PASSWORD2); Statement s = other.createStatement()) {
            drain(s.executeQuery(EXTRA + "1"));
        }
        assertThat(sluice.queryRules().outsideAllowList()).singleElement()
                .satisfies(shape -> assertThat(shape.count()).as("the text statement and the prepare; Connector/J"
                        + " may send a refused prepare again as text, refused as well").isBetween(2L, 3L));
        // a reload without the list lets the shape run again, from the next statement
        sluice.reload(sluice.config().withAllowList(null));
        try (Connection c = connect(false); Statement s = c.createStatement()) {
            drain(s.executeQuery(EXTRA + "1"));
        }
    }
}
