package io.sluice.scripted;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.EscapedExceptions;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.MemoryChannel.Packet;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedSluice;
import java.util.Random;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Backend connections whose server answers a client's query with damaged bytes ({@link PlausibleServer#hostile}), in
 * both pooling modes. Sluice may relay what it got, answer ERR 2013 or close the session, but no exception escapes,
 * nothing leaks, and what reaches the next session is clean: each case begins with a client whose first COM_PING
 * must get exactly one answer (OK or ERR, sequence id 1) and no stray byte, on whichever pooled connection it gets.
 * Once the client is gone every open connection is idle again, the hostile ones closed.
 *
 * <p>No answer after the damage is also allowed: a response cut short leaves the session waiting, as a real server
 * that stopped mid-response would (Sluice has no query timeout).
 *
 * <p>Seeded: {@code -Dsluice.fuzz.seed} (default 30), {@code -Dsluice.fuzz.cases} (default 1,500 per mode).
 */
@ExtendWith(LeakDetection.class)
class HostileBackendFuzzTest {
    private static final int CASES = Integer.getInteger("sluice.fuzz.cases", 1_500);
    private static final long SEED = Long.getLong("sluice.fuzz.seed", 30);

    @ParameterizedTest(name = "transaction pooling: {0}")
    @ValueSource(booleans = {false, true})
    void damagedResponsesNeverReachTheNextSession(boolean transactionPooling) {
        Random random = new Random(SEED);
        int survived = 0;
        try (EscapedExceptions escaped = EscapedExceptions.listen();
             ScriptedSluice sluice = transactionPooling ? ScriptedSluice.transactionPooling(2)
                     : ScriptedSluice.sessionPooling(2)) {
            PlausibleServer server = new PlausibleServer(sluice.backend(), random);
            for (int i = 0; i < CASES; i++) {
                String where = "seed " + SEED + ", case " + i + ", " + (transactionPooling ? "transaction" : "session")
                        + " pooling";
                server.hostile(false);
                ScriptedClient client = sluice.connect().sendLogin(ScriptedSluice.USER, null);
                server.serve();
                assertThat(client.channel().nextPacket().first()).as("%s: login", where).isZero();
                client.send(MySqlWire.comPing());
                server.serve();
                Packet first = client.channel().nextPacket();
                assertThat(first).as("%s: the first COM_PING's answer", where).isNotNull();
                assertThat(first.first()).as("%s: %s", where, first).isIn(0x00, 0xFF);
                assertThat(first.sequenceId()).as("%s: %s", where, first).isOne();
                assertThat(client.channel().unreadWrittenBytes()).as("%s: stray bytes after it", where).isZero();

                server.hostile(true);
                client.send(MySqlWire.comQuery("SELECT 1"));
                server.serve();
                server.hostile(false);
                if (client.isOpen()) {
                    client.send(MySqlWire.comPing());
                    server.serve();
                    survived += client.isOpen() ? 1 : 0;
                }
                client.vanish();
                server.serve();
                assertThat(sluice.context().registry().open()).as("%s: sessions left", where).isZero();
                assertThat(sluice.pool().idleConnections()).as("%s: every open connection idle%s", where,
                        server.describe())
                        .isEqualTo(sluice.pool().openConnections());
                assertThat(escaped.drain()).as("%s: exceptions that escaped", where).isEmpty();
            }
        }
        assertThat(survived).as("sessions still open after the damage").isBetween(1, CASES - 1);
    }
}
