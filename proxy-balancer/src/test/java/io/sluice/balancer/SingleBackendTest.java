package io.sluice.balancer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SingleBackendTest {

    @Test
    void everyPickIsTheOneBackend() {
        SingleBackend balancer = new SingleBackend("ds_0");
        for (int i = 0; i < 3; i++) {
            assertThat(balancer.pick()).contains("ds_0");
            balancer.sessionEnded("ds_0");
        }
    }

    @Test
    void refusesNoBackend() {
        assertThatThrownBy(() -> new SingleBackend(null)).isInstanceOf(NullPointerException.class);
    }
}
