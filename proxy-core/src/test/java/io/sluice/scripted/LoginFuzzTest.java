package io.sluice.scripted;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.DataSourceConfig;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.MemoryChannel.Packet;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedSluice;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The connection phase fed hostile bytes: valid HandshakeResponse41 frames mutated at random (bytes flipped, cut,
 * lengthened, headers that lie, sequence ids out of order, garbage), from a fixed seed so every run replays the same
 * cases. Whatever arrives, Sluice answers with a packet a client can read (OK, ERR, an auth switch) or closes, and
 * within the handshake timeout (and a backend's connection timeout, for a login that names a schema) every
 * connection is logged in or gone; nothing leaks (the class runs under Netty's leak detector at paranoid).
 */
@ExtendWith(LeakDetection.class)
class LoginFuzzTest {
    /** Cases per run in the suite: each is a connection of its own, a few milliseconds. */
    private static final int CASES = 1_500;
    private static final long SEED = 30;
    /** Past the handshake timeout, and a backend login's connection timeout for a login that asked for a schema. */
    private static final long LONG_ENOUGH = DataSourceConfig.DEFAULT_CONNECTION_TIMEOUT_MILLISECONDS + 10_000;

    @Test
    void mutatedLoginsAreAnsweredOrClosedAndLeakNothing() {
        Random random = new Random(SEED);
        int loggedIn = 0;
        int closed = 0;
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            for (int i = 0; i < CASES; i++) {
                ScriptedClient client = sluice.connect();
                assertThat(client.expectPacket().first()).as("the greeting").isEqualTo(10);
                byte[] bytes = mutate(random);
                client.channel().deliver(bytes);
                sluice.loop().runTasks();
                boolean ok = readAnswers(client, i, bytes);
                if (client.isOpen() && !ok) {
                    sluice.loop().advance(LONG_ENOUGH);
                    ok = readAnswers(client, i, bytes);
                }
                assertThat(ok || !client.isOpen()).as("case %d (%s): logged in or closed", i, hex(bytes)).isTrue();
                if (client.isOpen()) {
                    loggedIn++;
                    client.vanish();
                } else {
                    closed++;
                }
            }
            sluice.loop().runTasks();
            assertThat(sluice.context().registry().open()).as("sessions left").isZero();
        }
        assertThat(loggedIn + closed).isEqualTo(CASES);
        assertThat(closed).as("most mutations are refused").isGreaterThan(CASES / 2);
    }

    /**
     * Reads what Sluice sent: each packet must be one a client can read in the connection phase.
     *
     * @return whether an OK came
     */
    private static boolean readAnswers(ScriptedClient client, int index, byte[] sent) {
        boolean ok = false;
        for (Packet packet; (packet = client.channel().nextPacket()) != null; ) {
            assertThat(packet.first()).as("case %d (%s): %s", index, hex(sent), packet)
                    .isIn(0x00, 0xFF, 0xFE, 0x01);
            ok |= packet.first() == 0x00;
        }
        return ok;
    }

    /** A valid login for the scripted user, then one of several kinds of damage. */
    private static byte[] mutate(Random random) {
        boolean withSchema = random.nextInt(4) == 0;
        int capabilities = ScriptedClient.CAPABILITIES | (withSchema ? 0x8 : 0);
        byte[] payload = MySqlWire.handshakeResponse41(capabilities, 1 << 24, MySqlWire.UTF8MB4_GENERAL_CI,
                random.nextInt(8) == 0 ? "nobody" : ScriptedSluice.USER, new byte[random.nextInt(3) * 10],
                withSchema ? "app" : null, random.nextBoolean() ? "mysql_native_password" : "caching_sha2_password");
        int sequenceId = 1;
        switch (random.nextInt(8)) {
            case 0: // untouched: must log in, or be refused for its user or a throttled address
                break;
            case 1: // bytes flipped
                for (int n = 1 + random.nextInt(8); n > 0; n--) {
                    payload[random.nextInt(payload.length)] = (byte) random.nextInt(256);
                }
                break;
            case 2: // cut short
                payload = Arrays.copyOf(payload, random.nextInt(payload.length));
                break;
            case 3: // lengthened with garbage
                byte[] longer = Arrays.copyOf(payload, payload.length + random.nextInt(64));
                for (int j = payload.length; j < longer.length; j++) {
                    longer[j] = (byte) random.nextInt(256);
                }
                payload = longer;
                break;
            case 4: // another sequence id
                sequenceId = random.nextInt(256);
                break;
            case 5: { // a header that lies about the length: more than arrives, maybe more than the login limit
                byte[] frame = MySqlWire.frame(1, payload);
                int claimed = random.nextBoolean() ? payload.length + 1 + random.nextInt(100)
                        : 16 * 1024 + random.nextInt(1 << 20);
                frame[0] = (byte) claimed;
                frame[1] = (byte) (claimed >>> 8);
                frame[2] = (byte) (claimed >>> 16);
                return frame;
            }
            case 6: { // garbage, framed or not
                byte[] garbage = new byte[random.nextInt(200)];
                random.nextBytes(garbage);
                return random.nextBoolean() ? MySqlWire.frame(1, garbage) : garbage;
            }
            default: // a login and then a command pipelined behind it
                return MySqlWire.concat(MySqlWire.frame(1, payload),
                        MySqlWire.frame(0, MySqlWire.comQuery("SELECT 1")));
        }
        return MySqlWire.frame(sequenceId, payload);
    }

    private static String hex(byte[] bytes) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < Math.min(bytes.length, 48); i++) {
            out.append(String.format("%02x", bytes[i]));
        }
        return bytes.length > 48 ? out + "..." : out.toString();
    }
}
