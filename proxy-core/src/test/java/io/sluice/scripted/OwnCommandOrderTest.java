package io.sluice.scripted;

import static io.sluice.scripted.Fixtures.IN_TRANSACTION;
import static io.sluice.scripted.Fixtures.oneRow;
import static io.sluice.testing.ScriptedServerConnection.response;
import static org.assertj.core.api.Assertions.assertThat;

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
 * Sluice's own commands and the client's never share a response stream: an own command is written only once no
 * response of the client's is outstanding (a re-prepare needed by an execute pipelined behind a query waits for the
 * query's result), and own commands pipelined together (the reset, the session trackers and the session check) each
 * get their own response, however the server's bytes are cut. {@code BackendConnection.run} refuses and closes the
 * connection when asked to break the first rule; these tests show the session never asks.
 */
@ExtendWith(LeakDetection.class)
class OwnCommandOrderTest {
    private static final List<byte[]> ONE_ROW = oneRow("1", IN_TRANSACTION);

    @Test
    void aRePrepareWaitsForTheQueryPipelinedAheadOfItsExecute() {
        try (ScriptedSluice sluice = ScriptedSluice.transactionPooling(2)) {
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection first = sluice.backend().connection(0);
            client.send(MySqlWire.comStmtPrepare("SELECT 1"));
            first.expectCommand(MySqlWire.COM_STMT_PREPARE, "SELECT 1");
            first.respond(MySqlWire.prepareOk(77, 1, 0, 0), MySqlWire.columnDefinition("1", MySqlWire.MYSQL_TYPE_LONG));
            client.expectPacket();
            client.expectPacket();
            first.die(); // the idle connection ends: the statement must be prepared again on the next one

            client.send(MySqlWire.comQuery("BEGIN"));
            ScriptedServerConnection second = sluice.backend().next().login();
            second.expectQuery("BEGIN");
            second.respond(MySqlWire.ok(IN_TRANSACTION));
            client.expectOk();

            // A query and an execute in one read: the execute needs the statement prepared on this connection.
            client.send(MySqlWire.comQuery("SELECT 1"), MySqlWire.comStmtExecute(1, 0));
            second.expectQuery("SELECT 1");
            second.expectNothing(); // no COM_STMT_PREPARE while the query's result is outstanding
            second.respond(ONE_ROW);
            client.expectPayloads(ONE_ROW).expectNothing();

            second.expectCommand(MySqlWire.COM_STMT_PREPARE, "SELECT 1"); // now, Sluice's own
            second.expectNothing(); // the execute waits for it
            second.respond(MySqlWire.prepareOk(88, 1, 0, 0), MySqlWire.columnDefinition("1", MySqlWire.MYSQL_TYPE_LONG));
            client.expectNothing(); // Sluice's own response stays with Sluice

            second.expectStatementCommand(MySqlWire.COM_STMT_EXECUTE, 88); // the server's id on this connection
            List<byte[]> executed = MySqlWire.resultSet(true,
                    List.of(MySqlWire.columnDefinition("1", MySqlWire.MYSQL_TYPE_LONG)),
                    List.of(MySqlWire.binaryRow(1)), IN_TRANSACTION);
            second.respond(executed);
            client.expectPayloads(executed).expectNothing();
            assertThat(second.isOpen()).as("the connection (run() closes it on an own command behind a client's)")
                    .isTrue();
        }
    }

    @Test
    void theResetItsTrackersAndTheCheckEachGetTheirOwnResponse() {
        for (int piece : new int[] {Integer.MAX_VALUE, 1, 3}) {
            try (ScriptedSluice sluice = ScriptedSluice.transactionPooling(1)) {
                ScriptedServerConnection server = leaveMidTransaction(sluice);
                byte[] answers = MySqlWire.concat(response(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)),
                        response(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)),
                        response(server.sessionCheckResult(true)));
                server.sendInPieces(answers, Math.min(piece, answers.length));

                assertThat(sluice.pool().idleConnections()).as("pooled after a clean reset, reads of %d bytes", piece)
                        .isEqualTo(1);
                server.expectNothing();
            }
        }
    }

    @Test
    void aRefusedTrackerSetIsTheTrackersOwnAndFailsTheReset() {
        try (ScriptedSluice sluice = ScriptedSluice.transactionPooling(1)) {
            ScriptedServerConnection server = leaveMidTransaction(sluice);
            server.send(response(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)),
                    response(MySqlWire.err(1193, "HY000", "Unknown system variable 'session_track_system_variables'")),
                    response(server.sessionCheckResult(true)));

            // The check itself came back fine: only the trackers' own ERR can have failed the reset.
            assertThat(server.isOpen()).as("a connection whose trackers could not be set").isFalse();
            assertThat(sluice.pool().idleConnections()).isZero();
            assertThat(sluice.pool().openConnections()).isZero();
        }
    }

    /**
     * A client leaves in the middle of a transaction: its connection goes back to be reset, and the server has just
     * received the three commands of the reset, pipelined, none answered.
     */
    private static ScriptedServerConnection leaveMidTransaction(ScriptedSluice sluice) {
        ScriptedClient client = sluice.connectAndLogin("app");
        ScriptedServerConnection server = sluice.backend().connection(0);
        client.send(MySqlWire.comQuery("BEGIN"));
        server.expectQuery("BEGIN");
        server.respond(MySqlWire.ok(IN_TRANSACTION));
        client.expectOk();
        client.vanish();
        Packet reset = server.expectCommand(MySqlWire.COM_RESET_CONNECTION);
        server.expectQueryStartingWith("SET SESSION session_track_system_variables");
        server.expectQueryStartingWith("SELECT DATABASE()");
        server.expectNothing();
        assertThat(reset.payload()).hasSize(1);
        return server;
    }
}
