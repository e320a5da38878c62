package io.sluice.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.protocol.Capabilities;
import io.sluice.testing.MemoryChannel.Packet;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A MySQL client played by the test, on Sluice's real client pipeline ({@code FrontendInitializer}: the frame decoder
 * and the login handler, which hands over to the command relay). It reads the greeting, logs in with
 * HandshakeResponse41 and sends commands, each batch as one read, so several commands sent together are pipelined as
 * a client's socket would deliver them; it reads Sluice's answers packet by packet. Bytes come from
 * {@link MySqlWire}.
 *
 * <p>Each send is followed by a loop turn, so Sluice's reaction (up to the backend, or an answer of its own) has
 * happened when it returns.
 */
public final class ScriptedClient {
    /**
     * What the client asks for: the 4.1 protocol with plugin authentication, transactions, multi-results,
     * CLIENT_DEPRECATE_EOF, and CLIENT_SESSION_TRACK, which transaction pooling needs to follow a session.
     */
    public static final int CAPABILITIES = Capabilities.CLIENT_LONG_PASSWORD | Capabilities.CLIENT_LONG_FLAG
            | Capabilities.CLIENT_PROTOCOL_41 | Capabilities.CLIENT_TRANSACTIONS | Capabilities.CLIENT_SECURE_CONNECTION
            | Capabilities.CLIENT_MULTI_RESULTS | Capabilities.CLIENT_PS_MULTI_RESULTS | Capabilities.CLIENT_PLUGIN_AUTH
            | Capabilities.CLIENT_SESSION_TRACK | Capabilities.CLIENT_DEPRECATE_EOF;

    private final MemoryChannel channel;
    private final ScriptedLoop loop;

    ScriptedClient(MemoryChannel channel, ScriptedLoop loop) {
        this.channel = channel;
        this.loop = loop;
    }

    /** The client's channel, Sluice's side of it. */
    public MemoryChannel channel() {
        return channel;
    }

    /** Whether Sluice keeps the connection open. */
    public boolean isOpen() {
        return channel.isOpen();
    }

    /**
     * Reads the greeting and sends HandshakeResponse41 for {@code user} without a password, asking for
     * {@code schema} ({@code null}: none). The answer may wait for a backend connection: read it with
     * {@link #expectOk()} once the backend has played its part.
     */
    public ScriptedClient sendLogin(String user, String schema) {
        return sendLogin(user, schema, CAPABILITIES);
    }

    /** As {@link #sendLogin(String, String)}, asking for {@code asked} (e.g. without CLIENT_SESSION_TRACK). */
    public ScriptedClient sendLogin(String user, String schema, int asked) {
        Packet greeting = expectPacket();
        assertThat(greeting.first()).as("HandshakeV10's protocol version").isEqualTo(10);
        int capabilities = schema == null ? asked : asked | Capabilities.CLIENT_CONNECT_WITH_DB;
        deliver(MySqlWire.frame(1, MySqlWire.handshakeResponse41(capabilities, 1 << 24,
                MySqlWire.UTF8MB4_GENERAL_CI, user, new byte[0], schema, "mysql_native_password")));
        return this;
    }

    /**
     * Sends commands, each a frame with sequence id 0, all in one read: pipelined when there are several.
     *
     * @param commandPayloads e.g. {@link MySqlWire#comQuery}
     */
    public ScriptedClient send(byte[]... commandPayloads) {
        List<byte[]> frames = new ArrayList<>();
        for (byte[] payload : commandPayloads) {
            frames.add(MySqlWire.frame(0, payload));
        }
        deliver(MySqlWire.concat(frames.toArray(new byte[0][])));
        return this;
    }

    /** COM_QUIT: the client says goodbye. */
    public void quit() {
        send(MySqlWire.command(MySqlWire.COM_QUIT, new byte[0]));
    }

    /** The client vanishes without a word: its connection closes. */
    public void vanish() {
        channel.peerClose();
        loop.runTasks();
    }

    private void deliver(byte[] bytes) {
        channel.deliver(bytes);
        loop.runTasks();
    }

    // ---- what Sluice answers --------------------------------------------------------------------------------

    /** The next packet Sluice sent; fails when there is none. */
    public Packet expectPacket() {
        Packet next = channel.nextPacket();
        assertThat(next).as("a packet from Sluice to the client").isNotNull();
        return next;
    }

    /** The next packet must be an OK. */
    public Packet expectOk() {
        Packet next = expectPacket();
        assertThat(next.first()).as("OK from Sluice (%s)", describe(next)).isZero();
        return next;
    }

    /** The next packet must be an ERR with {@code code}; returns its message. */
    public String expectErr(int code) {
        Packet next = expectPacket();
        assertThat(next.first()).as("ERR from Sluice (%s)", describe(next)).isEqualTo(0xFF);
        byte[] p = next.payload();
        assertThat((p[1] & 0xFF) | (p[2] & 0xFF) << 8).as("error code (%s)", describe(next)).isEqualTo(code);
        return new String(p, 9, p.length - 9, StandardCharsets.UTF_8);
    }

    /** The next packets must be exactly {@code payloads}, as the server sent them (the relay changes no byte). */
    public ScriptedClient expectPayloads(List<byte[]> payloads) {
        for (byte[] expected : payloads) {
            Packet next = expectPacket();
            assertThat(next.payload()).as("relayed packet %s", next).isEqualTo(expected);
        }
        return this;
    }

    /** As {@link #expectPayloads(List)}. */
    public ScriptedClient expectPayloads(byte[]... payloads) {
        return expectPayloads(Arrays.asList(payloads));
    }

    /** Sluice sent nothing more, not even part of a packet. */
    public ScriptedClient expectNothing() {
        assertThat(channel.nextPacket()).as("nothing more from Sluice to the client").isNull();
        assertThat(channel.unreadWrittenBytes()).as("bytes of a partial packet").isZero();
        return this;
    }

    /** Sluice closed the connection, after nothing more than what the test has read. */
    public ScriptedClient expectClosed() {
        assertThat(channel.isOpen()).as("client connection open").isFalse();
        return this;
    }

    private static String describe(Packet packet) {
        if (packet.first() == 0xFF && packet.payload().length > 9) {
            return "ERR " + new String(packet.payload(), 9, packet.payload().length - 9, StandardCharsets.UTF_8);
        }
        return packet.toString();
    }
}
