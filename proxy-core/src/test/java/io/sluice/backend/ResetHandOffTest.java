package io.sluice.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.protocol.Command;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.SluiceExtension;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Connection churn: a client that logs in while the previous client's backend connection is still being reset
 * takes that connection when the reset ends, instead of opening another (workload d of the benchmarks: without
 * this the pool grew to the churn's peak and each growth cost the server a login).
 */
@Tag("server")
class ResetHandOffTest {
    private static final int CLIENTS = 20;

    /** One loop: every reset can serve every login. */
    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.workerThreads(1)).database("sluice_reset_handoff");

    private static long created() {
        return proxy.sluice().backends().get(0).createdConnections();
    }

    @Test
    void aClientLoggingInDuringAResetTakesThatConnection() throws Exception {
        long createdBefore = created();
        RawMySqlClient current = proxy.rawLogin(proxy.db());
        assertThat(current.query("SELECT 1").rows()).isEqualTo(List.of(List.of("1")));
        for (int i = 0; i < CLIENTS; i++) {
            RawMySqlClient next = RawMySqlClient.connect(proxy.host(), proxy.port()); // greeted, not logged in
            // Sluice closes a client that quits after it has sent the reset of its connection: once current sees
            // the close, the reset is on its way. next's login (naming a schema, so it takes a connection at once)
            // follows at once, and often reaches the pool before MariaDB has answered the reset.
            current.sendCommand(Command.COM_QUIT, new byte[0]);
            assertThat(current.readUntilClosed()).isEmpty();
            RawMySqlClient.Packet answer = next.authenticate(proxy.user(), proxy.password(), proxy.db());
            assertThat(answer.isOk()).as("login %d: %s", i, answer).isTrue();
            assertThat(next.query("SELECT DATABASE(), @@in_transaction").rows())
                    .isEqualTo(List.of(List.of(proxy.db(), "0")));
            current.close();
            current = next;
        }
        current.sendCommand(Command.COM_QUIT, new byte[0]);
        current.close();

        assertThat(created() - createdBefore).as("backend connections opened for %d clients in turn",
                CLIENTS + 1).isEqualTo(1);
    }
}
