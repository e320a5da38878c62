package io.sluice.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.sluice.config.LoginBackoff;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.RawMySqlClient.Packet;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Guessing another account's password by COM_CHANGE_USER is no faster than by logging in (issue #42: about 258
 * guesses a second against 0.8 for logins). The attacker owns an account ({@code app}), so it can always log in: a
 * login of its own between two guesses must not forgive the guesses, which are against another account
 * ({@code app2}). The back-off is counted per account and address.
 */
@Tag("server")
class ChangeUserGuessingTest {

    private static final long WINDOW_MILLIS = 4_000;

    @Test
    void changeUserGuessesAreNoFasterThanLoginGuesses() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "the back-off is Sluice's");
        try (ProxyUnderTest proxy = ProxyUnderTest.builder()
                .server(s -> s.withHardening(10_000, 0, LoginBackoff.defaults())).start()) {
            int logins = guesses(proxy, "127.0.0.31", false);
            int changeUsers = guesses(proxy, "127.0.0.32", true);
            System.out.printf("checked guesses in %d ms: %d by login, %d by COM_CHANGE_USER%n", WINDOW_MILLIS,
                    logins, changeUsers);
            // Defaults: 5 free failures, then turns 1 s, 2 s, 4 s... apart: in 4 s, 5 + 2 or 3 checked guesses.
            assertThat(logins).as("login guesses in %d ms", WINDOW_MILLIS).isBetween(5, 9);
            assertThat(changeUsers).as("COM_CHANGE_USER guesses in %d ms (login guesses: %d)", WINDOW_MILLIS, logins)
                    .isLessThanOrEqualTo(logins + 1);

            // The attacker's own account was never slowed down: its logins were right.
            long begin = System.nanoTime();
            try (RawMySqlClient own = RawMySqlClient.connect(proxy.host(), proxy.port(), "127.0.0.32")) {
                assertThat(own.authenticate(proxy.user(), proxy.password(), null).isOk()).isTrue();
            }
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)).isLessThan(900);
        }
    }

    /**
     * Guesses {@code app2}'s password from {@code from} for {@link #WINDOW_MILLIS}, by login or by COM_CHANGE_USER
     * after a login as {@code app} (a fresh session each time: a failed change of user ends the session).
     *
     * @return how many guesses were checked (answered 1045, not refused unchecked with 1129)
     */
    private static int guesses(ProxyUnderTest proxy, String from, boolean changeUser) throws IOException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WINDOW_MILLIS);
        int checked = 0;
        for (int i = 0; System.nanoTime() - end < 0; i++) {
            try (RawMySqlClient client = RawMySqlClient.connect(proxy.host(), proxy.port(), from)) {
                Packet reply;
                if (changeUser) {
                    Packet own = client.authenticate(proxy.user(), proxy.password(), null);
                    assertThat(own.isOk()).as("%s", own).isTrue();
                    byte[] auth = RawMySqlClient.nativePassword("guess-" + i, client.handshake().seed());
                    client.sendCommand(MySqlWire.COM_CHANGE_USER, MySqlWire.payload().strNul(proxy.user2())
                            .int1(auth.length).bytes(auth).strNul("").int2(MySqlWire.UTF8MB4_GENERAL_CI)
                            .strNul("mysql_native_password").toBytes());
                    reply = client.readPacket();
                } else {
                    reply = client.authenticate(proxy.user2(), "guess-" + i, null);
                }
                assertThat(reply).isNotNull();
                assertThat(reply.isErr()).as("%s", reply).isTrue();
                assertThat(reply.errorCode()).as("%s", reply).isIn(1045, 1129);
                if (reply.errorCode() == 1045) {
                    checked++;
                } else {
                    sleepQuietly(50); // refused unchecked: its turn is further than a login may wait
                }
            }
        }
        return checked;
    }

    private static void sleepQuietly(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
