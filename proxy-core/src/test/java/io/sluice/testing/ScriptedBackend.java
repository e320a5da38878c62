package io.sluice.testing;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelPromise;
import io.netty.channel.EventLoop;
import io.sluice.backend.BackendServerInfo;
import io.sluice.protocol.Capabilities;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * A MySQL server played by the test, for Sluice's real backend connections to talk to. Sluice's pool opens its
 * connections here instead of over TCP ({@link #open}, installed by {@link ScriptedSluice} through the pool's one
 * seam); each one is a {@link ScriptedServerConnection} the test drives: it reads the commands Sluice sends, answers
 * them with bytes from {@link MySqlWire}, or closes the connection where the server is to die. What stands between the
 * two (the login, the in-flight queue, the relay, Sluice's own commands, the pool) is Sluice's own code.
 *
 * <p>A test that wants a connection without the pool registers one itself: {@link #open} takes any handler.
 */
public final class ScriptedBackend {
    /** What the server says it is in its greeting. */
    public static final String SERVER_VERSION = "8.0.36-scripted";
    /**
     * What it offers: the 4.1 protocol, transactions, plugin authentication, multi-results, session tracking and
     * CLIENT_DEPRECATE_EOF, and CLIENT_LONG_PASSWORD, which makes Sluice take it for MySQL (no MariaDB extended
     * capabilities).
     */
    public static final int CAPABILITIES = Capabilities.CLIENT_LONG_PASSWORD | Capabilities.CLIENT_FOUND_ROWS
            | Capabilities.CLIENT_LONG_FLAG | Capabilities.CLIENT_CONNECT_WITH_DB | Capabilities.CLIENT_PROTOCOL_41
            | Capabilities.CLIENT_TRANSACTIONS | Capabilities.CLIENT_SECURE_CONNECTION
            | Capabilities.CLIENT_MULTI_STATEMENTS | Capabilities.CLIENT_MULTI_RESULTS
            | Capabilities.CLIENT_PS_MULTI_RESULTS | Capabilities.CLIENT_PLUGIN_AUTH | Capabilities.CLIENT_SESSION_TRACK
            | Capabilities.CLIENT_DEPRECATE_EOF;
    /** The data source's account, which Sluice logs in with. */
    public static final String USER = "sluice_backend";
    /** The server's address, as the data source's URL names it. */
    public static final InetSocketAddress ADDRESS = InetSocketAddress.createUnresolved("scripted-backend", 3306);

    private final ScriptedLoop loop;
    private final List<ScriptedServerConnection> connections = new ArrayList<>();
    private int claimed;

    public ScriptedBackend(ScriptedLoop loop) {
        this.loop = loop;
    }

    /** The greeting's face, for a proxy that presents this server to its clients. */
    public static BackendServerInfo serverInfo() {
        return new BackendServerInfo(SERVER_VERSION, CAPABILITIES, MySqlWire.UTF8MB4_GENERAL_CI);
    }

    /**
     * Opens a connection for {@code handler}, as a TCP connect to this server would: the channel is registered on
     * {@code on} at once and connected in the loop's next turn, where the handler hears {@code channelActive} and
     * waits for the greeting ({@link ScriptedServerConnection#greet}).
     *
     * @param on the loop Sluice registers the connection on: must be this server's loop (a session's connections run
     *     on its client's loop)
     * @return completes when the connection is up
     */
    public ChannelFuture open(EventLoop on, ChannelHandler handler) {
        if (on != loop.loop()) {
            throw new AssertionError("connection opened on " + on + " (expected: the test's one loop)");
        }
        int number = connections.size();
        // Ports wrap: a long fuzz run opens more connections than there are ports.
        MemoryChannel channel = new MemoryChannel(new InetSocketAddress("127.0.0.1", 40_000 + number % 10_000),
                ADDRESS, false);
        channel.pipeline().addLast(handler);
        connections.add(new ScriptedServerConnection(channel, 100 + number, loop));
        loop.register(channel);
        ChannelPromise connected = channel.newPromise();
        on.execute(() -> {
            channel.connected();
            connected.trySuccess();
        });
        return connected;
    }

    /** Connections Sluice has opened so far. */
    public int opened() {
        return connections.size();
    }

    /** The {@code index}th connection Sluice opened (0 is the first). */
    public ScriptedServerConnection connection(int index) {
        return connections.get(index);
    }

    /**
     * The oldest connection not yet returned by this method: the one Sluice opened next.
     *
     * @throws AssertionError when Sluice has opened no other connection
     */
    public ScriptedServerConnection next() {
        if (claimed >= connections.size()) {
            throw new AssertionError("Sluice opened " + connections.size() + " connection(s), all already scripted");
        }
        return connections.get(claimed++);
    }

    /** Connections still open, on Sluice's side. */
    public int openNow() {
        return (int) connections.stream().filter(ScriptedServerConnection::isOpen).count();
    }

    /** Closes every connection still open, as a server that stops; the loop then runs Sluice's reactions. */
    public void stop() {
        connections.forEach(c -> c.channel().peerClose());
        loop.runTasks();
    }
}
