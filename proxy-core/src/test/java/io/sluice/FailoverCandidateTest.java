package io.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.balancer.replication.ReplicationReading;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The candidate of an unplanned failover: the replica that applied the most, the first listed on a tie. */
class FailoverCandidateTest {

    private static ReplicationReading replica(String server, String applied) {
        return ReplicationReading.of(server, true, applied, applied, Map.of("Slave_IO_Running", "Connecting",
                "Slave_SQL_Running", "Yes", "Gtid_IO_Pos", applied));
    }

    @Test
    void theMostAdvancedReplicaIsChosen() {
        assertThat(FailoverRun.mostAdvanced(List.of(replica("r0", "0-1-40"), replica("r1", "0-1-42"))).server())
                .isEqualTo("r1");
        assertThat(FailoverRun.mostAdvanced(List.of(replica("r0", "0-1-42"), replica("r1", "0-1-40"))).server())
                .isEqualTo("r0");
    }

    @Test
    void aTieGoesToTheFirstInConfigurationOrder() {
        assertThat(FailoverRun.mostAdvanced(List.of(replica("r1", "0-1-42"), replica("r0", "0-1-42"))).server())
                .isEqualTo("r1");
    }

    @Test
    void noReplicaNoCandidate() {
        assertThat(FailoverRun.mostAdvanced(List.of())).isNull();
    }

    @Test
    void theLockNameFitsTheServersLimit() {
        assertThat(FailoverRun.lockName("app_rw")).isEqualTo("sluice_failover.app_rw");
        assertThat(FailoverRun.lockName("g".repeat(100))).hasSize(64);
    }
}
