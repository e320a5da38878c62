package io.sluice.scripted;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.LoginBackoff;
import io.sluice.config.ServerConfig;
import io.sluice.testing.EscapedExceptions;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.MemoryChannel.Packet;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedSluice;
import java.util.Random;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The command phase fed hostile frames ({@link CommandMutations}) after a real login, in both pooling modes, with a
 * {@link PlausibleServer} behind Sluice. For every case: no exception escapes a handler or a loop task, the session
 * answers a COM_PING sent after the case (OK or ERR, last) or is closed, at the latest once a frame begun has had its
 * {@code netReadTimeout}; the pool never holds idle more connections than the server has clean ones (no answer
 * owed, no transaction open and, in session pooling, reset since the last client command) and, once every client is
 * gone, every open connection is idle. Nothing leaks (Netty's leak detector at paranoid).
 *
 * <p>Seeded: {@code -Dsluice.fuzz.seed} (default 30) replays a run, {@code -Dsluice.fuzz.cases} sets the cases per
 * pooling mode (default 2,500) for a long run. A failure names the seed and the case.
 */
@ExtendWith(LeakDetection.class)
class CommandFuzzTest {
    private static final int CASES = Integer.getInteger("sluice.fuzz.cases", 2_500);
    private static final long SEED = Long.getLong("sluice.fuzz.seed", 30);
    private static final long PAST_NET_READ_TIMEOUT = ServerConfig.DEFAULT_NET_READ_TIMEOUT_MILLISECONDS + 1_000;

    @ParameterizedTest(name = "transaction pooling: {0}")
    @ValueSource(booleans = {false, true})
    void hostileCommandsAreAnsweredOrClosedAndNeverPoolAConnectionInDoubt(boolean transactionPooling) {
        Random random = new Random(SEED);
        PlausibleServer server;
        int answered = 0;
        int closed = 0;
        try (EscapedExceptions escaped = EscapedExceptions.listen();
             ScriptedSluice sluice = transactionPooling ? ScriptedSluice.transactionPooling(2)
                     : ScriptedSluice.sessionPooling(2)) {
            server = new PlausibleServer(sluice.backend(), random);
            CommandMutations mutations = new CommandMutations(random);
            for (int i = 0; i < CASES; i++) {
                int index = i;
                byte[] bytes = mutations.frames();
                Supplier<String> where = () -> "seed " + SEED + ", case " + index + ", "
                        + (transactionPooling ? "transaction" : "session") + " pooling, bytes " + hex(bytes);
                ScriptedClient client = login(sluice, server, where);
                deliverInPieces(sluice, client, bytes, random, server);
                if (random.nextInt(8) == 0) { // the client vanishes with its commands maybe unanswered
                    client.vanish();
                    checkPool(sluice, server, !transactionPooling, where);
                    server.serve();
                } else {
                    server.serve();
                    checkPool(sluice, server, !transactionPooling, where);
                    if (probe(sluice, server, client, where)) {
                        answered++;
                    } else {
                        closed++;
                    }
                    client.vanish();
                    server.serve();
                }
                checkPool(sluice, server, !transactionPooling, where);
                assertThat(sluice.context().registry().open()).as("%s: sessions left", where.get()).isZero();
                assertThat(sluice.pool().idleConnections()).as("%s: every open connection idle", where.get())
                        .isEqualTo(sluice.pool().openConnections());
                assertThat(escaped.drain()).as("%s: exceptions that escaped", where.get()).isEmpty();
            }
        }
        assertThat(answered + closed).as("cases that ran to the probe").isGreaterThan(CASES / 2);
        assertThat(closed).as("some damage closes the session").isPositive();
        assertThat(answered).as("many sessions survive what they sent").isGreaterThan(CASES / 4);
    }

    /** Logs a client in; waits out the login back-off a COM_CHANGE_USER with a wrong user may have caused. */
    private static ScriptedClient login(ScriptedSluice sluice, PlausibleServer server, Supplier<String> where) {
        for (int attempt = 0; attempt < 3; attempt++) {
            ScriptedClient client = sluice.connect().sendLogin(ScriptedSluice.USER, null);
            server.serve();
            Packet answer = client.channel().nextPacket();
            if (answer == null && client.isOpen()) {
                sluice.loop().advance(LoginBackoff.DEFAULT_MAX_DELAY_MILLISECONDS + 1_000);
                server.serve();
                answer = client.channel().nextPacket();
            }
            if (answer != null && answer.first() == 0x00) {
                return client;
            }
            client.vanish();
        }
        throw new AssertionError(where.get() + ": no login in three attempts");
    }

    /** The case's bytes in one to three reads split anywhere; the server may answer between them. */
    private static void deliverInPieces(ScriptedSluice sluice, ScriptedClient client, byte[] bytes, Random random,
            PlausibleServer server) {
        int pieces = 1 + random.nextInt(3);
        int at = 0;
        for (int p = 1; p <= pieces; p++) {
            int end = p == pieces ? bytes.length : at + random.nextInt(bytes.length - at + 1);
            byte[] piece = java.util.Arrays.copyOfRange(bytes, at, end);
            at = end;
            client.channel().deliver(piece);
            sluice.loop().runTasks();
            if (random.nextBoolean()) {
                server.serve();
            }
        }
    }

    /**
     * A COM_PING after the case: the session answers (its last packet OK or ERR), or it is closed, at the latest once
     * a frame the case began has had its read timeout.
     *
     * @return whether it answered and stayed open
     */
    private static boolean probe(ScriptedSluice sluice, PlausibleServer server, ScriptedClient client,
            Supplier<String> where) {
        drain(client);
        if (!client.isOpen()) {
            return false;
        }
        client.send(MySqlWire.comPing());
        server.serve();
        int last = drain(client);
        // A frame begun in one read and another in a later one get a timeout period each: two periods at most.
        for (int period = 0; period < 2 && client.isOpen() && last != 0x00 && last != 0xFF && last != 0xFE; period++) {
            sluice.loop().advance(PAST_NET_READ_TIMEOUT);
            server.serve();
            int later = drain(client);
            last = later == -2 ? last : later;
        }
        // The end of a response: OK, ERR, or the OK headed 0xFE that ends a result set.
        assertThat(!client.isOpen() || last == 0x00 || last == 0xFF || last == 0xFE)
                .as("%s: answered (last packet 0x%s) or closed", where.get(), Integer.toHexString(last)).isTrue();
        return client.isOpen();
    }

    /** Reads every whole packet Sluice sent the client; returns the first byte of the last one (-2: none). */
    private static int drain(ScriptedClient client) {
        int last = -2;
        for (Packet p; (p = client.channel().nextPacket()) != null; ) {
            last = p.first();
        }
        return last;
    }

    private static void checkPool(ScriptedSluice sluice, PlausibleServer server, boolean resetBeforePooling,
            Supplier<String> where) {
        assertThat(sluice.pool().idleConnections()).as("%s: idle connections (at most the server's clean ones)",
                where.get()).isLessThanOrEqualTo(server.clean(resetBeforePooling));
    }

    private static String hex(byte[] bytes) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < Math.min(bytes.length, 200); i++) {
            out.append(String.format("%02x", bytes[i]));
        }
        return bytes.length > 200 ? out + "..." : out.toString();
    }
}
