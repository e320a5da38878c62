package io.sluice.balancer.replication;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.balancer.replication.ReplicaEligibility.Verdict;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ReplicaEligibilityTest {

    private static final GtidPosition PRIMARY = GtidPosition.parse("0-1-100");
    private final ReplicaEligibility rules = new ReplicaEligibility(Duration.ofSeconds(10), 50);

    private static Map<String, String> status(String io, String sql, String seconds) {
        Map<String, String> row = new HashMap<>();
        row.put("Slave_IO_Running", io);
        row.put("Slave_SQL_Running", sql);
        row.put("Seconds_Behind_Master", seconds);
        row.put("Gtid_IO_Pos", "0-1-100");
        row.put("Last_SQL_Error", "");
        row.put("Last_IO_Error", "");
        return row;
    }

    private Verdict verdict(ReplicationReading reading) {
        return rules.judge(reading, PRIMARY).verdict();
    }

    @Test
    void eachReason() {
        assertThat(verdict(ReplicationReading.of("r", true, "0-1-100", "0-1-100", status("Yes", "Yes", "0"))))
                .isEqualTo(Verdict.USABLE);
        assertThat(verdict(ReplicationReading.unreachable("r", "connection refused"))).isEqualTo(Verdict.UNREACHABLE);
        assertThat(verdict(ReplicationReading.of("r", true, "0-1-100", "0-1-100", Map.of())))
                .isEqualTo(Verdict.NOT_A_REPLICA);
        assertThat(verdict(ReplicationReading.of("r", false, "0-1-100", "0-1-100", status("Yes", "Yes", "0"))))
                .isEqualTo(Verdict.WRITABLE);
        assertThat(verdict(ReplicationReading.of("r", true, "0-1-100", "0-1-100", status("Connecting", "Yes", null))))
                .isEqualTo(Verdict.IO_STOPPED);
        assertThat(verdict(ReplicationReading.of("r", true, "0-1-60", "0-1-60", status("Yes", "No", null))))
                .isEqualTo(Verdict.SQL_STOPPED);
        assertThat(verdict(ReplicationReading.of("r", true, "0-1-99", "0-1-99", status("Yes", "Yes", "11"))))
                .isEqualTo(Verdict.LAGGING);
        assertThat(verdict(ReplicationReading.of("r", true, "0-1-99", "0-1-99", status("Yes", "Yes", "10"))))
                .isEqualTo(Verdict.USABLE);
        assertThat(verdict(ReplicationReading.of("r", true, "0-1-49", "0-1-49", status("Yes", "Yes", "0"))))
                .isEqualTo(Verdict.LAGGING);
        assertThat(rules.judge(ReplicationReading.of("r", true, "0-1-49", "0-1-49", status("Yes", "Yes", "0")),
                PRIMARY).transactionsBehind()).isEqualTo(51);
    }

    @Test
    void mySqlColumnsReadAlike() {
        String uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
        Map<String, String> row = new HashMap<>();
        row.put("Replica_IO_Running", "Yes");
        row.put("Replica_SQL_Running", "No");
        row.put("Seconds_Behind_Source", null);
        row.put("Retrieved_Gtid_Set", uuid + ":1-10");
        row.put("Last_SQL_Error", "Duplicate entry");
        ReplicationReading reading = ReplicationReading.of("r", true, uuid + ":1-8", null, row);
        assertThat(reading.ioRunning()).isTrue();
        assertThat(reading.sqlRunning()).isFalse();
        assertThat(reading.secondsBehind()).isEqualTo(-1);
        assertThat(reading.received()).hasToString(uuid + ":1-10");
        ReplicaEligibility.Judgement judgement = new ReplicaEligibility(Duration.ofSeconds(5), Long.MAX_VALUE)
                .judge(reading, GtidPosition.parse(uuid + ":1-10"));
        assertThat(judgement.verdict()).isEqualTo(Verdict.SQL_STOPPED);
        assertThat(judgement.detail()).contains("Duplicate entry");
        assertThat(judgement.transactionsBehind()).isEqualTo(2);
    }

    @Test
    void aMySqlReplicaThatHasAppliedNothingIsCountedBehindByTransactionsNotByFlavour() {
        // A fresh MySQL replica's gtid_executed is empty text: read as a MySQL set, it lacks the primary's 5
        // transactions; read by GtidPosition.parse it would be MariaDB's empty position, never comparable.
        String uuid = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
        Map<String, String> row = new HashMap<>();
        row.put("Slave_IO_Running", "Yes");
        row.put("Slave_SQL_Running", "Yes");
        row.put("Seconds_Behind_Master", "0");
        row.put("Retrieved_Gtid_Set", "");
        ReplicationReading reading = ReplicationReading.ofMySql("r", true, "", row);
        assertThat(reading.applied()).isEqualTo(MySqlGtidSet.empty());
        assertThat(reading.received()).isEqualTo(MySqlGtidSet.empty());
        ReplicaEligibility.Judgement judgement = new ReplicaEligibility(Duration.ofSeconds(5), 10)
                .judge(reading, MySqlGtidSet.parse(uuid + ":1-5"));
        assertThat(judgement.transactionsBehind()).isEqualTo(5);
        assertThat(judgement.verdict()).isEqualTo(Verdict.USABLE);
        assertThat(ReplicationReading.ofMySql("p", false, "", Map.of()).applied()).isEqualTo(MySqlGtidSet.empty());
    }

    @Test
    void thePrimary() {
        assertThat(ReplicaEligibility.judgePrimary(ReplicationReading.of("p", false, "0-1-1", "", Map.of())).usable())
                .isTrue();
        assertThat(ReplicaEligibility.judgePrimary(ReplicationReading.of("p", true, "0-1-1", "", Map.of())).verdict())
                .isEqualTo(Verdict.READ_ONLY);
        assertThat(ReplicaEligibility.judgePrimary(ReplicationReading.unreachable("p", "x")).verdict())
                .isEqualTo(Verdict.UNREACHABLE);
        assertThat(rules.judge(List.of(ReplicationReading.unreachable("a", "x")), PRIMARY)).hasSize(1);
    }
}
