package io.sluice.scripted;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.LeakDetection;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedServerConnection;
import io.sluice.testing.ScriptedSluice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A server that sends bytes nobody asked for leaves its connection in an unknown state, even when the bytes are
 * fewer than a packet header: the connection must be closed, never lent again. (Part of a header sent to an idle
 * pooled connection was kept, and read as the start of the next session's reset response, which then never ended:
 * the connection stayed "active" for good, its pool slot taken. Found by HostileBackendFuzzTest.)
 */
@ExtendWith(LeakDetection.class)
class UnsolicitedBytesTest {

    @Test
    void partOfAHeaderToAnIdleConnectionClosesIt() {
        try (ScriptedSluice sluice = ScriptedSluice.transactionPooling(2)) {
            ScriptedClient client = sluice.connect().sendLogin(ScriptedSluice.USER, null);
            client.expectOk();
            client.send(MySqlWire.comQuery("SELECT 1"));
            ScriptedServerConnection server = sluice.backend().next().login();
            server.expectQuery("SELECT 1");
            server.respond(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT));
            client.expectOk();
            assertThat(sluice.pool().idleConnections()).as("given back between transactions").isOne();

            server.send(new byte[] {7, 0, 0});

            assertThat(server.isOpen()).as("the connection, after bytes while idle").isFalse();
            Fixtures.assertNotPooled(sluice);
        }
    }

    @Test
    void partOfAHeaderAfterTheResetResponseClosesTheConnection() {
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);
            client.quit();
            server.expectCommand(MySqlWire.COM_RESET_CONNECTION);
            server.expectQueryStartingWith("SELECT DATABASE()");
            server.send(ScriptedServerConnection.response(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)),
                    ScriptedServerConnection.response(server.sessionCheckResult()), new byte[] {7, 0});

            assertThat(server.isOpen()).as("the connection, after bytes behind the reset's answer").isFalse();
            Fixtures.assertNotPooled(sluice);
        }
    }
}
