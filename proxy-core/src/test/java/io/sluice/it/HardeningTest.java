package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.mysql.cj.jdbc.JdbcConnection;
import io.sluice.config.LoginBackoff;
import io.sluice.config.ServerConfig;
import io.sluice.config.UserConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.RawMySqlClient.Packet;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.Assumptions;

/**
 * Clients that abuse the proxy: they connect and say nothing, guess passwords, open too many sessions, or sit idle.
 * Each limit ends the offending connection (with the error MySQL sends, where it sends one) and leaves other
 * sessions alone.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class HardeningTest {

    @BeforeAll
    static void notDirect() {
        Assumptions.assumeFalse(ProxyUnderTest.isDirect(), "checks Sluice's own limits");
    }

    private static ProxyUnderTest start(long handshakeTimeout, long idleTimeout, LoginBackoff backoff) {
        return ProxyUnderTest.builder()
                .server(s -> s.withHardening(handshakeTimeout, idleTimeout, backoff))
                .user(new UserConfig("limited", "%", "limited-pw", null, 2))
                .start();
    }

    private static ProxyUnderTest start(long handshakeTimeout, long idleTimeout) {
        return start(handshakeTimeout, idleTimeout, LoginBackoff.defaults());
    }

    @Test
    void aSilentClientIsClosedAtTheHandshakeTimeout() throws Exception {
        try (ProxyUnderTest proxy = start(300, 0)) {
            try (RawMySqlClient silent = RawMySqlClient.connect(proxy.host(), proxy.port())) {
                long begin = System.nanoTime();
                assertThat(silent.readPacket()).as("nothing but a close after the greeting").isNull();
                long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin);
                assertThat(waited).isBetween(250L, 5_000L);
            }
            awaitNoClients(proxy);
            assertLogsIn(proxy);
        }
    }

    @Test
    void aClientThatStallsItsTlsHandshakeIsClosedToo() throws Exception {
        try (ProxyUnderTest proxy = start(300, 0);
             RawMySqlClient stalled = RawMySqlClient.connect(proxy.host(), proxy.port())) {
            byte[] sslRequest = new byte[32];
            int capabilities = RawMySqlClient.CLIENT_PROTOCOL_41 | RawMySqlClient.CLIENT_SECURE_CONNECTION | 0x800;
            sslRequest[0] = (byte) capabilities;
            sslRequest[1] = (byte) (capabilities >>> 8);
            sslRequest[8] = 45;
            stalled.writePacket(sslRequest); // CLIENT_SSL, and then no ClientHello
            assertThat(stalled.readPacket()).isNull();
            awaitNoClients(proxy);
        }
    }

    @Test
    void aPasswordGuessingLoopIsThrottled() throws Exception {
        try (ProxyUnderTest proxy = start(10_000, 0, new LoginBackoff(2, 500, 4_000))) {
            List<Long> millis = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                long begin = System.nanoTime();
                Packet reply = login(proxy, "127.0.0.1", proxy.user(), "guess-" + i);
                millis.add(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin));
                assertThat(reply.isErr()).isTrue();
                assertThat(reply.errorCode()).isEqualTo(1045);
            }
            // Two free failures, then 500 ms, then twice that: the slots double with every further failure.
            assertThat(millis.get(2)).as("third attempt, %s", millis).isGreaterThanOrEqualTo(490);
            // The slot is counted from the third failure, so the client's own turnaround is taken off what it sees.
            assertThat(millis.get(3)).as("fourth attempt, %s", millis).isGreaterThanOrEqualTo(750)
                    .isGreaterThan(millis.get(2));

            // Another address is not slowed down by this one's failures.
            long begin = System.nanoTime();
            assertThat(login(proxy, "127.0.0.2", proxy.user(), proxy.password()).isOk()).isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)).isLessThan(490);

            // The right password from the guessing address still works, after its slot; success forgives the past.
            begin = System.nanoTime();
            assertThat(login(proxy, "127.0.0.1", proxy.user(), proxy.password()).isOk()).isTrue();
            // 2 s after the fourth failure, less the time the other address took
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)).isGreaterThanOrEqualTo(1_500);
            begin = System.nanoTime();
            assertThat(login(proxy, "127.0.0.1", proxy.user(), "one-more-typo").errorCode()).isEqualTo(1045);
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)).isLessThan(490);
        }
    }

    @Test
    void aLoginPacketOverTheLoginLimitIsRefusedBeforeItsBodyArrives() throws Exception {
        // Before login, a packet may be 16 KiB: a header announcing 1 MiB is answered at once, not buffered.
        try (ProxyUnderTest proxy = start(10_000, 0)) {
            try (RawMySqlClient raw = RawMySqlClient.connect(proxy.host(), proxy.port())) {
                raw.writeFrameHeader(1 << 20, 1);
                raw.socket().getOutputStream().flush();
                List<Packet> packets = raw.readUntilClosed();
                assertThat(packets).as("the answer before the close").hasSize(1);
                assertThat(packets.get(0).isErr()).as("%s", packets.get(0)).isTrue();
                assertThat(packets.get(0).errorCode()).isEqualTo(1043);
                assertThat(packets.get(0).sqlState()).isEqualTo("08S01");
                assertThat(packets.get(0).errorMessage()).contains("1048576 bytes").contains("before login");
            }
            awaitNoClients(proxy);
            assertLogsIn(proxy);
        }
    }

    @Test
    void clientsSendingKilobytesOfConnectionAttributesStillLogIn() throws Exception {
        try (ProxyUnderTest proxy = start(10_000, 0)) {
            String attributes = "connectionAttributes=sluice_test:" + "x".repeat(4_000);
            for (JdbcDriver driver : JdbcDriver.values()) {
                try (Connection connection = proxy.connect(driver, null, attributes);
                     Statement statement = connection.createStatement();
                     ResultSet rs = statement.executeQuery("SELECT 'in'")) {
                    assertThat(rs.next()).isTrue();
                    assertThat(rs.getString(1)).as("%s", driver).isEqualTo("in");
                }
            }
            // Once logged in, the limit is server.maxPacketSize: a 100 KiB statement goes through.
            try (RawMySqlClient client = proxy.rawLogin(null)) {
                String large = "x".repeat(100_000);
                assertThat(client.query("SELECT LENGTH('" + large + "')").rows()).containsExactly(List.of("100000"));
            }
        }
    }

    @Test
    void loginsThatAreSentAndAbandonedUseUpNoTurnOfTheBackoff() throws Exception {
        try (ProxyUnderTest proxy = start(10_000, 0, new LoginBackoff(2, 2_000, 2_000))) {
            for (int i = 0; i < 2; i++) {
                assertThat(login(proxy, "127.0.0.3", proxy.user(), "guess-" + i).errorCode()).isEqualTo(1045);
            }
            // Thirty connections that each send a login and close without waiting for its answer. Had each taken a
            // turn of 2 s, the next login from the address would wait a minute, past the client's read timeout.
            for (int i = 0; i < 30; i++) {
                try (RawMySqlClient hit = RawMySqlClient.connect(proxy.host(), proxy.port(), "127.0.0.3")) {
                    hit.writePacket(hit.handshakeResponse(proxy.user(), "hit-" + i, null, 0));
                }
            }
            awaitNoClients(proxy);

            Packet legitimate = login(proxy, "127.0.0.3", proxy.user(), proxy.password());
            assertThat(legitimate.isOk()).as("%s", legitimate).isTrue();
        }
    }

    @Test
    void aLoginWhoseTurnComesAfterItsHandshakeTimeoutIsRefusedAtOnce() throws Exception {
        try (ProxyUnderTest proxy = start(1_000, 0, new LoginBackoff(1, 5_000, 5_000))) {
            assertThat(login(proxy, "127.0.0.4", proxy.user(), "guess").errorCode()).isEqualTo(1045);

            Packet refused = login(proxy, "127.0.0.4", proxy.user(), proxy.password());

            assertThat(refused.isErr()).as("%s", refused).isTrue();
            assertThat(refused.errorCode()).isEqualTo(1129);
            assertThat(refused.errorMessage()).contains("'127.0.0.4'").contains("failed logins");
            awaitNoClients(proxy); // nothing is held open for it
            assertLogsIn(proxy); // another address is not affected
        }
    }

    @Test
    void whileOneLoginFromAnAddressWaitsForItsTurnAnotherIsRefused() throws Exception {
        try (ProxyUnderTest proxy = start(10_000, 0, new LoginBackoff(1, 1_500, 1_500))) {
            assertThat(login(proxy, "127.0.0.5", proxy.user(), "guess").errorCode()).isEqualTo(1045);
            try (RawMySqlClient first = RawMySqlClient.connect(proxy.host(), proxy.port(), "127.0.0.5")) {
                first.writePacket(first.handshakeResponse(proxy.user(), proxy.password(), null, 0));
                Packet second = login(proxy, "127.0.0.5", proxy.user(), proxy.password());
                Packet firstReply = first.readPacket();
                // Which of the two waits depends on which Sluice reads first (they may be on different loops).
                List<Packet> replies = List.of(firstReply, second);
                assertThat(replies).as("%s", replies).filteredOn(Packet::isOk).hasSize(1);
                assertThat(replies).as("%s", replies).filteredOn(p -> p.isErr() && p.errorCode() == 1129).hasSize(1);
            }
        }
    }

    @Test
    void aChangeUserFromAnAddressBackingOffTakesItsTurnLikeALogin() throws Exception {
        try (ProxyUnderTest proxy = start(1_000, 0, new LoginBackoff(1, 5_000, 5_000));
             Connection session = proxy.connect(JdbcDriver.MYSQL, null, "localSocketAddress=127.0.0.6")) {
            assertThat(login(proxy, "127.0.0.6", proxy.user2(), "guess").errorCode()).isEqualTo(1045);

            // A change to the account guessed at, from the same address: its turn is 5 s away, beyond the 1 s a
            // login may wait: refused at once, the password unchecked.
            assertThatThrownBy(() -> session.unwrap(JdbcConnection.class).changeUser(proxy.user2(), proxy.password2()))
                    .isInstanceOfSatisfying(SQLException.class, e -> assertThat(e.getErrorCode()).isEqualTo(1129));
        }
    }

    @Test
    void aChangeUserWhoseTurnComesInTimeWaitsForItAndGoesThrough() throws Exception {
        try (ProxyUnderTest proxy = start(10_000, 0, new LoginBackoff(1, 1_000, 1_000));
             Connection session = proxy.connect(JdbcDriver.MYSQL, null, "localSocketAddress=127.0.0.7")) {
            assertThat(login(proxy, "127.0.0.7", proxy.user2(), "guess").errorCode()).isEqualTo(1045);

            session.unwrap(JdbcConnection.class).changeUser(proxy.user2(), proxy.password2()); // waits for its turn

            try (Statement statement = session.createStatement();
                 ResultSet rs = statement.executeQuery("SELECT 'changed'")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getString(1)).isEqualTo("changed");
            }
            // The success cleared the account's record at the address: a login to it is not held back any more.
            long begin = System.nanoTime();
            assertThat(login(proxy, "127.0.0.7", proxy.user2(), proxy.password2()).isOk()).isTrue();
            assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)).isLessThan(900);
        }
    }

    @Test
    void anAccountGetsAtMostItsMaxConnections() throws Exception {
        try (ProxyUnderTest proxy = start(10_000, 0);
             RawMySqlClient first = RawMySqlClient.login(proxy.host(), proxy.port(), "limited", "limited-pw", null);
             RawMySqlClient second = RawMySqlClient.login(proxy.host(), proxy.port(), "limited", "limited-pw", null)) {
            try (RawMySqlClient third = RawMySqlClient.connect(proxy.host(), proxy.port())) {
                Packet refused = third.authenticate("limited", "limited-pw", null);
                assertThat(refused.isErr()).as("%s", refused).isTrue();
                assertThat(refused.errorCode()).isEqualTo(1226);
                assertThat(refused.sqlState()).isEqualTo("42000");
                assertThat(refused.errorMessage()).contains("'limited'").contains("max_user_connections");
            }
            assertLogsIn(proxy); // another account is not limited by this one
            assertThat(first.query("SELECT 1").rows()).hasSize(1);

            second.sendCommand(MySqlWire.COM_QUIT, new byte[0]);
            assertThat(second.readPacket()).isNull();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            Packet again;
            do { // the slot comes back when the server has seen the close
                try (RawMySqlClient next = RawMySqlClient.connect(proxy.host(), proxy.port())) {
                    again = next.authenticate("limited", "limited-pw", null);
                }
            } while (!again.isOk() && System.nanoTime() < deadline);
            assertThat(again.isOk()).as("%s", again).isTrue();
        }
    }

    @Test
    void anIdleClientIsDisconnectedWith4031() throws Exception {
        try (ProxyUnderTest proxy = start(10_000, 400);
             RawMySqlClient idle = proxy.rawLogin(null)) {
            assertThat(idle.query("SELECT 1").rows()).hasSize(1); // the session has a backend connection
            try (RawMySqlClient busy = proxy.rawLogin(null)) {
                // Silent while its query runs: that is not idleness.
                assertThat(busy.query("SELECT SLEEP(1.2)").rows()).containsExactly(List.of("0"));
            }
            Packet notice = idle.readPacket();
            assertThat(notice).isNotNull();
            assertThat(notice.isErr()).as("%s", notice).isTrue();
            assertThat(notice.errorCode()).isEqualTo(4031);
            assertThat(idle.readPacket()).isNull();
            awaitNoClients(proxy);
            assertLogsIn(proxy);
        }
    }

    @Test
    void aCommandDrippedByteByByteIsCutOffAtTheNetReadTimeout() throws Exception {
        try (ProxyUnderTest proxy = ProxyUnderTest.builder().server(s -> s.withNetReadTimeout(500)).start();
             RawMySqlClient drip = proxy.rawLogin(null)) {
            assertThat(drip.query("SELECT 1").rows()).hasSize(1); // the session holds a backend connection
            byte[] query = MySqlWire.frame(0, MySqlWire.comQuery("SELECT '" + "x".repeat(500) + "'"));
            drip.writeRaw(java.util.Arrays.copyOf(query, 8));
            Thread dripper = new Thread(() -> {
                try { // a byte every 100 ms: the connection is never silent, the command never whole
                    for (int i = 8; i < query.length - 1; i++) {
                        Thread.sleep(100);
                        drip.writeRaw(new byte[] {query[i]});
                    }
                } catch (IOException | InterruptedException closed) {
                    // closed by Sluice, as expected, or by the test
                }
            });
            dripper.setDaemon(true);
            dripper.start();
            try {
                Packet notice = drip.readPacket();
                assertThat(notice).isNotNull();
                assertThat(notice.isErr()).as("%s", notice).isTrue();
                assertThat(notice.errorCode()).isEqualTo(1159);
                assertThat(notice.sqlState()).isEqualTo("08S01");
                assertThat(drip.readPacket()).isNull();
            } finally {
                dripper.interrupt();
            }
            awaitNoClients(proxy);
            assertLogsIn(proxy);
        }
    }

    @Test
    void defaultsAreDocumentedValues() {
        ServerConfig defaults = ServerConfig.defaults();
        assertThat(defaults.handshakeTimeoutMilliseconds()).isEqualTo(10_000);
        assertThat(defaults.idleTimeoutMilliseconds()).isZero();
        assertThat(defaults.loginBackoff()).isEqualTo(new LoginBackoff(5, 1_000, 30_000));
        assertThat(defaults.netReadTimeoutMilliseconds()).isEqualTo(30_000);
    }

    private static Packet login(ProxyUnderTest proxy, String from, String user, String password) throws IOException {
        try (RawMySqlClient client = RawMySqlClient.connect(proxy.host(), proxy.port(), from)) {
            return client.authenticate(user, password, null);
        }
    }

    private static void assertLogsIn(ProxyUnderTest proxy) throws IOException {
        try (RawMySqlClient client = RawMySqlClient.login(proxy.host(), proxy.port(), proxy.user2(),
                proxy.password2(), null)) {
            assertThat(client.query("SELECT 'still here'").rows()).containsExactly(List.of("still here"));
        }
    }

    private static void awaitNoClients(ProxyUnderTest proxy) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (proxy.sluice().clientConnections() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(proxy.sluice().clientConnections()).isZero();
    }
}
