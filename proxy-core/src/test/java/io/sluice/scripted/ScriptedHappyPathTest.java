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
 * The scripted peers on the path that works, as the ground the failure-path tests stand on: a login that checks its
 * schema on a new backend connection, a query relayed byte for byte, and the connection reset and pooled when the
 * client quits.
 */
@ExtendWith(LeakDetection.class)
class ScriptedHappyPathTest {

    @Test
    void aSessionLogsInQueriesAndItsConnectionIsResetIntoThePool() {
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);
            assertThat(server.schema()).as("the schema Sluice logged in with").isEqualTo("app");

            client.send(MySqlWire.comQuery("SELECT 1"));
            server.expectQuery("SELECT 1");
            List<byte[]> result = oneRow("1", MySqlWire.SERVER_STATUS_AUTOCOMMIT);
            server.respond(result);
            client.expectPayloads(result).expectNothing();

            client.quit();
            assertThat(client.isOpen()).isFalse();
            server.answerReset();
            server.expectNothing();
            assertThat(sluice.pool().idleConnections()).as("idle connections after the reset").isEqualTo(1);
            assertThat(sluice.pool().openConnections()).isEqualTo(1);
        }
    }
}
