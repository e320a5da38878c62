package io.sluice.scripted;

import static io.sluice.scripted.Fixtures.oneRow;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.LeakDetection;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedServerConnection;
import io.sluice.testing.ScriptedSluice;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A COM_CHANGE_USER pipelined behind a command waits for that command's answer, as a server handles it: the long fuzz
 * run's finding (seed 1002, case 25,543 of {@code CommandFuzzTest}). Started at once, it came while the session was
 * still acquiring a connection for the command before it, and started a second acquire: both bound a connection,
 * the second over the first, which stayed lent to a session that no longer held it (its pool slot taken for good),
 * and the change's OK reached the client before the command's answer.
 */
@ExtendWith(LeakDetection.class)
class PipelinedChangeUserTest {
    private static final List<byte[]> ONE_ROW = oneRow("1", MySqlWire.SERVER_STATUS_AUTOCOMMIT);

    @Test
    void aChangeUserPipelinedBehindAQueryWaitsForItsAnswerAndLeavesNoConnectionLent() {
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            ScriptedClient client = sluice.connectAndLogin(null); // no schema: no connection until the first command
            client.send(MySqlWire.comQuery("SELECT 1"), changeUser("app"));

            ScriptedServerConnection server = sluice.backend().next().login();
            server.expectQuery("SELECT 1");
            server.expectNothing(); // the old user's connection is not reset under its query
            server.respond(ONE_ROW);
            client.expectPayloads(ONE_ROW); // the query's answer first

            server.answerReset(); // then the change: the connection is reset, and given the new schema
            server.expectCommand(MySqlWire.COM_INIT_DB, "app");
            server.respond(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT));
            client.expectOk();
            client.expectNothing();
            assertThat(sluice.backend().opened()).as("connections opened (one per acquire)").isEqualTo(1);

            client.vanish();
            server.answerReset();
            assertThat(sluice.context().registry().open()).isZero();
            assertThat(sluice.pool().openConnections()).isEqualTo(1);
            assertThat(sluice.pool().idleConnections()).as("every open connection idle").isEqualTo(1);
        }
    }

    @Test
    void aChangeUserWithoutASchemaAnswersAfterTheQueryBeforeIt() {
        try (ScriptedSluice sluice = ScriptedSluice.transactionPooling(2)) {
            ScriptedClient client = sluice.connectAndLogin(null);
            client.send(MySqlWire.comQuery("SELECT 1"), changeUser(null), MySqlWire.comQuery("SELECT 2"));

            ScriptedServerConnection server = sluice.backend().next().login();
            server.expectQuery("SELECT 1");
            server.expectNothing();
            server.respond(ONE_ROW);
            client.expectPayloads(ONE_ROW);
            client.expectOk(); // COM_CHANGE_USER's, in order

            server.answerReset();
            server.expectQuery("SELECT 2"); // the new user's command, on a connection reset for it
            List<byte[]> two = oneRow("2", MySqlWire.SERVER_STATUS_AUTOCOMMIT);
            server.respond(two);
            client.expectPayloads(two).expectNothing();

            client.vanish();
            assertThat(sluice.context().registry().open()).isZero();
            assertThat(sluice.pool().idleConnections()).as("every open connection idle")
                    .isEqualTo(sluice.pool().openConnections());
        }
    }

    /** COM_CHANGE_USER to the scripted proxy user (no password), with {@code schema} or none. */
    private static byte[] changeUser(String schema) {
        return MySqlWire.payload().int1(MySqlWire.COM_CHANGE_USER).strNul(ScriptedSluice.USER).int1(0)
                .strNul(schema == null ? "" : schema).int2(MySqlWire.UTF8MB4_GENERAL_CI)
                .strNul("mysql_native_password").toBytes();
    }
}
