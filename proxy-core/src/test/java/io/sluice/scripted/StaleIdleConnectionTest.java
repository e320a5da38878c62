package io.sluice.scripted;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.balancer.BackendStatus;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedServerConnection;
import io.sluice.testing.ScriptedSluice;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An idle pooled connection the server has already ended (a restart, {@code wait_timeout}), whose close Sluice has
 * not seen yet, is found out when the pool selects a session's schema on it with COM_INIT_DB and it breaks. Nothing
 * of the session's reached it, so the pool lends another connection: the session must not fail, nor the backend be taken
 * down, because of one stale idle connection. (Both happened: the login was refused with "Can't connect to backend"
 * although the server took new connections, and passive health marked the backend down as if a connect had failed.)
 */
@ExtendWith(LeakDetection.class)
class StaleIdleConnectionTest {

    @Test
    void aLoginWhoseIdleConnectionBreaksOnItsSchemaGetsAnotherOne() {
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            ScriptedClient first = sluice.connectAndLogin("app");
            ScriptedServerConnection stale = sluice.backend().connection(0);
            first.quit();
            stale.answerReset();
            assertThat(sluice.pool().idleConnections()).isEqualTo(1);

            ScriptedClient second = sluice.connect().sendLogin(ScriptedSluice.USER, "other");
            stale.expectCommand(MySqlWire.COM_INIT_DB, "other"); // the idle connection, on schema app
            stale.die();

            assertThat(sluice.backend().opened()).as("connections opened: another one for the login").isEqualTo(2);
            ScriptedServerConnection fresh = sluice.backend().next().login();
            assertThat(fresh.schema()).isEqualTo("other");
            second.expectOk();
            assertThat(sluice.pool().openConnections()).isEqualTo(1);
            assertThat(sluice.group().backend(ScriptedSluice.DATA_SOURCE).status()).as("the backend, for the balancer")
                    .isEqualTo(BackendStatus.UP);
        }
    }

    @Test
    void aRefusedSchemaIsStillTheSessionsError() {
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(2)) {
            ScriptedClient first = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);
            first.quit();
            server.answerReset();

            ScriptedClient second = sluice.connect().sendLogin(ScriptedSluice.USER, "nope");
            server.expectCommand(MySqlWire.COM_INIT_DB, "nope");
            server.respond(MySqlWire.err(1049, "42000", "Unknown database 'nope'"));

            assertThat(second.expectErr(1049)).contains("Unknown database 'nope'");
            assertThat(sluice.backend().opened()).as("no other connection for a refusal").isEqualTo(1);
            assertThat(sluice.pool().idleConnections()).as("the connection, as it was, back in the pool")
                    .isEqualTo(1);
        }
    }
}
