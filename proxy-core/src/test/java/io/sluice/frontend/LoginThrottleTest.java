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

    private static final long NO_BOUND = Long.MAX_VALUE;
    /** The account guessed at. */
    private static final String VICTIM = "app2";

    @Test
    void noDelayBeforeTheThreshold() {
        throttle.failed(VICTIM, attacker);
        throttle.failed(VICTIM, attacker);
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isZero();
    }

    @Test
    void delaysDoubleUpToTheMaximum() {
        fail(3);
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isEqualTo(100);
        advance(100);
        assertThat(throttle.admit(VICTIM, attacker)).as("its turn has come").isZero();
        throttle.failed(VICTIM, attacker); // 4 failures: the next turn is 200 ms out
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isEqualTo(200);
        advance(200);
        assertThat(throttle.admit(VICTIM, attacker)).isZero();
        throttle.failed(VICTIM, attacker); // 5: 400, capped at 350
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isEqualTo(350);
    }

    @Test
    void oneAttemptWaitsAtATimeAndTheOthersAreRefused() {
        fail(3);
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isEqualTo(100);
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isEqualTo(LoginThrottle.REFUSED);
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isEqualTo(LoginThrottle.REFUSED);
        advance(100);
        assertThat(throttle.admit(VICTIM, attacker)).isZero();
        // The turn was taken when the first was checked: the next one waits a whole delay after it.
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isEqualTo(100);
    }

    @Test
    void attemptsThatCloseBeforeTheirTurnUseUpNoTurn() {
        fail(3);
        for (int i = 0; i < 30; i++) { // each sends its login and closes at once
            long wait = throttle.reserve(VICTIM, attacker, NO_BOUND);
            assertThat(wait).isIn(100L, LoginThrottle.REFUSED);
            if (wait > 0) {
                throttle.abandon(VICTIM, attacker);
            }
        }
        advance(40);
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).as("a login after them waits only the one turn")
                .isEqualTo(60);
        assertThat(throttle.failures(VICTIM, attacker)).isEqualTo(3);
    }

    @Test
    void anAttemptThatWouldTimeOutBeforeItsTurnIsRefusedAndReservesNothing() {
        fail(3);
        assertThat(throttle.reserve(VICTIM, attacker, 99)).isEqualTo(LoginThrottle.REFUSED);
        assertThat(throttle.reserve(VICTIM, attacker, 100)).as("nothing was reserved by the refused one")
                .isEqualTo(100);
    }

    @Test
    void aFailureCheckedWhileOneWaitsMovesItsTurn() {
        fail(3);
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isEqualTo(100);
        // An attempt checked before this one arrived fails: the next turn is 200 ms out.
        throttle.failed(VICTIM, attacker);
        advance(100);
        assertThat(throttle.admit(VICTIM, attacker)).isEqualTo(100);
        advance(100);
        assertThat(throttle.admit(VICTIM, attacker)).isZero();
    }

    @Test
    void aWaitingAttemptFromAnAddressThatLoggedInMeanwhileGoesAtOnce() {
        fail(3);
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isEqualTo(100);
        throttle.succeeded(VICTIM, attacker);
        assertThat(throttle.admit(VICTIM, attacker)).isZero();
        throttle.abandon(VICTIM, attacker); // nothing to give up: no record
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isZero();
    }

    @Test
    void successForgivesAndOldFailuresAreForgotten() throws Exception {
        fail(3);
        throttle.succeeded(VICTIM, attacker);
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isZero();
        assertThat(throttle.failures(VICTIM, attacker)).isZero();

        fail(3);
        advance(TimeUnit.NANOSECONDS.toMillis(LoginThrottle.FORGET_AFTER_NANOS) + 1);
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isZero();
        throttle.failed(VICTIM, attacker);
        assertThat(throttle.failures(VICTIM, attacker)).isEqualTo(1);
    }

    @Test
    void otherAddressesAreUnaffectedAndZeroTurnsItOff() throws Exception {
        fail(5);
        assertThat(throttle.reserve(VICTIM, InetAddress.getByName("127.0.0.2"), NO_BOUND)).isZero();
        LoginThrottle off = new LoginThrottle(new LoginBackoff(0, 100, 100), now::get);
        for (int i = 0; i < 10; i++) {
            off.failed(VICTIM, attacker);
        }
        assertThat(off.reserve(VICTIM, attacker, NO_BOUND)).isZero();
    }

    @Test
    void aLoginToAnotherAccountForgivesNothingAndIsNotSlowedDown() {
        fail(3);
        // The attacker owns "app": its logins go at once, and do not wipe out the guesses at "app2".
        assertThat(throttle.reserve("app", attacker, NO_BOUND)).isZero();
        throttle.succeeded("app", attacker);
        assertThat(throttle.failures(VICTIM, attacker)).isEqualTo(3);
        assertThat(throttle.reserve(VICTIM, attacker, NO_BOUND)).isEqualTo(100);
    }

    @Test
    void userNamesLongerThanAnyAccountShareARecord() {
        String a = "x".repeat(LoginThrottle.MAX_USER_LENGTH) + "a";
        String b = "x".repeat(LoginThrottle.MAX_USER_LENGTH) + "b";
        for (int i = 0; i < 3; i++) {
            throttle.failed(i % 2 == 0 ? a : b, attacker);
        }
        assertThat(throttle.failures(a, attacker)).isEqualTo(3);
    }

    private void fail(int times) {
        for (int i = 0; i < times; i++) {
            throttle.failed(VICTIM, attacker);
        }
    }

    private void advance(long millis) {
        now.addAndGet(TimeUnit.MILLISECONDS.toNanos(millis));
    }
}
