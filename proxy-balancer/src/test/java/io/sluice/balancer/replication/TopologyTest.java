package io.sluice.balancer.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TopologyTest {
    private static final List<String> SERVERS = List.of("ds_0", "ds_1", "ds_2");

    private static ReplicationReading writable(String server) {
        return ReplicationReading.of(server, false, "0-1-10", "", Map.of());
    }

    private static ReplicationReading readOnly(String server) {
        return ReplicationReading.of(server, true, "0-1-10", "0-1-10", Map.of("Slave_IO_Running", "Yes",
                "Slave_SQL_Running", "Yes", "Seconds_Behind_Master", "0"));
    }

    private static ReplicationReading down(String server) {
        return ReplicationReading.unreachable(server, "connection refused");
    }

    @Test
    void aFollowingGroupTakesNoWriteBeforeItsServersWereRead() {
        Topology topology = new Topology("g", SERVERS, "ds_0", true);
        assertThat(topology.roles().state()).isEqualTo(Roles.State.NO_PRIMARY);
        assertThat(topology.roles().takesWrites()).isFalse();
        assertThat(topology.roles().primary()).isEqualTo("ds_0");
    }

    @Test
    void aFixedGroupKeepsItsPrimaryWhateverTheReadingsSay() {
        Topology topology = new Topology("g", SERVERS, "ds_0", false);
        topology.observe(List.of(readOnly("ds_0"), writable("ds_1"), readOnly("ds_2")));
        assertThat(topology.roles().primary()).isEqualTo("ds_0");
        assertThat(topology.roles().takesWrites()).isTrue();
    }

    /** Each row: the three servers' readings (W writable, R read-only, D down), the state and primary after. */
    @Test
    void theOneWritableServerIsThePrimary() {
        record Row(String readings, Roles.State state, String primary, List<String> writable) { }
        List<Row> rows = List.of(
                new Row("WRR", Roles.State.PRIMARY, "ds_0", List.of("ds_0")),
                new Row("RWR", Roles.State.PRIMARY, "ds_1", List.of("ds_1")),
                new Row("RRW", Roles.State.PRIMARY, "ds_2", List.of("ds_2")),
                new Row("RRR", Roles.State.NO_PRIMARY, "ds_0", List.of()),
                new Row("DRR", Roles.State.NO_PRIMARY, "ds_0", List.of()),
                new Row("DWR", Roles.State.PRIMARY, "ds_1", List.of("ds_1")),
                new Row("WWR", Roles.State.SPLIT_BRAIN, "ds_0", List.of("ds_0", "ds_1")),
                new Row("RWW", Roles.State.SPLIT_BRAIN, "ds_0", List.of("ds_1", "ds_2")));
        for (Row row : rows) {
            Topology topology = new Topology("g", SERVERS, "ds_0", true);
            List<ReplicationReading> readings = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                String server = SERVERS.get(i);
                char c = row.readings().charAt(i);
                readings.add(c == 'W' ? writable(server) : c == 'R' ? readOnly(server) : down(server));
            }
            Roles roles = topology.observe(readings);
            assertThat(roles.state()).as(row.readings()).isEqualTo(row.state());
            assertThat(roles.primary()).as(row.readings()).isEqualTo(row.primary());
            assertThat(roles.writable()).as(row.readings()).isEqualTo(row.writable());
            assertThat(roles.replicas()).as(row.readings()).doesNotContain(roles.primary()).hasSize(2);
        }
    }

    @Test
    void aPromotionIsFollowedThroughNoPrimaryAndRecorded() {
        Topology topology = new Topology("g", SERVERS, "ds_0", true);
        List<Roles> told = new ArrayList<>();
        topology.onChange(told::add);
        topology.observe(List.of(writable("ds_0"), readOnly("ds_1"), readOnly("ds_2")));
        topology.observe(List.of(writable("ds_0"), readOnly("ds_1"), readOnly("ds_2"))); // no change: nothing told
        topology.observe(List.of(readOnly("ds_0"), readOnly("ds_1"), readOnly("ds_2")));
        topology.observe(List.of(readOnly("ds_0"), writable("ds_1"), readOnly("ds_2")));
        assertThat(told).extracting(Roles::state).containsExactly(Roles.State.PRIMARY, Roles.State.NO_PRIMARY,
                Roles.State.PRIMARY);
        assertThat(topology.roles().primary()).isEqualTo("ds_1");
        assertThat(topology.roles().replicas()).containsExactly("ds_0", "ds_2");
        assertThat(topology.primaryChanges()).isEqualTo(1);
        assertThat(topology.events()).extracting(TopologyEvent::kind)
                .containsExactly("start", "primary_writable", "no_primary", "primary_changed");
        assertThat(topology.events().get(3).detail()).contains("ds_1").contains("was ds_0");
    }

    @Test
    void aSplitBrainEndsOnceExactlyOneServerIsWritable() {
        Topology topology = new Topology("g", SERVERS, "ds_0", true);
        topology.observe(List.of(writable("ds_0"), readOnly("ds_1"), readOnly("ds_2")));
        Roles split = topology.observe(List.of(writable("ds_0"), writable("ds_1"), readOnly("ds_2")));
        assertThat(split.takesWrites()).isFalse();
        assertThat(split.detail()).contains("ds_0 and ds_1");
        assertThat(topology.splitBrains()).isEqualTo(1);
        Roles after = topology.observe(List.of(readOnly("ds_0"), writable("ds_1"), readOnly("ds_2")));
        assertThat(after.takesWrites()).isTrue();
        assertThat(after.primary()).isEqualTo("ds_1");
    }

    @Test
    void aSwitchoverHoldsTheRolesUntilItReleasesThem() {
        Topology topology = new Topology("g", SERVERS, "ds_0", true);
        assertThat(topology.hold("switchover")).isFalse(); // no primary yet: nothing to switch from
        topology.observe(List.of(writable("ds_0"), readOnly("ds_1"), readOnly("ds_2")));
        assertThat(topology.hold("switchover to ds_2")).isTrue();
        assertThat(topology.hold("again")).isFalse();
        assertThat(topology.roles().takesWrites()).isFalse();
        // mid-switchover readings (none writable) are not followed
        topology.observe(List.of(readOnly("ds_0"), readOnly("ds_1"), readOnly("ds_2")));
        assertThat(topology.roles().state()).isEqualTo(Roles.State.SWITCHING);
        topology.release("ds_2", "switched over");
        assertThat(topology.roles().takesWrites()).isTrue();
        assertThat(topology.roles().primary()).isEqualTo("ds_2");
        assertThat(topology.roles().replicas()).containsExactly("ds_0", "ds_1");
    }

    /**
     * A round that read the servers before a switchover held and released the roles sees the old primary writable
     * and the new one read-only: followed, it would give writes back to the fenced old primary (decision 193).
     */
    @Test
    void readingsBegunBeforeASwitchoverAreNotFollowedAfterIt() {
        Topology topology = new Topology("g", SERVERS, "ds_0", true);
        topology.observe(List.of(writable("ds_0"), readOnly("ds_1"), readOnly("ds_2")));
        long roundBegan = topology.version();
        List<ReplicationReading> before = List.of(writable("ds_0"), readOnly("ds_1"), readOnly("ds_2"));
        assertThat(topology.hold("switchover to ds_1")).isTrue();
        topology.release("ds_1", "switched over");

        assertThat(topology.observe(before, roundBegan)).as("stale readings").isNull();
        assertThat(topology.roles().primary()).isEqualTo("ds_1");
        assertThat(topology.roles().takesWrites()).isTrue();
        assertThat(topology.events()).extracting(TopologyEvent::kind).contains("stale_round");

        // The next round, begun after the release, is followed.
        long next = topology.version();
        Roles after = topology.observe(List.of(readOnly("ds_0"), writable("ds_1"), readOnly("ds_2")), next);
        assertThat(after).isNotNull();
        assertThat(after.primary()).isEqualTo("ds_1");
        assertThat(topology.version()).isEqualTo(next); // nothing changed
    }

    /** What applies new roles is told before what wakes the statements waiting for a primary (decision 193). */
    @Test
    void aListenerAddedFirstIsToldFirst() {
        Topology topology = new Topology("g", SERVERS, "ds_0", true);
        List<String> told = new java.util.ArrayList<>();
        topology.onChange(roles -> told.add("wake waiters: " + roles.primary()));
        topology.onChangeFirst(roles -> told.add("apply roles: " + roles.primary()));
        topology.observe(List.of(readOnly("ds_0"), writable("ds_1"), readOnly("ds_2")));
        assertThat(told).containsExactly("apply roles: ds_1", "wake waiters: ds_1");
    }

    @Test
    void theHistoryKeepsTheLatestEvents() {
        Topology topology = new Topology("g", SERVERS, "ds_0", true);
        for (int i = 0; i < Topology.HISTORY + 10; i++) {
            topology.record("step", "n" + i);
        }
        assertThat(topology.events()).hasSize(Topology.HISTORY);
        assertThat(topology.events().get(Topology.HISTORY - 1).detail()).isEqualTo("n" + (Topology.HISTORY + 9));
    }

    /** A fenced server (the old primary after a failover) coming back writable is no primary and no split brain. */
    @Test
    void aFencedServerIsNeverThePrimaryUntilItRejoins() {
        Topology topology = new Topology("g", SERVERS, "ds_0", true);
        topology.observe(List.of(down("ds_0"), readOnly("ds_1"), readOnly("ds_2")));
        topology.fence("ds_0", "declared gone");
        topology.release("ds_1", "failover");
        assertThat(topology.isFenced("ds_0")).isTrue();
        assertThat(topology.fenced()).containsExactly("ds_0");

        Roles after = topology.observe(List.of(writable("ds_0"), writable("ds_1"), readOnly("ds_2")));
        assertThat(after.state()).isEqualTo(Roles.State.PRIMARY);
        assertThat(after.primary()).isEqualTo("ds_1");
        assertThat(after.writable()).containsExactly("ds_1");

        // Fenced alone and writable: still no primary, writes wait rather than go to it.
        Roles alone = topology.observe(List.of(writable("ds_0"), readOnly("ds_1"), readOnly("ds_2")));
        assertThat(alone.state()).isEqualTo(Roles.State.NO_PRIMARY);
        assertThat(alone.detail()).contains("ds_0 fenced");

        assertThat(topology.rejoined("ds_0", "operator")).isTrue();
        assertThat(topology.rejoined("ds_0", "again")).isFalse();
        assertThat(topology.fenced()).isEmpty();
        assertThat(topology.events()).extracting(TopologyEvent::kind).contains("fenced", "rejoined");
    }

    @Test
    void failoversAreCountedByOutcome() {
        Topology topology = new Topology("g", SERVERS, "ds_0", true);
        assertThat(topology.lastFailoverMillis()).isEqualTo(-1);
        topology.failoverEnded(false, 5);
        topology.failoverEnded(true, 120);
        assertThat(topology.failovers(true)).isEqualTo(1);
        assertThat(topology.failovers(false)).isEqualTo(1);
        assertThat(topology.lastFailoverMillis()).isEqualTo(120);
    }
}
