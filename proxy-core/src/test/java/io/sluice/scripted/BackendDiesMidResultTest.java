package io.sluice.scripted;

import static io.sluice.scripted.Fixtures.assertNotPooled;
import static io.sluice.testing.ScriptedServerConnection.response;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.LeakDetection;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedServerConnection;
import io.sluice.testing.ScriptedSluice;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A backend dies after part of a result set has been relayed. The client has read column definitions and rows, so
 * any packet Sluice added now would be taken for more of the result: only closing the client connection is honest.
 * The relayed buffers are the server's reads themselves (zero copy); the paranoid leak detector checks that the one
 * in flight when the server died is released, and the pool that the dead connection is gone with its slot.
 */
@ExtendWith(LeakDetection.class)
class BackendDiesMidResultTest {

    /** Column count, two definitions and two rows: a result set without its end. */
    private static final List<byte[]> FIRST_PART = List.of(
            MySqlWire.columnCount(2),
            MySqlWire.columnDefinition("id", MySqlWire.MYSQL_TYPE_LONG),
            MySqlWire.columnDefinition("name", MySqlWire.MYSQL_TYPE_VAR_STRING),
            MySqlWire.textRow("1", "one"),
            MySqlWire.textRow("2", "two"));

    @Test
    void dyingBetweenRowsClosesTheClientAfterWhatWasRelayed() {
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);

            client.send(MySqlWire.comQuery("SELECT id, name FROM t"));
            server.expectQuery("SELECT id, name FROM t");
            server.send(response(FIRST_PART));
            client.expectPayloads(FIRST_PART).expectNothing();
            assertThat(client.isOpen()).as("open while the result streams").isTrue();

            server.die();

            client.expectNothing().expectClosed();
            assertNotPooled(sluice);
        }
    }

    @Test
    void dyingInsideARowClosesTheClientAfterTheBytesRelayed() {
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);

            client.send(MySqlWire.comQuery("SELECT id, name FROM t"));
            server.expectQuery("SELECT id, name FROM t");
            byte[] all = response(FIRST_PART);
            int cut = all.length - 3; // inside the last row's payload
            server.send(Arrays.copyOf(all, cut));
            server.die();

            client.expectPayloads(FIRST_PART.subList(0, FIRST_PART.size() - 1));
            // The bytes of the half row were relayed as they came; after them, nothing, and the connection closed.
            assertThat(client.channel().unreadWrittenBytes()).as("bytes of the half row")
                    .isEqualTo(cut - (all.length - 4 - FIRST_PART.get(FIRST_PART.size() - 1).length));
            client.expectClosed();
            assertNotPooled(sluice);
        }
    }

    @Test
    void dyingBetweenTwoPipelinedResultsClosesTheClientToo() {
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);

            client.send(MySqlWire.comQuery("SELECT id, name FROM t"), MySqlWire.comQuery("SELECT 2"));
            server.expectQuery("SELECT id, name FROM t");
            server.expectQuery("SELECT 2");
            List<byte[]> whole = MySqlWire.resultSet(true, FIRST_PART.subList(1, 3), FIRST_PART.subList(3, 5),
                    MySqlWire.SERVER_STATUS_AUTOCOMMIT);
            // The first result whole, and the first packet of the second.
            server.send(response(whole), response(MySqlWire.columnCount(1)));
            server.die();

            client.expectPayloads(whole).expectPayloads(MySqlWire.columnCount(1)).expectNothing().expectClosed();
            assertNotPooled(sluice);
        }
    }
}
