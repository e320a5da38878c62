package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Sluice;
import io.sluice.api.ReadWriteCounts;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.ReplicationGroup;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A write reaching a replica through Sluice is impossible, even for an account with every privilege (issue #38,
 * decision 110). Sluice logs in to the group as root, whose SUPER passes the replicas' {@code read_only}: before
 * decision 110 each statement below wrote on a replica only, and the primary's next write broke replication there.
 * Where a statement ran is read on the servers: their tables, their GTID positions, their named locks.
 */
@Tag("server")
class ReplicaWritesTest {
    private static ReplicationGroup servers;
    private static Sluice sluice;

    @BeforeAll
    static void start() {
        servers = ReplicationGroup.start("nowrite");
        servers.primary().execute("CREATE DATABASE app",
                "CREATE TABLE app.t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(40))",
                "INSERT INTO app.t (v) VALUES ('victim'), ('bystander')",
                // a stored function that writes, unqualified in the statements, and a view that calls it
                "CREATE FUNCTION app.add_row(x VARCHAR(40)) RETURNS INT DETERMINISTIC MODIFIES SQL DATA"
                        + " BEGIN INSERT INTO app.t (v) VALUES (x); RETURN 1; END",
                "CREATE VIEW app.adding_v AS SELECT app.add_row('from view') AS added",
                // the same in a server's own schema, whose views Sluice does not read (decision 200): a view the
                // router cannot know, so that the replicas' read-only mode is what stops its writes (decision 110).
                // Not named v: Sluice matches such names anywhere in a statement, and t has a column v
                "CREATE VIEW mysql.sluice_unseen_v AS SELECT app.add_row('from unseen view') AS added");
        servers.awaitCaughtUp();
        ProxyConfig config = servers.sluiceConfig(3000)
                .pooling(PoolingConfig.defaults())
                .readWriteSplitting(servers.splitGroup("app_rw"))
                .build();
        sluice = Sluice.start(config);
    }

    @AfterAll
    static void stop() {
        if (sluice != null) {
            sluice.close();
        }
        if (servers != null) {
            servers.close();
        }
    }

    private static Connection connect() throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), "app_rw", ""),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    private static String one(Statement s, String sql) throws SQLException {
        try (ResultSet rs = s.executeQuery(sql)) {
            assertThat(rs.next()).as(sql).isTrue();
            return rs.getString(1);
        }
    }

    private static String one(ExtraMariaDb server, String sql) throws SQLException {
        try (Connection c = server.rootConnection(); Statement s = c.createStatement()) {
            return one(s, sql);
        }
    }

    private static List<String> rows(ExtraMariaDb server) throws SQLException {
        List<String> rows = new ArrayList<>();
        try (Connection c = server.rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT id, v FROM app.t ORDER BY id")) {
            while (rs.next()) {
                rows.add(rs.getInt(1) + ":" + rs.getString(2));
            }
        }
        return rows;
    }

    /** Statements a replica refused as a write that ran again on the primary ({@code primary:replica_refused}). */
    private static long routes() {
        ReadWriteCounts group = sluice.metricSources().readWrite().get(0);
        int index = group.routeReasons().indexOf("primary:replica_refused");
        return index < 0 ? -1 : group.routes(index);
    }

    /** Waits until the replica watch lets both replicas take reads, so that reads do go to them. */
    private static void awaitReplicasUsable() throws InterruptedException {
        ReadWriteCounts group = sluice.metricSources().readWrite().get(0);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!(group.usable(0) && group.usable(1))) {
            assertThat(System.nanoTime()).as("replicas never usable").isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @Test
    void aWriteReachingAReplicaThroughSluiceIsImpossibleEvenForAnAccountWithEveryPrivilege() throws Exception {
        awaitReplicasUsable();
        long refusedBefore = routes();
        try (Connection c = connect(); Statement s = c.createStatement()) {
            // an unqualified stored function that writes
            assertThat(one(s, "SELECT add_row('unqualified')")).isEqualTo("1");
            // a named lock behind a backquoted name: taken on the primary, where the session's locks live
            assertThat(one(s, "SELECT `GET_LOCK`('replica_writes', 0)")).isEqualTo("1");
            assertThat(one(servers.primary(), "SELECT IS_USED_LOCK('replica_writes')")).isNotNull();
            for (int i = 0; i < 2; i++) {
                assertThat(one(servers.replica(i), "SELECT IS_USED_LOCK('replica_writes')")).isNull();
            }
            assertThat(one(s, "SELECT RELEASE_LOCK('replica_writes')")).isEqualTo("1");
        }
        // A call of a stored function pins its session to the primary's connection for good (decision 135): the
        // reads below come from a session of their own, which a replica serves until one of them writes.
        try (Connection c = connect(); Statement s = c.createStatement()) {
            // a version comment MariaDB does not run: the DELETE outside it is the statement
            s.execute("/*!99999 SELECT 1 */ DELETE FROM t WHERE v = 'victim'");
            // a view that calls the writing function: known from the servers' catalogue, it goes to the primary
            assertThat(one(s, "SELECT * FROM adding_v")).isEqualTo("1");
        }
        try (Connection c = connect(); Statement s = c.createStatement()) { // the view's function pinned the one before
            // one the router cannot know: a replica read the replica refuses, run again on the primary
            assertThat(one(s, "SELECT * FROM mysql.sluice_unseen_v")).isEqualTo("1");
            // the client forces the read onto a replica, and the read writes
            assertThat(one(s, "/* sluice: replica */ SELECT * FROM mysql.sluice_unseen_v")).isEqualTo("1");
            assertThat(one(s, "/* sluice: replica */ SELECT add_row('hinted')")).isEqualTo("1");
        }
        try (Connection c = connect(); Statement s = c.createStatement()) { // add_row pinned the one before
            // the session asks for READ WRITE: the replicas' connections stay READ ONLY
            s.execute("SET SESSION TRANSACTION READ WRITE");
            s.execute("SET tx_read_only = 0");
            assertThat(one(s, "SELECT * FROM mysql.sluice_unseen_v")).isEqualTo("1");
        }
        // the same view through a server-side prepared statement: its execute runs again on the primary too
        try (Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), "app_rw",
                "useServerPrepStmts=true"), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
             java.sql.PreparedStatement view = c.prepareStatement(
                     "SELECT * FROM mysql.sluice_unseen_v WHERE added = ?")) {
            view.setInt(1, 1);
            try (ResultSet rs = view.executeQuery()) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getInt(1)).isEqualTo(1);
            }
        }
        try (Connection c = connect(); Statement s = c.createStatement()) {
            // the primary's next write, which a row written on a replica alone would break replication with
            s.execute("INSERT INTO t (v) VALUES ('after')");
        }
        String primaryPosition = servers.primaryPosition();
        for (int i = 0; i < 2; i++) {
            Map<String, String> status = servers.replicaStatus(i);
            assertThat(status.get("Slave_SQL_Running")).as("replica_" + i + " " + status).isEqualTo("Yes");
            assertThat(status.get("Last_SQL_Errno")).as("replica_" + i + " " + status).isEqualTo("0");
            servers.awaitApplied(i, primaryPosition);
            // nothing but the primary's transactions in the replica's binary log: no write of its own
            assertThat(one(servers.replica(i), "SELECT @@GLOBAL.gtid_binlog_pos")).isEqualTo(primaryPosition);
            assertThat(rows(servers.replica(i))).as("replica_" + i).isEqualTo(rows(servers.primary()));
        }
        assertThat(rows(servers.primary())).extracting(row -> row.substring(row.indexOf(':') + 1))
                .doesNotContain("victim")
                .containsSubsequence("unqualified", "from view", "from unseen view", "from unseen view", "hinted",
                        "from unseen view", "from unseen view", "after");
        assertThat(routes() - refusedBefore).as("reads the replicas refused, run again on the primary")
                .isEqualTo(4);
    }

    /**
     * Decision 204: in sjis {@code '予'} is 0x97 0x5C, which a reader of bytes takes for a backslash escaping the
     * closing quote, so the {@code GET_LOCK} after it for text, and the statement for a plain read. Before, the lock
     * was taken on a replica; a statement that is not all ASCII in such a set now goes to the primary.
     */
    @Test
    void aLockAfterSjisTextThatHidesItFromAByteReaderIsTakenOnThePrimary() throws Exception {
        awaitReplicasUsable();
        try (Connection c = JdbcDriver.MYSQL.connect(JdbcDriver.MYSQL.url("127.0.0.1", sluice.port(), "app_rw",
                "characterEncoding=SJIS"), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
             Statement s = c.createStatement()) {
            assertThat(one(s, "SELECT '予' AS x, GET_LOCK('replica_sjis', 0)")).isEqualTo("予");
            assertThat(one(servers.primary(), "SELECT IS_USED_LOCK('replica_sjis')")).isNotNull();
            for (int i = 0; i < 2; i++) {
                assertThat(one(servers.replica(i), "SELECT IS_USED_LOCK('replica_sjis')")).as("replica_" + i)
                        .isNull();
            }
        }
    }

    /**
     * Decision 204 in a group whose servers run different global {@code sql_mode}s: the replicas
     * {@code NO_BACKSLASH_ESCAPES}, the primary not. A session that set none runs each statement in the mode of the
     * server it is routed to, which is chosen after the statement is read, so Sluice reads it in both, and a statement
     * the modes read otherwise goes to the primary. Before, it read it in the first login value it had learnt, the
     * primary's: the text was one string to it, the statement went to a replica as a read, and the lock the replica's
     * mode made of it was taken there, on a connection of the replica's pool.
     */
    @Test
    void aStatementAReplicasSqlModeReadsOtherwiseRunsOnThePrimary() throws Exception {
        awaitReplicasUsable();
        List<String> globals = new ArrayList<>();
        for (ExtraMariaDb replica : servers.replicas()) {
            globals.add(one(replica, "SELECT @@GLOBAL.sql_mode"));
            replica.execute("SET GLOBAL sql_mode = CONCAT(@@GLOBAL.sql_mode, ',NO_BACKSLASH_ESCAPES')");
        }
        // a Sluice of its own: the replicas' connections log in with the mode
        try (Sluice modes = Sluice.start(servers.sluiceConfig(3000).pooling(PoolingConfig.defaults())
                .readWriteSplitting(servers.splitGroup("app_rw")).build());
             Connection c = JdbcDriver.MYSQL.connect(JdbcDriver.MYSQL.url("127.0.0.1", modes.port(), "app_rw", null),
                     ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
             Statement s = c.createStatement()) {
            Set<String> ports = new HashSet<>();
            for (int i = 0; i < 6; i++) {
                ports.add(one(s, "SELECT @@port")); // reads: both replicas' pools log in on the session's loop
            }
            assertThat(ports).as("reads on both replicas").hasSize(2);
            // In NO_BACKSLASH_ESCAPES: the string a\, then GET_LOCK('sluice_rm', 0) (the name in hex), then a comment.
            // In the default modes: one string, from a to the last quote.
            String sql = "SELECT 'a\\' AS x, GET_LOCK(0x736c756963655f726d, 0) AS l -- '";
            assertThat(one(s, sql)).as("run on the primary, in its modes")
                    .isEqualTo("a' AS x, GET_LOCK(0x736c756963655f726d, 0) AS l -- ");
            for (ExtraMariaDb server : List.of(servers.primary(), servers.replica(0), servers.replica(1))) {
                assertThat(one(server, "SELECT IS_USED_LOCK('sluice_rm')")).as("%s", server).isNull();
            }
        } finally {
            for (int i = 0; i < globals.size(); i++) {
                servers.replica(i).execute("SET GLOBAL sql_mode = '" + globals.get(i) + "'");
            }
        }
    }

    /**
     * A read that fails on a replica keeps its session there for its next statement (its error is the session's to
     * read, decision 135); a next statement that must run on the primary still gets there, and an answer (the
     * differential isolation test found a session waiting for ever).
     */
    @Test
    @org.junit.jupiter.api.Timeout(30)
    void aStatementForThePrimaryAfterAFailedReplicaReadIsAnswered() throws Exception {
        awaitReplicasUsable();
        try (Connection c = connect(); Statement s = c.createStatement()) {
            assertThatThrownBy(() -> one(s, "SELECT 1 / 7, CAST(0 AS UNSIGNED) - 1"))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1690));
            assertThat(one(s, "SELECT add_row('after an error')")).isEqualTo("1");
            assertThat(one(s, "SELECT COUNT(*) FROM t WHERE v = 'after an error'")).isEqualTo("1");
        }
    }

    @Test
    void aReadOnlyTransactionOnAReplicaCannotBeMadeReadWrite() throws Exception {
        awaitReplicasUsable();
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("SET SESSION TRANSACTION READ ONLY");
            s.execute("START TRANSACTION");
            String port = one(s, "SELECT @@port");
            assertThat(Integer.parseInt(port)).as("the read-only transaction runs on a replica")
                    .isNotEqualTo(servers.primary().port());
            // in a transaction the replica's refusal is the client's: it is not run again elsewhere
            assertThatThrownBy(() -> one(s, "SELECT * FROM mysql.sluice_unseen_v")).isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1792));
            // what would make the replica's connection read-write never runs there
            assertThatThrownBy(() -> s.execute("START TRANSACTION READ WRITE")).isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1792))
                    .hasMessageContaining("replica");
            assertThatThrownBy(() -> s.execute("SET SESSION TRANSACTION READ WRITE"))
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1792));
            assertThatThrownBy(() -> s.execute("INSERT INTO t (v) VALUES ('in read-only transaction')"))
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1792));
            s.execute("COMMIT");
            s.execute("SET SESSION TRANSACTION READ WRITE");
            s.execute("INSERT INTO t (v) VALUES ('after read-only')");
        }
        String primaryPosition = servers.primaryPosition();
        for (int i = 0; i < 2; i++) {
            servers.awaitApplied(i, primaryPosition);
            assertThat(one(servers.replica(i), "SELECT @@GLOBAL.gtid_binlog_pos")).isEqualTo(primaryPosition);
            assertThat(rows(servers.replica(i))).as("replica_" + i).isEqualTo(rows(servers.primary()));
        }
    }

    /**
     * A view known to run code (decision 200), read inside a read-only transaction on a replica: the replica refuses
     * it, and since the code may have left state there before its write failed, the session keeps that connection
     * until it ends; what would make it read-write is refused with the reason, and nothing reaches the replica.
     */
    @Test
    void aViewThatRunsCodeReadInAReadOnlyTransactionKeepsItsSessionOnTheReplica() throws Exception {
        awaitReplicasUsable();
        try (Connection c = connect(); Statement s = c.createStatement()) {
            s.execute("START TRANSACTION READ ONLY");
            assertThat(Integer.parseInt(one(s, "SELECT @@port"))).isNotEqualTo(servers.primary().port());
            assertThatThrownBy(() -> one(s, "SELECT * FROM adding_v")).isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1792));
            s.execute("COMMIT");
            assertThatThrownBy(() -> s.execute("SET SESSION TRANSACTION READ WRITE"))
                    .isInstanceOf(SQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getErrorCode()).isEqualTo(1792))
                    .hasMessageContaining("keeps that connection (stored_code");
        }
        String primaryPosition = servers.primaryPosition();
        for (int i = 0; i < 2; i++) {
            servers.awaitApplied(i, primaryPosition);
            assertThat(one(servers.replica(i), "SELECT @@GLOBAL.gtid_binlog_pos")).isEqualTo(primaryPosition);
        }
    }

    /**
     * A client's COM_RESET_CONNECTION pipelined behind a read goes to the server, on the read's replica connection,
     * and puts its access mode back to the server's default: the connection is READ ONLY again before it is pooled.
     */
    @Test
    void aResetPipelinedBehindAReadLeavesTheReplicasConnectionReadOnly() throws Exception {
        awaitReplicasUsable();
        try (RawMySqlClient raw = RawMySqlClient.login("127.0.0.1", sluice.port(), ProxyUnderTest.USER,
                ProxyUnderTest.PASSWORD, "app_rw")) {
            for (int round = 0; round < 6; round++) {
                // both commands in one write, so that the reset arrives while the read is outstanding
                raw.writeRaw(concat(frame(0x03, "SELECT @@port"), frame(0x1f, "")));
                assertThat(raw.readResult().rows()).hasSize(1);
                assertThat(raw.readPacket().isOk()).as("the reset's OK").isTrue();
            }
            // the session's next write: on the primary, or refused, never on the replica
            raw.query("INSERT INTO t (v) VALUES ('after reset')");
        }
        assertNoReplicaWritten();
        for (int i = 0; i < 12; i++) {
            try (Connection c = connect(); Statement s = c.createStatement()) {
                String where = one(s, "SELECT @@port");
                assertThat(one(s, "SELECT @@session.tx_read_only")).as("a replica's connection (" + where + ")")
                        .isEqualTo("1");
            }
        }
    }

    /** The replicas applied the primary's transactions and hold no write of their own; replication runs. */
    private static void assertNoReplicaWritten() throws SQLException {
        String primaryPosition = servers.primaryPosition();
        for (int i = 0; i < 2; i++) {
            Map<String, String> status = servers.replicaStatus(i);
            assertThat(status.get("Slave_SQL_Running")).as("replica_" + i + " " + status).isEqualTo("Yes");
            servers.awaitApplied(i, primaryPosition);
            assertThat(one(servers.replica(i), "SELECT @@GLOBAL.gtid_binlog_pos")).as("replica_" + i)
                    .isEqualTo(primaryPosition);
            assertThat(rows(servers.replica(i))).as("replica_" + i).isEqualTo(rows(servers.primary()));
        }
    }

    private static byte[] frame(int command, String sql) {
        byte[] text = sql.getBytes(StandardCharsets.UTF_8);
        int length = text.length + 1;
        byte[] frame = new byte[4 + length];
        frame[0] = (byte) length;
        frame[1] = (byte) (length >>> 8);
        frame[2] = (byte) (length >>> 16);
        frame[4] = (byte) command;
        System.arraycopy(text, 0, frame, 5, text.length);
        return frame;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(a);
        out.writeBytes(b);
        return out.toByteArray();
    }
}
