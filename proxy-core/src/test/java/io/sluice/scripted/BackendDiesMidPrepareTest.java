package io.sluice.scripted;

import static io.sluice.scripted.Fixtures.CR_SERVER_LOST;
import static io.sluice.scripted.Fixtures.assertNotPooled;
import static io.sluice.testing.ScriptedServerConnection.response;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.LeakDetection;
import io.sluice.testing.MemoryChannel.Packet;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedServerConnection;
import io.sluice.testing.ScriptedSluice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A backend dies while a statement is being prepared, in transaction pooling: the client's own COM_STMT_PREPARE,
 * relayed with the server's statement id replaced by the session's, and Sluice's re-prepare of a statement on a
 * connection that has not seen it ({@code PrepareStatement}, an own command whose packets Sluice collects). The client
 * learns of it honestly (CR_SERVER_LOST while nothing of the answer reached it, a close once part did), the packets
 * collected so far are released (the class runs under the paranoid leak detector), and the dead connection's slot is
 * freed without it ever going back to the idle list.
 */
@ExtendWith(LeakDetection.class)
class BackendDiesMidPrepareTest {
    private static final int SERVER_STATEMENT_ID = 77;

    @Test
    void dyingBeforeAnsweringARelayedPrepareIsServerLost() {
        try (ScriptedSluice sluice = ScriptedSluice.transactionPooling(2)) {
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);

            client.send(MySqlWire.comStmtPrepare("SELECT 1"));
            server.expectCommand(MySqlWire.COM_STMT_PREPARE, "SELECT 1");
            server.die();

            assertThat(client.expectErr(CR_SERVER_LOST)).contains("Lost connection to backend 'ds_0'");
            client.expectNothing().expectClosed();
            assertNotPooled(sluice);
        }
    }

    @Test
    void dyingInTheMiddleOfARelayedPrepareClosesTheClient() {
        try (ScriptedSluice sluice = ScriptedSluice.transactionPooling(2)) {
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);

            client.send(MySqlWire.comStmtPrepare("SELECT ?, ?"));
            server.expectCommand(MySqlWire.COM_STMT_PREPARE, "SELECT ?, ?");
            // COM_STMT_PREPARE_OK and the first of two parameter definitions; the second never comes.
            server.send(response(MySqlWire.prepareOk(SERVER_STATEMENT_ID, 0, 2, 0),
                    MySqlWire.columnDefinition("?", MySqlWire.MYSQL_TYPE_VAR_STRING)));
            server.die();

            Packet prepareOk = client.expectPacket();
            assertThat(prepareOk.first()).isZero();
            assertThat(statementId(prepareOk)).as("the statement id the client is shown: the session's own")
                    .isEqualTo(1);
            client.expectPayloads(MySqlWire.columnDefinition("?", MySqlWire.MYSQL_TYPE_VAR_STRING));
            // Part of the answer reached the client: an ERR now would be read as a parameter definition.
            client.expectNothing().expectClosed();
            assertNotPooled(sluice);
        }
    }

    @Test
    void dyingInTheMiddleOfARePrepareIsServerLost() {
        try (ScriptedSluice sluice = ScriptedSluice.transactionPooling(2)) {
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection first = sluice.backend().connection(0);
            client.send(MySqlWire.comStmtPrepare("SELECT 1"));
            first.expectCommand(MySqlWire.COM_STMT_PREPARE, "SELECT 1");
            first.respond(MySqlWire.prepareOk(SERVER_STATEMENT_ID, 1, 0, 0),
                    MySqlWire.columnDefinition("1", MySqlWire.MYSQL_TYPE_LONG));
            client.expectPacket();
            client.expectPacket();
            assertThat(sluice.pool().idleConnections()).as("the prepare, in autocommit, gave the connection back")
                    .isEqualTo(1);
            first.die(); // the server ends the idle connection (wait_timeout, a restart)
            assertThat(sluice.pool().openConnections()).isZero();

            // The execute needs a connection: a new one, which has never seen the statement, so Sluice prepares it
            // there first, as its own command, and the server dies half way through that answer.
            client.send(MySqlWire.comStmtExecute(1, 0));
            ScriptedServerConnection second = sluice.backend().next().login();
            assertThat(second).isSameAs(sluice.backend().connection(1));
            second.expectCommand(MySqlWire.COM_STMT_PREPARE, "SELECT 1");
            second.expectNothing(); // the execute waits for the prepare's answer
            second.send(response(MySqlWire.prepareOk(88, 1, 0, 0)));
            second.die();

            assertThat(client.expectErr(CR_SERVER_LOST)).contains("Lost connection to backend 'ds_0'");
            client.expectNothing().expectClosed();
            assertNotPooled(sluice);
        }
    }

    private static int statementId(Packet prepareOk) {
        byte[] p = prepareOk.payload();
        return (p[1] & 0xFF) | (p[2] & 0xFF) << 8 | (p[3] & 0xFF) << 16 | (p[4] & 0xFF) << 24;
    }

}
