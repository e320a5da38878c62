package io.sluice.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HealthStateTest {
    private static final CheckResult OK = new CheckResult(true, 1_000_000, 0, "ok");
    private static final CheckResult FAIL = new CheckResult(false, 1_000_000, 0, "connection refused");

    @Test
    void fallConsecutiveFailuresTakeItDown() {
        HealthState state = new HealthState(2, 3, true);
        assertThat(state.record(FAIL)).isFalse();
        assertThat(state.record(FAIL)).isFalse();
        assertThat(state.isUp()).isTrue();
        assertThat(state.record(FAIL)).isTrue();
        assertThat(state.isUp()).isFalse();
        assertThat(state.record(FAIL)).isFalse(); // already down: no second transition
    }

    @Test
    void aSuccessResetsTheFailureCount() {
        HealthState state = new HealthState(2, 3, true);
        state.record(FAIL);
        state.record(FAIL);
        state.record(OK);
        state.record(FAIL);
        state.record(FAIL);
        assertThat(state.isUp()).isTrue();
        assertThat(state.failures()).isEqualTo(2);
    }

    @Test
    void riseConsecutiveSuccessesBringItUp() {
        HealthState state = new HealthState(2, 3, false);
        assertThat(state.record(OK)).isFalse();
        assertThat(state.isUp()).isFalse();
        state.record(FAIL); // the run of successes starts again
        state.record(OK);
        assertThat(state.isUp()).isFalse();
        assertThat(state.record(OK)).isTrue();
        assertThat(state.isUp()).isTrue();
        assertThat(state.successes()).isEqualTo(2);
    }

    @Test
    void aSessionReportedFailureTakesItDownAtOnceAndItRisesByChecks() {
        HealthState state = new HealthState(2, 3, true);
        CheckResult refused = new CheckResult(false, 0, 5, "session: connection refused");
        assertThat(state.markDown(refused)).isTrue();
        assertThat(state.isUp()).isFalse();
        assertThat(state.last()).isEqualTo(refused);
        assertThat(state.markDown(refused)).isFalse();
        state.record(OK);
        assertThat(state.isUp()).isFalse();
        state.record(OK);
        assertThat(state.isUp()).isTrue();
    }
}
