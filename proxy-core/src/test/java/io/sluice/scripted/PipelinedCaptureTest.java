package io.sluice.scripted;

import static io.sluice.scripted.Fixtures.CR_SERVER_LOST;
import static io.sluice.scripted.Fixtures.oneRow;
import static io.sluice.testing.ScriptedServerConnection.response;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.capture.CaptureOptions;
import io.sluice.capture.CaptureReader;
import io.sluice.capture.CaptureRecord;
import io.sluice.capture.CaptureRecord.CommandRecord;
import io.sluice.capture.CaptureRecord.Outcome;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedServerConnection;
import io.sluice.testing.ScriptedSluice;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Commands pipelined in one client read while a traffic capture runs: they reach the server together, their
 * responses reach the client in order, and each captured command gets the outcome of its own response, even when the
 * responses arrive cut at arbitrary places or the server dies half way. The capture is a real one, written to a
 * temporary directory by its writer thread and read back.
 */
@ExtendWith(LeakDetection.class)
class PipelinedCaptureTest {
    private static final int ER_NO_SUCH_TABLE = 1146;

    private static final List<byte[]> ONE_ROW = oneRow("1", MySqlWire.SERVER_STATUS_AUTOCOMMIT);
    private static final byte[] INSERTED_THREE = MySqlWire.ok(3, 0, MySqlWire.SERVER_STATUS_AUTOCOMMIT, 0, "");
    private static final byte[] NO_SUCH_TABLE = MySqlWire.err(ER_NO_SUCH_TABLE, "42S02", "Table 'app.nope' doesn't exist");

    @TempDir
    Path captureDir;

    @Test
    void eachPipelinedCommandIsRecordedWithItsOwnOutcome() throws Exception {
        List<CommandRecord> records;
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            sluice.context().capture().start(CaptureOptions.of(captureDir).withMinFreeSpace(0));
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);

            client.send(MySqlWire.comQuery("SELECT 1"), MySqlWire.comStmtClose(9),
                    MySqlWire.comQuery("INSERT INTO t VALUES (1), (2), (3)"), MySqlWire.comQuery("SELECT * FROM nope"));
            // All four reach the server before it answers any: nothing waits for a response.
            server.expectQuery("SELECT 1");
            server.expectStatementCommand(MySqlWire.COM_STMT_CLOSE, 9);
            server.expectQuery("INSERT INTO t VALUES (1), (2), (3)");
            server.expectQuery("SELECT * FROM nope");
            server.expectNothing();
            // Three responses (COM_STMT_CLOSE has none), in reads of 5 bytes that cut packets and headers anywhere.
            server.sendInPieces(MySqlWire.concat(response(ONE_ROW), response(INSERTED_THREE), response(NO_SUCH_TABLE)),
                    5);

            client.expectPayloads(ONE_ROW).expectPayloads(INSERTED_THREE).expectPayloads(NO_SUCH_TABLE)
                    .expectNothing();
            sluice.context().capture().stop();
            records = commands(captureDir);
        }
        assertThat(records).extracting(PipelinedCaptureTest::sql).containsExactly("SELECT 1", "<COM_STMT_CLOSE>",
                "INSERT INTO t VALUES (1), (2), (3)", "SELECT * FROM nope");
        assertThat(records).extracting(CommandRecord::outcome)
                .containsExactly(Outcome.OK, Outcome.NO_RESPONSE, Outcome.OK, Outcome.ERROR);
        assertThat(records.get(0).rows()).as("rows of SELECT 1").isEqualTo(1);
        assertThat(records.get(2).affectedRows()).as("rows the INSERT affected").isEqualTo(3);
        assertThat(records.get(3).errorCode()).isEqualTo(ER_NO_SUCH_TABLE);
    }

    @Test
    void commandsWhoseResponsesNeverCameAreRecordedAsUnknown() throws Exception {
        List<CommandRecord> records;
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            sluice.context().capture().start(CaptureOptions.of(captureDir).withMinFreeSpace(0));
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);

            client.send(MySqlWire.comQuery("SELECT 1"), MySqlWire.comQuery("UPDATE t SET a = 1"),
                    MySqlWire.comQuery("SELECT 2"));
            server.expectQuery("SELECT 1");
            server.expectQuery("UPDATE t SET a = 1");
            server.expectQuery("SELECT 2");
            server.send(response(ONE_ROW));
            server.die();

            client.expectPayloads(ONE_ROW);
            client.expectErr(CR_SERVER_LOST);
            client.expectNothing().expectClosed();
            sluice.context().capture().stop();
            records = commands(captureDir);
        }
        assertThat(records).extracting(PipelinedCaptureTest::sql)
                .containsExactly("SELECT 1", "UPDATE t SET a = 1", "SELECT 2");
        assertThat(records).extracting(CommandRecord::outcome)
                .containsExactly(Outcome.OK, Outcome.UNKNOWN, Outcome.UNKNOWN);
    }

    private static List<CommandRecord> commands(Path dir) throws Exception {
        List<CaptureRecord> all = CaptureReader.readAll(dir, null);
        return all.stream().filter(CommandRecord.class::isInstance).map(CommandRecord.class::cast).toList();
    }

    private static String sql(CommandRecord record) {
        return record.command() == MySqlWire.COM_QUERY ? new String(record.payload(), StandardCharsets.UTF_8)
                : "<" + record.commandName() + ">";
    }
}
