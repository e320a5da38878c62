package io.sluice.balancer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BackendGroupTest {

    private final BackendGroup group = new BackendGroup(Policy.LEAST_CONNECTIONS, HealthCheckConfig.defaults(),
            () -> 42L);

    @Test
    void drainedBackendKeepsItsSessionsButTakesNoNewOne() {
        group.add("a", "h1:3306", 1, true);
        group.add("b", "h2:3306", 1, true);
        Backend first = group.pick();
        Backend second = group.pick();
        assertThat(List.of(first.name(), second.name())).containsExactlyInAnyOrder("a", "b");
        List<String> transitions = new ArrayList<>();
        group.addListener((now, before) -> transitions.add(now.name() + " " + before + "->" + now.status()));

        assertThat(group.drain("a")).isTrue();
        assertThat(group.backend("a").status()).isEqualTo(BackendStatus.DRAINING);
        assertThat(group.backend("a").activeSessions()).isEqualTo(1);
        for (int i = 0; i < 10; i++) {
            assertThat(group.pick().name()).isEqualTo("b");
        }
        assertThat(group.undrain("a")).isTrue();
        assertThat(group.pick().name()).isEqualTo("a");
        assertThat(transitions).containsExactly("a UP->DRAINING", "a DRAINING->UP");
        assertThat(group.drain("nope")).isFalse();
    }

    @Test
    void aBackendAddedInRotationIsAnnouncedAndOneAddedDownIsNot() {
        group.add("a", "h1:3306", 1, true);
        List<String> transitions = new ArrayList<>();
        group.addListener((now, before) -> transitions.add(now.name() + " " + before + "->" + now.status()));
        group.add("b", "h2:3306", 1, true); // a config reload: sessions may rebalance towards it
        group.add("c", "h3:3306", 1, false); // comes up after its checks, announced then
        assertThat(transitions).containsExactly("b null->UP");
    }

    @Test
    void aSessionMovedByNameIsCountedThereOnlyWhenTheBackendTakesSessions() {
        group.add("a", "h1:3306", 1, true);
        group.add("b", "h2:3306", 1, true);
        assertThat(group.claim("b").name()).isEqualTo("b");
        assertThat(group.backend("b").activeSessions()).isEqualTo(1);
        group.drain("a");
        assertThat(group.claim("a")).isNull();
        assertThat(group.claim("nope")).isNull();
        assertThat(group.backend("a").activeSessions()).isZero();
    }

    @Test
    void statesReportEverythingTheAdminApiShows() {
        group.add("a", "h1:3306", 3, true);
        group.add("b", "h2:3306", 1, false);
        group.pick();
        group.reportConnectFailure("a", "Connection refused");
        List<BackendState> states = group.states();
        assertThat(states).containsExactly(
                new BackendState("a", "h1:3306", BackendStatus.DOWN, false, 3, 1, 1,
                        new CheckResult(false, 0, 42L, "session: Connection refused"), 0, 3),
                new BackendState("b", "h2:3306", BackendStatus.DOWN, false, 1, 0, 0, null, 0, 0));
    }

    @Test
    void membershipChangesForConfigReload() {
        group.add("a", "h1:3306", 1, true);
        assertThatThrownBy(() -> group.add("a", "h9:3306", 1, true))
                .hasMessage("backend: a (expected: a name not already in the group)");
        assertThatThrownBy(() -> group.add("c", "h3:3306", 257, true))
                .hasMessage("weight: 257 (expected: 0..256)");
        Backend held = group.pick();
        group.add("b", "h2:3306", 1, true);
        assertThat(group.pick().name()).isEqualTo("b");
        Backend removed = group.remove("a");
        assertThat(removed).isSameAs(held);
        assertThat(removed.acceptsSessions()).isFalse();
        group.sessionEnded(held); // a session on a removed backend still ends cleanly
        assertThat(group.backends()).extracting(Backend::name).containsExactly("b");
        assertThat(group.remove("a")).isNull();
        assertThat(group.setWeight("b", 0)).isTrue();
        assertThat(group.pick()).isNull();
        group.setPolicy(Policy.FIRST_AVAILABLE);
        assertThat(group.policy()).isEqualTo(Policy.FIRST_AVAILABLE);
    }
}
