package io.sluice.backend;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.util.concurrent.Promise;
import io.sluice.config.SslMode;
import io.sluice.protocol.Capabilities;
import io.sluice.relay.ResponseKind;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.MemoryChannel;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedBackend;
import io.sluice.testing.ScriptedLoop;
import io.sluice.testing.ScriptedServerConnection;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The safety net under the rule that Sluice's own commands never share a response stream with a client's: asked to
 * run one while a client's response is outstanding, a connection refuses, fails the command and closes, since the
 * two responses could no longer be told apart. The session-level tests ({@code OwnCommandOrderTest}) show Sluice
 * never asks; this one shows what happens if it did. A bare {@link BackendConnection}, no pool: the owner and the
 * borrowing session are the test's, the server a {@link ScriptedBackend}.
 */
@ExtendWith(LeakDetection.class)
class OwnCommandBehindClientTest {

    /** The connection's life as its owner hears it. */
    private static final class Owner implements ConnectionOwner {
        final List<String> events = new ArrayList<>();

        @Override
        public void onOpened(BackendConnection connection) {
            events.add("opened");
        }

        @Override
        public void onClosed(BackendConnection connection) {
            events.add("closed");
        }

        @Override
        public void slotReleased(BackendConnection connection) {
            events.add("slot released");
        }
    }

    /** A session that only records what the connection tells it. */
    private record Session(Channel clientChannel, List<String> events) implements BorrowingSession {
        @Override
        public void onLocalInfileRequest() {
            events.add("infile");
        }

        @Override
        public void onResponsesRelayed() {
            events.add("relayed");
        }

        @Override
        public void onBackendLost(BackendConnection backend, boolean responseStarted) {
            events.add("lost, response started: " + responseStarted);
        }

        @Override
        public void onBackendWritable() {
        }

        @Override
        public String describeForLog() {
            return "test session";
        }
    }

    @Test
    void anOwnCommandBehindAClientsResponseIsRefusedAndTheConnectionClosed() {
        try (ScriptedLoop loop = new ScriptedLoop()) {
            ScriptedBackend server = new ScriptedBackend(loop);
            Owner owner = new Owner();
            Promise<BackendConnection> ready = loop.loop().newPromise();
            SessionKey key = new SessionKey(Capabilities.PROXY_SUPPORTED & ScriptedBackend.CAPABILITIES,
                    MySqlWire.UTF8MB4_GENERAL_CI);
            BackendConnection connection = new BackendConnection(new BackendEndpoint("ds_0", "scripted-backend", 3306,
                    ScriptedBackend.USER, "", SslMode.DISABLED, null), key, owner, ready, 30_000, true,
                    new ConnectionState("app", false, 0));
            server.open(loop.loop(), connection);
            loop.runTasks();
            ScriptedServerConnection backend = server.next().login();
            assertThat(ready.isSuccess()).as("logged in").isTrue();

            MemoryChannel client = new MemoryChannel(new InetSocketAddress("127.0.0.1", 3307),
                    new InetSocketAddress("127.0.0.1", 50_000), true);
            loop.register(client);
            List<String> sessionEvents = new ArrayList<>();
            connection.bind(new Session(client, sessionEvents), null, null, null);
            connection.forward(Unpooled.wrappedBuffer(MySqlWire.frame(0, MySqlWire.comQuery("SELECT SLEEP(1)"))),
                    ResponseKind.RESULT);
            connection.flush();
            backend.expectQuery("SELECT SLEEP(1)");

            AtomicReference<BackendException> initDb = new AtomicReference<>();
            connection.run(new InitDb("other", initDb::set));
            loop.runTasks();

            assertThat(initDb.get()).as("the own command's outcome").isNotNull();
            assertThat(initDb.get().getMessage()).contains("own command behind a client's");
            backend.expectNothing(); // the COM_INIT_DB never went out
            assertThat(backend.isOpen()).as("the connection, its state unknown").isFalse();
            assertThat(owner.events).containsExactly("opened", "slot released", "closed");
            assertThat(sessionEvents).containsExactly("lost, response started: false");
            client.close();
            loop.runTasks();
        }
    }
}
