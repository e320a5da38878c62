package io.sluice.balancer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class PolicyTest {

    private static BackendGroup group(Policy policy, int... weights) {
        BackendGroup group = new BackendGroup(policy, HealthCheckConfig.defaults());
        for (int i = 0; i < weights.length; i++) {
            group.add("ds_" + i, "127.0.0.1:" + (3306 + i), weights[i], true);
        }
        return group;
    }

    private static Map<String, Integer> countPicks(BackendGroup group, int picks, boolean endEach) {
        Map<String, Integer> counts = new HashMap<>();
        for (int i = 0; i < picks; i++) {
            Backend chosen = group.pick();
            counts.merge(chosen.name(), 1, Integer::sum);
            if (endEach) {
                group.sessionEnded(chosen);
            }
        }
        return counts;
    }

    @Test
    void leastConnectionsKeepsOpenSessionsWithinOne() {
        BackendGroup group = group(Policy.LEAST_CONNECTIONS, 1, 1, 1);
        for (int i = 0; i < 100; i++) {
            group.pick();
            int max = group.backends().stream().mapToInt(Backend::activeSessions).max().orElseThrow();
            int min = group.backends().stream().mapToInt(Backend::activeSessions).min().orElseThrow();
            assertThat(max - min).as("after %d sessions", i + 1).isLessThanOrEqualTo(1);
        }
    }

    @Test
    void leastConnectionsAlwaysChoosesAnEmptiestBackendWhileSessionsEndUnevenly() {
        BackendGroup group = group(Policy.LEAST_CONNECTIONS, 1, 1, 1);
        List<Backend> open = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            int min = group.backends().stream().mapToInt(Backend::activeSessions).min().orElseThrow();
            int before = group.backends().stream().mapToInt(Backend::activeSessions).sum();
            Backend chosen = group.pick();
            assertThat(chosen.activeSessions() - 1).as("pick %d", i).isEqualTo(min);
            assertThat(before + 1).isEqualTo(group.backends().stream().mapToInt(Backend::activeSessions).sum());
            open.add(chosen);
            if (i % 3 == 2) {
                group.sessionEnded(open.remove((i * 7) % open.size()));
            }
        }
    }

    @Test
    void leastConnectionsFillsTheBackendWhoseSessionsEnded() {
        BackendGroup group = group(Policy.LEAST_CONNECTIONS, 1, 1, 1);
        List<Backend> open = new ArrayList<>();
        for (int i = 0; i < 9; i++) {
            open.add(group.pick());
        }
        Backend ds1 = group.backend("ds_1");
        open.stream().filter(b -> b == ds1).limit(2).toList().forEach(group::sessionEnded);
        assertThat(group.pick()).isSameAs(ds1);
        assertThat(group.pick()).isSameAs(ds1);
    }

    @Test
    void leastConnectionsCountsSessionsPerUnitOfWeight() {
        BackendGroup group = group(Policy.LEAST_CONNECTIONS, 1, 3);
        Map<String, Integer> open = countPicks(group, 400, false);
        assertThat(open.get("ds_1")).isEqualTo(300);
        assertThat(open.get("ds_0")).isEqualTo(100);
    }

    @Test
    void roundRobinTakesEachInTurnAndSkipsDownBackends() {
        BackendGroup group = group(Policy.ROUND_ROBIN, 1, 1, 1);
        List<String> order = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            order.add(group.pick().name());
        }
        assertThat(order).containsExactly("ds_0", "ds_1", "ds_2", "ds_0", "ds_1", "ds_2");
        group.reportConnectFailure("ds_1", "connection refused");
        assertThat(countPicks(group, 100, true)).containsOnlyKeys("ds_0", "ds_2");
    }

    @Test
    void weightedRoundRobinHoldsWeightsWithinFivePercentOverTenThousandSessions() {
        BackendGroup group = group(Policy.WEIGHTED_ROUND_ROBIN, 1, 2, 7);
        Map<String, Integer> counts = countPicks(group, 10_000, true);
        assertThat(counts.get("ds_0") / 10_000.0).isCloseTo(0.1, within(0.005));
        assertThat(counts.get("ds_1") / 10_000.0).isCloseTo(0.2, within(0.01));
        assertThat(counts.get("ds_2") / 10_000.0).isCloseTo(0.7, within(0.035));
    }

    @Test
    void weightedRoundRobinInterleaves() {
        BackendGroup group = group(Policy.WEIGHTED_ROUND_ROBIN, 5, 1, 1);
        List<String> order = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            order.add(group.pick().name());
        }
        assertThat(order).containsExactly("ds_0", "ds_0", "ds_1", "ds_0", "ds_2", "ds_0", "ds_0");
    }

    @Test
    void powerOfTwoChoicesFollowsWeightsAndAvoidsTheLoaded() {
        BackendGroup group = group(Policy.POWER_OF_TWO_CHOICES, 1, 1, 2);
        Map<String, Integer> open = countPicks(group, 4000, false);
        // Two choices by sessions per weight keep open sessions close to the weights.
        assertThat(open.get("ds_2") / 4000.0).isCloseTo(0.5, within(0.05));
        assertThat(open.get("ds_0") / 4000.0).isCloseTo(0.25, within(0.05));
    }

    @Test
    void powerOfTwoChoicesFindsTheOnlyEligibleBackend() {
        BackendGroup group = group(Policy.POWER_OF_TWO_CHOICES, 1, 1, 1, 1, 1, 1, 1, 1);
        for (int i = 0; i < 7; i++) {
            group.reportConnectFailure("ds_" + i, "refused");
        }
        assertThat(countPicks(group, 200, true)).containsOnlyKeys("ds_7");
    }

    @Test
    void firstAvailableTakesTheFirstUpBackendInOrder() {
        BackendGroup group = group(Policy.FIRST_AVAILABLE, 1, 1, 1);
        assertThat(countPicks(group, 10, false)).containsOnlyKeys("ds_0");
        group.drain("ds_0");
        assertThat(group.pick().name()).isEqualTo("ds_1");
        group.reportConnectFailure("ds_1", "refused");
        assertThat(group.pick().name()).isEqualTo("ds_2");
    }

    @ParameterizedTest
    @EnumSource(Policy.class)
    void noPolicyChoosesADownDrainedOrZeroWeightBackend(Policy policy) {
        BackendGroup group = group(policy, 1, 1, 0, 1);
        group.reportConnectFailure("ds_0", "refused");
        group.drain("ds_1");
        assertThat(countPicks(group, 500, policy != Policy.LEAST_CONNECTIONS)).containsOnlyKeys("ds_3");
        group.drain("ds_3");
        assertThat(group.pick()).isNull();
        assertThat(group.describeUnavailable())
                .isEqualTo("ds_0 is down (session: refused), ds_1 is draining, ds_2 has weight 0, ds_3 is draining");
    }

    @ParameterizedTest
    @EnumSource(Policy.class)
    void failoverLeavesOutBackendsTheSessionFailedOn(Policy policy) {
        BackendGroup group = group(policy, 1, 1, 1);
        for (int i = 0; i < 50; i++) {
            Backend chosen = group.pick(Set.of("ds_0", "ds_2"));
            assertThat(chosen.name()).isEqualTo("ds_1");
            group.sessionEnded(chosen);
        }
        assertThat(group.pick(Set.of("ds_0", "ds_1", "ds_2"))).isNull();
    }

    @Test
    void anEmptyGroupPicksNothing() {
        assertThat(new BackendGroup(Policy.LEAST_CONNECTIONS, HealthCheckConfig.defaults()).pick()).isNull();
    }
}
