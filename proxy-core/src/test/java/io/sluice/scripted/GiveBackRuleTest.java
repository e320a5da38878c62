package io.sluice.scripted;

import static io.sluice.scripted.Fixtures.IN_TRANSACTION;
import static io.sluice.scripted.Fixtures.oneRow;
import static io.sluice.testing.ScriptedServerConnection.response;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.backend.BackendConnection;
import io.sluice.backend.pool.EventLoopPool;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.MemoryChannel.Packet;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedServerConnection;
import io.sluice.testing.ScriptedSluice;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The give-back rule of the session core: in transaction pooling a session gives its connection back from inside the
 * relay of its transaction's last response, and that must not bind a session waiting for a connection, nor send its
 * commands, in that stack. The connection goes to the idle list at once; the waiter is served from a task of the
 * pool's own, in a later turn of the loop.
 */
@ExtendWith(LeakDetection.class)
class GiveBackRuleTest {
    @Test
    void aWaitingSessionIsServedFromThePoolsOwnTask() {
        try (ScriptedSluice sluice = ScriptedSluice.transactionPooling(1)) {
            ScriptedClient giver = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);
            giver.send(MySqlWire.comQuery("BEGIN"));
            server.expectQuery("BEGIN");
            server.respond(MySqlWire.ok(IN_TRANSACTION));
            giver.expectOk();

            // The pool's one connection is in the giver's transaction: the other session's statement waits for it.
            ScriptedClient waiter = sluice.connect().sendLogin(ScriptedSluice.USER, "app");
            waiter.expectOk(); // transaction pooling: the schema is known, the login needs no connection
            waiter.send(MySqlWire.comQuery("SELECT 2"));
            assertThat(sluice.pool().pendingAcquires()).as("sessions waiting for a connection").isEqualTo(1);
            server.expectNothing();

            giver.send(MySqlWire.comQuery("COMMIT"));
            server.expectQuery("COMMIT");
            // The COMMIT's OK is read and relayed; the loop's tasks are left for the test to run.
            server.sendWithoutTurn(response(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)));

            // Had the waiter been bound in the relay's stack, the connection would flush for it, not for the giver,
            // whose OK would wait unflushed: the first thing to see.
            giver.expectOk();
            assertThat(sluice.pool().idleConnections()).as("the connection given back, idle").isEqualTo(1);
            assertThat(sluice.pool().pendingAcquires()).as("the waiter, not yet served").isEqualTo(1);
            server.expectNothing(); // nothing of the waiter's was sent in the relay's stack

            sluice.loop().runTasks();
            Packet sent = server.expectQuery("SELECT 2");
            assertThat(sent.writtenWithin(EventLoopPool.class, "serve"))
                    .as("the waiter's statement was sent from the pool's serving task").isTrue();
            assertThat(sent.writtenWithin(BackendConnection.class, "channelRead"))
                    .as("... and not from within the relay of a response").isFalse();
            assertThat(sluice.pool().pendingAcquires()).isZero();

            List<byte[]> two = oneRow("2", MySqlWire.SERVER_STATUS_AUTOCOMMIT);
            server.respond(two);
            waiter.expectPayloads(two).expectNothing();
            assertThat(sluice.pool().idleConnections()).as("given back again after the autocommit statement")
                    .isEqualTo(1);
        }
    }
}
