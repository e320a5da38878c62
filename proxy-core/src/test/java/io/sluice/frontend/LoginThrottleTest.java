package io.sluice.frontend;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.LoginBackoff;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class LoginThrottleTest {

    private final AtomicLong now = new AtomicLong(1_000_000_000L);
    private final LoginThrottle throttle = new LoginThrottle(new LoginBackoff(3, 100, 350), now::get);
    private final InetAddress attacker = InetAddress.getLoopbackAddress();

    @Test
    void noDelayBeforeTheThreshold() {
        throttle.failed(attacker);
        throttle.failed(attacker);
        assertThat(throttle.reserve(attacker)).isZero();
    }

    @Test
    void delaysDoubleUpToTheMaximum() {
        fail(3);
        assertThat(throttle.reserve(attacker)).isEqualTo(100);
        advance(100);
        throttle.failed(attacker); // 4 failures: the next slot is 200 ms out
        assertThat(throttle.reserve(attacker)).isEqualTo(200);
        advance(200);
        throttle.failed(attacker); // 5: 400, capped at 350
        assertThat(throttle.reserve(attacker)).isEqualTo(350);
    }

    @Test
    void parallelAttemptsGetSuccessiveSlots() {
        fail(3);
        assertThat(throttle.reserve(attacker)).isEqualTo(100);
        assertThat(throttle.reserve(attacker)).isEqualTo(200);
        assertThat(throttle.reserve(attacker)).isEqualTo(300);
    }

    @Test
    void successForgivesAndOldFailuresAreForgotten() throws Exception {
        fail(3);
        throttle.succeeded(attacker);
        assertThat(throttle.reserve(attacker)).isZero();
        assertThat(throttle.failures(attacker)).isZero();

        fail(3);
        advance(TimeUnit.NANOSECONDS.toMillis(LoginThrottle.FORGET_AFTER_NANOS) + 1);
        assertThat(throttle.reserve(attacker)).isZero();
        throttle.failed(attacker);
        assertThat(throttle.failures(attacker)).isEqualTo(1);
    }

    @Test
    void otherAddressesAreUnaffectedAndZeroTurnsItOff() throws Exception {
        fail(5);
        assertThat(throttle.reserve(InetAddress.getByName("127.0.0.2"))).isZero();
        LoginThrottle off = new LoginThrottle(new LoginBackoff(0, 100, 100), now::get);
        for (int i = 0; i < 10; i++) {
            off.failed(attacker);
        }
        assertThat(off.reserve(attacker)).isZero();
    }

    private void fail(int times) {
        for (int i = 0; i < times; i++) {
            throttle.failed(attacker);
        }
    }

    private void advance(long millis) {
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    }
}
