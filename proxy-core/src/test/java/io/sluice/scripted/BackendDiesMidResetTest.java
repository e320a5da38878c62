package io.sluice.scripted;

import static io.sluice.testing.ScriptedServerConnection.response;
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
 * A backend dies while Sluice resets a connection whose session ended (COM_RESET_CONNECTION and the session check,
 * pipelined). The connection is closed and never pooled, its {@code maxPoolSize} slot is freed, and a session that
 * waits for a connection gets another one: whether it waited for a slot of the full pool, or for that very reset
 * (the reset hand-off). The packets of the half-read session check are released (paranoid leak detector).
 */
@ExtendWith(LeakDetection.class)
class BackendDiesMidResetTest {

    @Test
    void aSessionWaitingForASlotGetsANewConnection() {
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(1)) {
            ScriptedClient leaving = sluice.connectAndLogin("app");
            ScriptedServerConnection first = sluice.backend().connection(0);
            ScriptedClient waiting = sluice.connect().sendLogin(ScriptedSluice.USER, "app");
            assertThat(sluice.pool().pendingAcquires()).as("sessions waiting for the full pool").isEqualTo(1);
            waiting.expectNothing();

            leaving.quit();
            dieMidReset(first);

            assertThat(first.isOpen()).as("the connection that died mid-reset").isFalse();
            assertThat(sluice.pool().idleConnections()).as("idle connections").isZero();
            assertThat(sluice.backend().opened()).as("connections opened: the dead one's slot went to the waiter")
                    .isEqualTo(2);
            sluice.backend().connection(1).login();
            waiting.expectOk();
            assertThat(sluice.pool().pendingAcquires()).isZero();
            assertThat(sluice.pool().openConnections()).isEqualTo(1);
        }
    }

    @Test
    void aSessionWaitingForThatResetGetsANewConnection() {
        try (ScriptedSluice sluice = ScriptedSluice.sessionPooling(1)) {
            ScriptedClient leaving = sluice.connectAndLogin("app");
            ScriptedServerConnection first = sluice.backend().connection(0);
            leaving.quit();
            first.expectCommand(MySqlWire.COM_RESET_CONNECTION);
            // A login while the reset is in flight waits for it rather than opening a connection (decision 054).
            ScriptedClient waiting = sluice.connect().sendLogin(ScriptedSluice.USER, "app");
            assertThat(sluice.backend().opened()).as("connections opened while the reset runs").isEqualTo(1);

            first.expectQueryStartingWith("SELECT DATABASE()");
            first.die(); // before answering anything

            assertThat(sluice.pool().idleConnections()).as("idle connections").isZero();
            assertThat(sluice.backend().opened()).as("connections opened once the reset failed").isEqualTo(2);
            sluice.backend().connection(1).login();
            waiting.expectOk();
            assertThat(sluice.pool().openConnections()).isEqualTo(1);
        }
    }

    @Test
    void theSessionTrackersAreResetToo() {
        // Transaction pooling pipelines three own commands: the reset, the session trackers, the check.
        try (ScriptedSluice sluice = ScriptedSluice.transactionPooling(1)) {
            ScriptedClient leaving = sluice.connectAndLogin("app");
            ScriptedServerConnection first = sluice.backend().connection(0);
            leaving.send(MySqlWire.comQuery("BEGIN"));
            first.expectQuery("BEGIN");
            first.respond(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT | MySqlWire.SERVER_STATUS_IN_TRANS));
            leaving.expectOk();
            leaving.quit();

            first.expectCommand(MySqlWire.COM_RESET_CONNECTION);
            first.expectQueryStartingWith("SET SESSION session_track_system_variables");
            first.expectQueryStartingWith("SELECT DATABASE()");
            first.send(response(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)),
                    response(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)),
                    response(first.sessionCheckResult().subList(0, 4)));
            first.die();

            assertThat(sluice.pool().idleConnections()).as("idle connections").isZero();
            assertThat(sluice.pool().openConnections()).as("open connections (slots taken)").isZero();
            ScriptedClient next = sluice.connect().sendLogin(ScriptedSluice.USER, "app");
            next.expectOk(); // transaction pooling: the schema is known, no connection needed to log in
            next.send(MySqlWire.comQuery("SELECT 1"));
            assertThat(sluice.backend().opened()).as("a new connection for the next session").isEqualTo(2);
            sluice.backend().next().login().expectQuery("SELECT 1");
        }
    }

    /** Answers the reset, then dies after the first packets of the session check. */
    private static void dieMidReset(ScriptedServerConnection server) {
        server.expectCommand(MySqlWire.COM_RESET_CONNECTION);
        server.expectQueryStartingWith("SELECT DATABASE()"); // sent with the reset, before its answer
        List<byte[]> check = server.sessionCheckResult();
        server.send(response(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)), response(check.subList(0, 3)));
        server.die();
    }
}
