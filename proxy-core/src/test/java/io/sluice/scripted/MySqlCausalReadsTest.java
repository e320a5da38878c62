package io.sluice.scripted;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.balancer.replication.GtidPosition;
import io.sluice.balancer.replication.MySqlGtidSet;
import io.sluice.balancer.replication.ReplicaEligibility;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.config.CausalReads;
import io.sluice.protocol.Capabilities;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedSplitSluice;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Read/write splitting on MySQL 8.0 (issue #28, decision 107), with a scripted primary and replica that greet as
 * MySQL and answer with MySQL's bytes: the session trackers Sluice turns on ({@code session_track_gtids =
 * OWN_GTID}), a write's OK carrying SESSION_TRACK_GTIDS, the causal wait Sluice then sends to the replica
 * ({@code WAIT_FOR_EXECUTED_GTID_SET}) and what a timeout does, {@code GLOBAL}'s read of {@code gtid_executed},
 * what the client is shown of the tracker data, and the replica watch's MySQL queries. No MySQL server is installable
 * where this is built: these are the protocol-level proof, not a run against a real server.
 */
@ExtendWith(LeakDetection.class)
class MySqlCausalReadsTest {
    private static final String UUID = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    private static final String INSERT = "INSERT INTO t VALUES (1)";
    private static final String READ = "SELECT v FROM t";
    private static final int WROTE = MySqlWire.SERVER_STATUS_AUTOCOMMIT | MySqlWire.SERVER_SESSION_STATE_CHANGED;

    @Test
    void aReadAfterTheSessionsWriteWaitsOnTheReplicaForTheGtidTheWritesOkReported() {
        try (ScriptedSplitSluice sluice = new ScriptedSplitSluice(CausalReads.LOCAL, Duration.ofMillis(250))) {
            sluice.primary().answers = (sql, eof) -> sql.equals(INSERT) ? List.of(committed(UUID + ":23")) : null;
            sluice.replica().answers = (sql, eof) -> sql.startsWith("SELECT WAIT_FOR_EXECUTED_GTID_SET")
                    ? oneValue(eof, "WAIT_FOR_EXECUTED_GTID_SET", "0")
                    : sql.equals(READ) ? oneValue(eof, "v", "from the replica") : null;
            ScriptedClient client = sluice.login(ScriptedClient.CAPABILITIES);

            sluice.query(client, INSERT);
            // The client negotiated CLIENT_SESSION_TRACK, but its own connection to MySQL 8.0 would track no GTIDs
            // (session_track_gtids is OFF by default): the entry Sluice asked for is not shown.
            assertThat(client.expectPacket().payload()).as("the write's OK as the client sees it")
                    .isEqualTo(MySqlWire.ok(1, 0, MySqlWire.SERVER_STATUS_AUTOCOMMIT, 0, ""));
            assertThat(sluice.primary().received("SET SESSION session_track_system_variables"))
                    .as("the trackers Sluice turns on on MySQL").isNotEmpty()
                    .allMatch(sql -> sql.endsWith(", session_track_gtids = OWN_GTID"));

            sluice.query(client, READ);
            client.expectPayloads(oneValue(true, "v", "from the replica")).expectNothing();
            List<String> replica = sluice.replica().received();
            String wait = "SELECT WAIT_FOR_EXECUTED_GTID_SET('" + UUID + ":23', 1)";
            assertThat(replica).as("what the replica received").contains(wait, READ);
            assertThat(replica.indexOf(wait)).as("the wait runs before the read").isLessThan(replica.indexOf(READ));
            assertThat(sluice.primary().received()).doesNotContain(READ);
        }
    }

    @Test
    void aReplicaThatTimesOutSendsTheReadToThePrimary() {
        try (ScriptedSplitSluice sluice = new ScriptedSplitSluice(CausalReads.LOCAL, Duration.ofSeconds(1))) {
            sluice.primary().answers = (sql, eof) -> sql.equals(INSERT) ? List.of(committed(UUID + ":7"))
                    : sql.equals(READ) ? oneValue(eof, "v", "from the primary") : null;
            sluice.replica().answers = (sql, eof) -> sql.startsWith("SELECT WAIT_FOR_EXECUTED_GTID_SET")
                    ? oneValue(eof, "WAIT_FOR_EXECUTED_GTID_SET", "1") // MySQL's timeout
                    : null; // the read must not come here
            ScriptedClient client = sluice.login(ScriptedClient.CAPABILITIES);
            sluice.query(client, INSERT);
            client.expectPacket();

            sluice.query(client, READ);
            client.expectPayloads(oneValue(true, "v", "from the primary")).expectNothing();
            assertThat(sluice.replica().received()).contains("SELECT WAIT_FOR_EXECUTED_GTID_SET('" + UUID + ":7', 1)")
                    .doesNotContain(READ);
            assertThat(sluice.primary().received()).contains(READ);
        }
    }

    @Test
    void aClientWithoutSessionTrackingGetsPlainOksAndItsReadsStillWait() {
        try (ScriptedSplitSluice sluice = new ScriptedSplitSluice(CausalReads.LOCAL, Duration.ofSeconds(1))) {
            sluice.primary().answers = (sql, eof) -> sql.equals(INSERT) ? List.of(committed(UUID + ":41")) : null;
            sluice.replica().answers = (sql, eof) -> sql.startsWith("SELECT WAIT_FOR_EXECUTED_GTID_SET")
                    ? oneValue(eof, "WAIT_FOR_EXECUTED_GTID_SET", "0")
                    : sql.equals(READ) ? oneValue(eof, "v", "from the replica") : null;
            ScriptedClient client = sluice.login(ScriptedClient.CAPABILITIES & ~Capabilities.CLIENT_SESSION_TRACK);

            sluice.query(client, INSERT);
            // As MySQL writes an OK for a client without CLIENT_SESSION_TRACK: no state flag, no tracker data.
            assertThat(client.expectPacket().payload())
                    .isEqualTo(MySqlWire.ok(1, 0, MySqlWire.SERVER_STATUS_AUTOCOMMIT, 0, ""));
            sluice.query(client, READ);
            client.expectPayloads(oneValue(true, "v", "from the replica")).expectNothing();
            assertThat(sluice.replica().received()).contains("SELECT WAIT_FOR_EXECUTED_GTID_SET('" + UUID + ":41', 1)");
        }
    }

    @Test
    void aClientThatTurnsGtidTrackingOffIsPinnedRatherThanReadStaleData() {
        try (ScriptedSplitSluice sluice = new ScriptedSplitSluice(CausalReads.LOCAL, Duration.ofSeconds(1))) {
            String off = "SET SESSION session_track_gtids = OFF";
            sluice.primary().answers = (sql, eof) -> sql.equals(off)
                    ? List.of(MySqlWire.okWithSessionState(0x00, 0, 0, WROTE, 0, "",
                            MySqlWire.systemVariableChange("session_track_gtids", "OFF")))
                    : sql.equals(READ) ? oneValue(eof, "v", "from the primary") : null;
            sluice.replica().answers = (sql, eof) -> null; // nothing may run there any more
            ScriptedClient client = sluice.login(ScriptedClient.CAPABILITIES);

            sluice.query(client, off);
            client.expectOk();
            // Its connection no longer reports the session's GTIDs: a read on a replica could miss its next write.
            sluice.query(client, READ);
            client.expectPayloads(oneValue(true, "v", "from the primary")).expectNothing();
            assertThat(sluice.replica().received()).doesNotContain(READ);
        }
    }

    @Test
    void causalReadsGlobalWaitsForThePrimarysGtidExecuted() {
        String other = "5d2f14c4-8a1b-11ee-b7a1-0242ac120002";
        try (ScriptedSplitSluice sluice = new ScriptedSplitSluice(CausalReads.GLOBAL, Duration.ofSeconds(2))) {
            // MySQL writes a set of several sources with a line break after each comma.
            sluice.primary().answers = (sql, eof) -> sql.equals("SELECT @@GLOBAL.gtid_executed")
                    ? oneValue(eof, "@@GLOBAL.gtid_executed", other + ":1-7,\n" + UUID + ":1-30") : null;
            sluice.replica().answers = (sql, eof) -> sql.startsWith("SELECT WAIT_FOR_EXECUTED_GTID_SET")
                    ? oneValue(eof, "WAIT_FOR_EXECUTED_GTID_SET", "0")
                    : sql.equals(READ) ? oneValue(eof, "v", "from the replica") : null;
            ScriptedClient client = sluice.login(ScriptedClient.CAPABILITIES);

            sluice.query(client, READ);
            client.expectPayloads(oneValue(true, "v", "from the replica")).expectNothing();
            assertThat(sluice.primary().received()).contains("SELECT @@GLOBAL.gtid_executed")
                    .doesNotContain("SELECT @@GLOBAL.gtid_binlog_pos");
            assertThat(sluice.replica().received()).containsSubsequence(
                    "SELECT WAIT_FOR_EXECUTED_GTID_SET('" + UUID + ":1-30," + other + ":1-7', 2)", READ);
        }
    }

    @Test
    void theReplicaWatchReadsMySqlsVariablesAndFallsBackToShowSlaveStatus() {
        try (ScriptedSplitSluice sluice = new ScriptedSplitSluice(CausalReads.LOCAL, Duration.ofSeconds(1))) {
            sluice.primary().answers = (sql, eof) -> sql.equals(ReplicationReading.MYSQL_VARIABLES)
                    ? variables(eof, "0", "0", UUID + ":1-30")
                    : sql.equals(ReplicationReading.REPLICA_STATUS) ? noRows(eof, "Replica_IO_Running") : null;
            // MySQL 8.0.21: no SHOW REPLICA STATUS yet; its columns keep the Slave_/Master names.
            sluice.replica().answers = (sql, eof) -> sql.equals(ReplicationReading.MYSQL_VARIABLES)
                    ? variables(eof, "1", "1", UUID + ":1-28")
                    : sql.equals(ReplicationReading.REPLICA_STATUS) ? List.of(MySqlWire.err(1064, "42000",
                            "You have an error in your SQL syntax; ... near 'REPLICA STATUS' at line 1"))
                    : sql.equals(ReplicationReading.SLAVE_STATUS) ? slaveStatus(eof) : null;

            CompletableFuture<ReplicationReading> primaryRead = sluice.pool(ScriptedSplitSluice.PRIMARY)
                    .ownConnections().readReplication(5_000);
            CompletableFuture<ReplicationReading> replicaRead = sluice.pool(ScriptedSplitSluice.REPLICA)
                    .ownConnections().readReplication(5_000);
            sluice.pump();
            ReplicationReading primary = primaryRead.getNow(null);
            ReplicationReading replica = replicaRead.getNow(null);
            assertThat(primary).isNotNull();
            assertThat(replica).isNotNull();

            assertThat(primary.reachable()).isTrue();
            assertThat(primary.replica()).isFalse();
            assertThat(primary.readOnly()).isFalse();
            assertThat(primary.applied()).isEqualTo(MySqlGtidSet.parse(UUID + ":1-30"));
            assertThat(ReplicaEligibility.judgePrimary(primary).usable()).isTrue();

            assertThat(sluice.replica().received()).containsSubsequence(ReplicationReading.MYSQL_VARIABLES,
                    ReplicationReading.REPLICA_STATUS, ReplicationReading.SLAVE_STATUS);
            assertThat(replica.reachable()).as(replica.error()).isTrue();
            assertThat(replica.replica()).isTrue();
            assertThat(replica.readOnly()).isTrue();
            assertThat(replica.ioRunning()).isTrue();
            assertThat(replica.sqlRunning()).isTrue();
            assertThat(replica.secondsBehind()).isEqualTo(3);
            assertThat(replica.applied()).isEqualTo(MySqlGtidSet.parse(UUID + ":1-28"));
            assertThat(replica.received()).isEqualTo(MySqlGtidSet.parse(UUID + ":1-30"));

            GtidPosition primaryPosition = primary.applied();
            assertThat(new ReplicaEligibility(Duration.ofSeconds(10), Long.MAX_VALUE).judge(replica, primaryPosition))
                    .satisfies(j -> {
                        assertThat(j.verdict()).isEqualTo(ReplicaEligibility.Verdict.USABLE);
                        assertThat(j.transactionsBehind()).isEqualTo(2);
                    });
            assertThat(new ReplicaEligibility(Duration.ofSeconds(10), 1).judge(replica, primaryPosition).verdict())
                    .isEqualTo(ReplicaEligibility.Verdict.LAGGING);
        }
    }

    /** The OK MySQL 8.0 sends a client with CLIENT_SESSION_TRACK for a commit under OWN_GTID. */
    private static byte[] committed(String gtid) {
        return MySqlWire.okWithSessionState(0x00, 1, 0, WROTE, 0, "", MySqlWire.gtidsChange(gtid));
    }

    private static List<byte[]> oneValue(boolean deprecateEof, String column, String value) {
        return MySqlWire.resultSet(deprecateEof, List.of(MySqlWire.columnDefinition(column,
                MySqlWire.MYSQL_TYPE_VAR_STRING)), List.of(MySqlWire.textRow(value)),
                MySqlWire.SERVER_STATUS_AUTOCOMMIT);
    }

    private static List<byte[]> variables(boolean deprecateEof, String readOnly, String superReadOnly,
            String gtidExecuted) {
        return MySqlWire.resultSet(deprecateEof, List.of(
                MySqlWire.columnDefinition("@@GLOBAL.read_only", MySqlWire.MYSQL_TYPE_LONG),
                MySqlWire.columnDefinition("@@GLOBAL.super_read_only", MySqlWire.MYSQL_TYPE_LONG),
                MySqlWire.columnDefinition("@@GLOBAL.gtid_executed", MySqlWire.MYSQL_TYPE_VAR_STRING)),
                List.of(MySqlWire.textRow(readOnly, superReadOnly, gtidExecuted)), MySqlWire.SERVER_STATUS_AUTOCOMMIT);
    }

    private static List<byte[]> noRows(boolean deprecateEof, String column) {
        return MySqlWire.resultSet(deprecateEof, List.of(MySqlWire.columnDefinition(column,
                MySqlWire.MYSQL_TYPE_VAR_STRING)), List.of(), MySqlWire.SERVER_STATUS_AUTOCOMMIT);
    }

    /** SHOW SLAVE STATUS as MySQL 8.0.21 names its columns (a few of its 60-odd). */
    private static List<byte[]> slaveStatus(boolean deprecateEof) {
        String[][] columns = {{"Slave_IO_State", "Waiting for master to send event"}, {"Slave_IO_Running", "Yes"},
            {"Slave_SQL_Running", "Yes"}, {"Last_IO_Error", ""}, {"Last_SQL_Error", ""},
            {"Seconds_Behind_Master", "3"}, {"Retrieved_Gtid_Set", UUID + ":1-30"},
            {"Executed_Gtid_Set", UUID + ":1-28"}};
        List<byte[]> definitions = new ArrayList<>();
        String[] values = new String[columns.length];
        for (int i = 0; i < columns.length; i++) {
            definitions.add(MySqlWire.columnDefinition(columns[i][0], MySqlWire.MYSQL_TYPE_VAR_STRING));
            values[i] = columns[i][1];
        }
        return MySqlWire.resultSet(deprecateEof, definitions, List.of(MySqlWire.textRow(values)),
                MySqlWire.SERVER_STATUS_AUTOCOMMIT);
    }
}
