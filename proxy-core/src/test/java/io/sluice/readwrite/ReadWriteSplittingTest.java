package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.ReadWriteCounts;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.ops.SluiceServer;
import io.sluice.testing.AdminClient;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.ReplicationGroup;
import io.sluice.testing.TestMariaDb;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Read/write splitting end to end (issue #28): a MariaDB primary with two GTID replicas behind one Sluice port.
 * Where each statement ran is read on the servers themselves ({@code @@port}, and {@code Com_select} /
 * {@code Com_insert} counters), not on Sluice's own counters.
 */
@Tag("server")
class ReadWriteSplittingTest {
    private static ReplicationGroup servers;
    private static Sluice sluice;

    @BeforeAll
    static void start() {
        servers = ReplicationGroup.start("split");
        servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
                "INSERT INTO app.t VALUES (0, 0)");
        servers.awaitCaughtUp();
        ProxyConfig config = servers.sluiceConfig(3000)
                .pooling(PoolingConfig.defaults())
                .readWriteSplitting(servers.splitGroup("app_rw"))
                .build();
        sluice = Sluice.start(config);
    }

    private static DataSourceConfig dataSource(String name, ExtraMariaDb server) {
        return new DataSourceConfig(name, server.jdbcUrl("app"), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD,
                3000, 60_000, 600_000, 8, 0, 1, false);
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

    private static Connection connect(String database) throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), database, ""),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    private static String role(int port) {
        if (port == servers.primary().port()) {
            return "primary";
        }
        return port == servers.replica(0).port() ? "replica_0" : port == servers.replica(1).port() ? "replica_1"
                : "port " + port;
    }

    private static String ranOn(Connection c, String select) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(select)) {
            rs.next();
            return role(rs.getInt(1));
        }
    }

    /**
     * Waits until the replica watch has had replica {@code index} as {@code usable} for three of its 200 ms rounds in
     * a row. Once is not enough: a test that stopped and restarted a replica's applier within one round leaves a
     * round in flight that saw it stopped, and that round's verdict lands after the replica already looked usable.
     */
    private static void awaitUsable(int index, boolean usable) throws InterruptedException {
        ReadWriteCounts group = sluice.metricSources().readWrite().get(0);
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        long steadySince = -1;
        while (true) {
            long now = System.nanoTime();
            if (group.usable(index) != usable) {
                steadySince = -1;
            } else if (steadySince < 0) {
                steadySince = now;
            } else if (now - steadySince >= java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(600)) {
                return;
            }
            assertThat(now).as("replica " + index + " never steadily usable=" + usable).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @Test
    void aReplicaThatStopsReplicatingTakesNoReadsUntilItResumes() throws Exception {
        awaitUsable(0, true);
        awaitUsable(1, true);
        try (Connection c = connect("app_rw")) {
            servers.stopReplication(0);
            try {
                awaitUsable(0, false);
                for (int i = 0; i < 4; i++) {
                    assertThat(ranOn(c, "SELECT @@port")).isEqualTo("replica_1");
                }
            } finally {
                servers.startReplication(0);
            }
            awaitUsable(0, true);
            Map<String, Integer> reads = new HashMap<>();
            for (int i = 0; i < 4; i++) {
                reads.merge(ranOn(c, "SELECT @@port"), 1, Integer::sum);
            }
            assertThat(reads).containsOnlyKeys("replica_0", "replica_1");
        }
    }

    @Test
    void readsGoToTheReplicasInTurnAndWritesToThePrimary() throws Exception {
        awaitUsable(0, true);
        awaitUsable(1, true);
        try (Connection c = connect("app_rw"); Statement s = c.createStatement()) {
            Map<String, Integer> reads = new HashMap<>();
            for (int i = 0; i < 6; i++) {
                reads.merge(ranOn(c, "SELECT @@port"), 1, Integer::sum);
            }
            assertThat(reads).isEqualTo(Map.of("replica_0", 3, "replica_1", 3));
            long insertsBefore = status(servers.primary(), "Com_insert");
            s.executeUpdate("INSERT INTO t VALUES (1, 1)");
            assertThat(status(servers.primary(), "Com_insert")).isEqualTo(insertsBefore + 1);
            // Locking reads, and everything in a read-write transaction, run on the primary.
            assertThat(ranOn(c, "SELECT @@port FROM t WHERE id = 1 FOR UPDATE")).isEqualTo("primary");
            c.setAutoCommit(false);
            assertThat(ranOn(c, "SELECT @@port")).isEqualTo("primary");
            s.executeUpdate("UPDATE t SET v = 2 WHERE id = 1");
            assertThat(ranOn(c, "SELECT @@port")).isEqualTo("primary");
            c.commit();
            c.setAutoCommit(true);
            assertThat(ranOn(c, "SELECT @@port")).startsWith("replica_");
            // A hint sends a read to the primary.
            assertThat(ranOn(c, "/* sluice: primary */ SELECT @@port")).isEqualTo("primary");
        }
    }

    /**
     * A read the client sends while Sluice still reads back what its previous statement changed (the collation a
     * {@code SET NAMES ... COLLATE} set, on the primary) waits for that read-back and is then routed like any other
     * read: to a replica, not onto the connection the SET ran on. Forty rounds, since the read lands inside the
     * read-back in only some of them (about one in four here); before, those ran on the primary.
     */
    @Test
    void aReadRightAfterASetThatSluiceReadsBackIsRoutedToo() throws Exception {
        awaitUsable(0, true);
        awaitUsable(1, true);
        try (Connection c = connect("app_rw"); Statement s = c.createStatement()) {
            Map<String, Integer> reads = new HashMap<>();
            for (int i = 0; i < 40; i++) {
                s.execute("SET NAMES utf8mb4 COLLATE " + (i % 2 == 0 ? "utf8mb4_bin" : "utf8mb4_unicode_ci"));
                reads.merge(ranOn(c, "SELECT @@port"), 1, Integer::sum);
            }
            assertThat(reads).containsOnlyKeys("replica_0", "replica_1");
            try (ResultSet rs = s.executeQuery("SELECT @@collation_connection")) {
                rs.next();
                assertThat(rs.getString(1)).isEqualTo("utf8mb4_unicode_ci"); // read back and carried to the replica
            }
        }
    }

    /**
     * A client that pipelines (Vert.x and R2DBC clients may) sends a read, then a write and a read behind it, before
     * the first answer: the write waits until the read on the replica is answered and then runs on the primary, and
     * the read behind it is routed again (to a replica, reading the write). Before, the write followed the read onto
     * the replica's connection, where the root login's SUPER even let it in.
     */
    @Test
    void aWritePipelinedBehindAReadRunsOnThePrimary() throws Exception {
        awaitUsable(0, true);
        awaitUsable(1, true);
        try (RawMySqlClient client = RawMySqlClient.login("127.0.0.1", sluice.port(), ProxyUnderTest.USER,
                ProxyUnderTest.PASSWORD, "app_rw")) {
            Map<String, Integer> reads = new HashMap<>();
            for (int id = 1000; id < 1020; id++) {
                client.sendQuery("SELECT @@port");
                client.sendQuery("INSERT INTO t VALUES (" + id + ", @@port)");
                client.sendQuery("SELECT @@port, COUNT(*) FROM t WHERE id = " + id);
                RawMySqlClient.QueryResult read = client.readResult();
                RawMySqlClient.QueryResult write = client.readResult();
                RawMySqlClient.QueryResult readBack = client.readResult();
                reads.merge(role(Integer.parseInt(read.rows().get(0).get(0))), 1, Integer::sum);
                assertThat(write.end().isOk()).as("insert %d: %s", id, write.end()).isTrue();
                assertThat(readBack.rows().get(0).get(1)).as("row %d read back", id).isEqualTo("1");
                reads.merge(role(Integer.parseInt(readBack.rows().get(0).get(0))), 1, Integer::sum);
            }
            assertThat(reads).containsOnlyKeys("replica_0", "replica_1");
        }
        try (Connection primary = servers.primary().rootConnection(); Statement s = primary.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM app.t WHERE id >= 1000 AND id < 1020 AND v = "
                     + servers.primary().port())) {
            rs.next();
            assertThat(rs.getInt(1)).as("inserts that ran on the primary").isEqualTo(20);
        }
    }

    /**
     * The same with prepared statements: an execute of an INSERT pipelined behind an execute of a SELECT (which goes to
     * a replica, prepared again there) waits and runs on the primary, where its statement is prepared on first use.
     */
    @Test
    void aPreparedWritePipelinedBehindAPreparedReadRunsOnThePrimary() throws Exception {
        awaitUsable(0, true);
        awaitUsable(1, true);
        try (RawMySqlClient client = RawMySqlClient.login("127.0.0.1", sluice.port(), ProxyUnderTest.USER,
                ProxyUnderTest.PASSWORD, "app_rw")) {
            int read = prepare(client, "SELECT @@port FROM t LIMIT 1");
            for (int id = 1100; id < 1110; id++) {
                int write = prepare(client, "INSERT INTO t VALUES (" + id + ", @@port)");
                execute(client, read);
                execute(client, write);
                RawMySqlClient.Packet readEnd = readExecuteAnswer(client);
                assertThat(readEnd.isErr()).as("read %d: %s", id, readEnd).isFalse();
                RawMySqlClient.Packet writeEnd = readExecuteAnswer(client);
                assertThat(writeEnd.isOk()).as("insert %d: %s", id, writeEnd).isTrue();
            }
        }
        try (Connection primary = servers.primary().rootConnection(); Statement s = primary.createStatement();
             ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM app.t WHERE id >= 1100 AND id < 1110 AND v = "
                     + servers.primary().port())) {
            rs.next();
            assertThat(rs.getInt(1)).as("inserts that ran on the primary").isEqualTo(10);
        }
    }

    /** COM_STMT_PREPARE, its answer read whole: the statement id. */
    private static int prepare(RawMySqlClient client, String sql) throws java.io.IOException {
        client.sendCommand(MySqlWire.COM_STMT_PREPARE, sql.getBytes(StandardCharsets.UTF_8));
        RawMySqlClient.Packet ok = client.readPacket();
        assertThat(ok.firstByte()).as("prepare %s: %s", sql, ok).isZero();
        byte[] p = ok.payload();
        int columns = (p[5] & 0xFF) | (p[6] & 0xFF) << 8;
        int params = (p[7] & 0xFF) | (p[8] & 0xFF) << 8;
        for (int definitions : new int[] {params, columns}) {
            if (definitions > 0) {
                for (int i = 0; i <= definitions; i++) {
                    client.readPacket(); // the definitions and their EOF (no CLIENT_DEPRECATE_EOF)
                }
            }
        }
        return (p[1] & 0xFF) | (p[2] & 0xFF) << 8 | (p[3] & 0xFF) << 16 | (p[4] & 0xFF) << 24;
    }

    /** COM_STMT_EXECUTE of a statement without parameters, not waiting for the answer. */
    private static void execute(RawMySqlClient client, int statementId) throws java.io.IOException {
        client.sendCommand(MySqlWire.COM_STMT_EXECUTE, new byte[] {(byte) statementId, (byte) (statementId >> 8),
                (byte) (statementId >> 16), (byte) (statementId >> 24), 0, 1, 0, 0, 0});
    }

    /** An execute's answer read whole: its OK or ERR, or the EOF that ends its (binary) rows. */
    private static RawMySqlClient.Packet readExecuteAnswer(RawMySqlClient client) throws java.io.IOException {
        RawMySqlClient.Packet packet = client.readPacket();
        if (packet.isOk() || packet.isErr()) {
            return packet;
        }
        for (int eofs = 0; eofs < 2; ) {
            packet = client.readPacket();
            if (packet.isErr()) {
                return packet;
            }
            eofs += packet.isEof() ? 1 : 0;
        }
        return packet;
    }

    @Test
    void preparedStatementsRunWhereTheirSqlWould() throws Exception {
        awaitUsable(0, true);
        awaitUsable(1, true);
        try (Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), "app_rw",
                "useServerPrepStmts=true"), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
             java.sql.PreparedStatement port = c.prepareStatement("SELECT @@port FROM t WHERE id > ? LIMIT 1");
             java.sql.PreparedStatement insert = c.prepareStatement("INSERT INTO t VALUES (?, ?)")) {
            Map<String, Integer> reads = new HashMap<>();
            for (int i = 0; i < 4; i++) {
                port.setInt(1, -1);
                try (ResultSet rs = port.executeQuery()) {
                    if (rs.next()) {
                        reads.merge(role(rs.getInt(1)), 1, Integer::sum);
                    }
                }
            }
            long insertsBefore = status(servers.primary(), "Com_stmt_execute");
            insert.setInt(1, 300);
            insert.setInt(2, 300);
            insert.executeUpdate();
            assertThat(status(servers.primary(), "Com_stmt_execute")).isEqualTo(insertsBefore + 1);
            port.setInt(1, 299);
            try (ResultSet rs = port.executeQuery()) {
                assertThat(rs.next()).as("the row just inserted, read back from a replica").isTrue();
            }
            assertThat(reads).containsOnlyKeys("replica_0", "replica_1");
        }
    }

    @Test
    void aSessionReadsItsOwnWriteAtOnceEvenFromALaggingReplica() throws Exception {
        try (Connection c = connect("app_rw"); Statement s = c.createStatement()) {
            s.executeUpdate("DELETE FROM t WHERE id >= 100");
            for (int i = 100; i < 120; i++) {
                s.executeUpdate("INSERT INTO t VALUES (" + i + ", " + i + ")");
                try (ResultSet rs = s.executeQuery("SELECT v, @@port FROM t WHERE id = " + i)) {
                    assertThat(rs.next()).as("row " + i + " read back").isTrue();
                    assertThat(rs.getInt(1)).isEqualTo(i);
                }
            }
            // A replica that stopped applying: the causal wait times out there and the read goes to the primary.
            servers.stopApplying(0);
            servers.stopApplying(1);
            try {
                s.executeUpdate("INSERT INTO t VALUES (200, 200)");
                try (ResultSet rs = s.executeQuery("SELECT v, @@port FROM t WHERE id = 200")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(role(rs.getInt(2))).isEqualTo("primary");
                }
            } finally {
                servers.startApplying(0);
                servers.startApplying(1);
            }
        }
        ReadWriteCounts counts = sluice.metricSources().readWrite().get(0);
        assertThat(counts.group()).isEqualTo("app_rw");
        assertThat(counts.causalWaits(counts.causalOutcomes().indexOf("reached"))).isPositive();
        assertThat(counts.causalWaits(counts.causalOutcomes().indexOf("timed_out"))).isPositive();
        assertThat(counts.routes(counts.routeReasons().indexOf("primary:causal_timeout"))).isPositive();
        assertThat(counts.routes(counts.routeReasons().indexOf("replica"))).isPositive();
    }

    @Test
    void theAdminApiSaysWhereAStatementWouldGoAndWhy() throws Exception {
        try (SluiceServer withAdmin = SluiceServer.start(ProxyConfig.builder().port(0)
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .dataSource(dataSource("primary", servers.primary()))
                .admin("127.0.0.1", 0, null).build())) {
            AdminClient admin = new AdminClient("127.0.0.1", withAdmin.adminPort());
            String read = admin.get("/api/readwrite/route?sql="
                    + URLEncoder.encode("SELECT * FROM t", StandardCharsets.UTF_8)).body();
            assertThat(read).contains("\"route\":\"replica\"").contains("\"reason\":\"replica\"");
            String locking = admin.get("/api/readwrite/route?sql="
                    + URLEncoder.encode("SELECT * FROM t FOR UPDATE", StandardCharsets.UTF_8)).body();
            assertThat(locking).contains("\"route\":\"primary\"")
                    .contains("\"reason\":\"primary:locking_read\"");
            assertThat(admin.get("/api/readwrite/route").status()).isEqualTo(400);
        }
    }

    @Test
    void aClientWithoutSessionTrackingIsSplitToo() throws Exception {
        awaitUsable(0, true);
        awaitUsable(1, true);
        // MySQL Connector/J with a default URL does not ask for CLIENT_SESSION_TRACK: Sluice's connections do.
        try (Connection c = JdbcDriver.MYSQL.connect(JdbcDriver.MYSQL.url("127.0.0.1", sluice.port(), "app_rw", ""),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD); Statement s = c.createStatement()) {
            s.execute("SET SESSION sql_mode = 'ANSI_QUOTES'");
            Map<String, Integer> reads = new HashMap<>();
            for (int i = 0; i < 4; i++) {
                try (ResultSet rs = s.executeQuery("SELECT @@port, @@SESSION.sql_mode")) {
                    rs.next();
                    reads.merge(role(rs.getInt(1)), 1, Integer::sum);
                    assertThat(rs.getString(2)).isEqualTo("ANSI_QUOTES");
                }
            }
            assertThat(reads).containsOnlyKeys("replica_0", "replica_1");
        }
    }

    @Test
    void aSessionOutsideTheGroupUsesThePrimaryOnly() throws Exception {
        try (Connection c = connect("app")) {
            for (int i = 0; i < 4; i++) {
                assertThat(ranOn(c, "SELECT @@port")).isEqualTo("primary");
            }
        }
    }

    private static long status(ExtraMariaDb server, String name) throws SQLException {
        try (Connection c = server.rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE '" + name + "'")) {
            rs.next();
            return rs.getLong(2);
        }
    }
}
