package io.sluice.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.Unpooled;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.HandshakeResponse41;
import io.sluice.testing.MemoryChannel.Packet;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One connection of the {@link ScriptedBackend}: the test plays the server, step by step. It greets and accepts
 * Sluice's login, then reads each command Sluice sends ({@code expect...}, which fail the test when Sluice sent
 * something else) and answers it ({@code respond}, whose payloads come from {@link MySqlWire}), or dies in the middle
 * of an exchange ({@link #die}). Each answer is one read for Sluice, followed by a loop turn, so what Sluice does in
 * reaction has happened when the method returns; {@link #sendWithoutTurn} leaves the loop's tasks queued, for tests
 * about what runs in which stack.
 *
 * <p>Sequence ids: a command from Sluice starts at 0, and the answer runs on from 1, as a server numbers it.
 */
public final class ScriptedServerConnection {
    /** Session check values: character sets, collation, sql_mode, wait_timeout, as a fresh MySQL 8 session has them. */
    private static final String CHARSET = "utf8mb4";
    private static final String COLLATION = "utf8mb4_general_ci";
    private static final String SQL_MODE = "STRICT_TRANS_TABLES";
    private static final String WAIT_TIMEOUT = "28800";
    /** How Sluice's session check and its session trackers begin; the rest is Sluice's business. */
    private static final String SESSION_CHECK = "SELECT DATABASE(), @@character_set_client";
    private static final String SESSION_TRACKERS = "SET SESSION session_track_system_variables";

    private final MemoryChannel channel;
    private final int connectionId;
    private final ScriptedLoop loop;
    private int nextSequenceId;
    private int clientCapabilities;
    private String user;
    private String schema;

    ScriptedServerConnection(MemoryChannel channel, int connectionId, ScriptedLoop loop) {
        this.channel = channel;
        this.connectionId = connectionId;
        this.loop = loop;
    }

    /** The channel Sluice's connection runs on. */
    public MemoryChannel channel() {
        return channel;
    }

    /** The id the server gave the connection in its greeting. */
    public int connectionId() {
        return connectionId;
    }

    /** Whether the connection is open on Sluice's side (it closes it, or the server died). */
    public boolean isOpen() {
        return channel.isOpen();
    }

    /** The schema selected now, as the server knows it (the login's, or a COM_INIT_DB's). */
    public String schema() {
        return schema;
    }

    /** Whether Sluice asked for CLIENT_DEPRECATE_EOF: results then end with an OK headed 0xFE, not an EOF. */
    public boolean deprecateEof() {
        return Capabilities.has(clientCapabilities, Capabilities.CLIENT_DEPRECATE_EOF);
    }

    // ---- the login ------------------------------------------------------------------------------------------------

    /** Sends HandshakeV10 with mysql_native_password, as a server does once a client connects. */
    public ScriptedServerConnection greet() {
        byte[] scramble = "0123456789abcdefghij".getBytes(StandardCharsets.US_ASCII);
        nextSequenceId = 0;
        send(MySqlWire.frame(nextSequenceId++, MySqlWire.handshakeV10(ScriptedBackend.SERVER_VERSION, connectionId,
                scramble, ScriptedBackend.CAPABILITIES, MySqlWire.UTF8MB4_GENERAL_CI,
                MySqlWire.SERVER_STATUS_AUTOCOMMIT, "mysql_native_password")));
        return this;
    }

    /**
     * Reads Sluice's HandshakeResponse41 (sequence id 1): the account must be the data source's; the schema it names
     * becomes the connection's.
     */
    public ScriptedServerConnection expectHandshakeResponse() {
        Packet response = expectPacket();
        assertThat(response.sequenceId()).as("HandshakeResponse41's sequence id").isEqualTo(1);
        byte[] p = response.payload();
        clientCapabilities = (p[0] & 0xFF) | (p[1] & 0xFF) << 8 | (p[2] & 0xFF) << 16 | (p[3] & 0xFF) << 24;
        int at = 4 + 4 + 1 + 23;
        int nul = indexOf(p, at);
        user = new String(p, at, nul - at, StandardCharsets.UTF_8);
        at = nul + 1;
        at += 1 + (p[at] & 0xFF); // the auth response, one length byte (a lenenc under 251 is the same)
        if (Capabilities.has(clientCapabilities, Capabilities.CLIENT_CONNECT_WITH_DB)) {
            nul = indexOf(p, at);
            schema = new String(p, at, nul - at, StandardCharsets.UTF_8);
        }
        assertThat(user).as("the account Sluice logs in with").isEqualTo(ScriptedBackend.USER);
        nextSequenceId = response.sequenceId() + 1;
        return this;
    }

    /**
     * The login of a session's own server account (issue #39): reads HandshakeResponse41 (sequence id 1), whatever
     * the account, and returns it for the test to check; the schema it names becomes the connection's. The test then
     * answers with {@link #send} (an auth switch, say) or {@link #acceptAndCheck}.
     */
    public HandshakeResponse41 expectLoginOfAnyAccount() {
        Packet response = expectPacket();
        assertThat(response.sequenceId()).as("HandshakeResponse41's sequence id").isEqualTo(1);
        HandshakeResponse41 login = HandshakeResponse41.parse(Unpooled.wrappedBuffer(response.payload()));
        clientCapabilities = login.capabilities();
        user = login.user();
        if (Capabilities.has(clientCapabilities, Capabilities.CLIENT_CONNECT_WITH_DB)) {
            schema = login.database();
        }
        nextSequenceId = response.sequenceId() + 1;
        return login;
    }

    /** Ends a login the test ran itself: OK at {@code okSequenceId}, then Sluice's post-login commands answered. */
    public ScriptedServerConnection acceptAndCheck(int okSequenceId) {
        send(MySqlWire.frame(okSequenceId, MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)));
        return answerTrackersAndCheck(MySqlWire.concat());
    }

    /** Greets, reads the login and accepts it with OK; the password is not checked. */
    public ScriptedServerConnection acceptLogin() {
        greet();
        expectHandshakeResponse();
        return respond(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT));
    }

    /**
     * The whole login as Sluice runs it: greeting, HandshakeResponse41, OK, then Sluice's post-login commands, sent
     * together: the session trackers when it follows session state (transaction pooling), answered OK, and the
     * session check, answered with this server's row. The connection is then ready for the pool.
     */
    public ScriptedServerConnection login() {
        acceptLogin();
        return answerTrackersAndCheck(MySqlWire.concat());
    }

    /**
     * Reads the reset Sluice runs before it pools a connection again, sent together: COM_RESET_CONNECTION, the
     * session trackers when it follows session state (transaction pooling), the session check; answers it as a clean
     * reset, all in one read.
     */
    public ScriptedServerConnection answerReset() {
        expectCommand(MySqlWire.COM_RESET_CONNECTION);
        return answerTrackersAndCheck(response(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)));
    }

    /** Reads the session trackers, if they come, and the session check; sends {@code before} and their answers. */
    private ScriptedServerConnection answerTrackersAndCheck(byte[] before) {
        Packet next = expectCommand(MySqlWire.COM_QUERY);
        byte[] trackers = new byte[0];
        if (text(next).startsWith(SESSION_TRACKERS)) {
            trackers = response(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT));
            next = expectCommand(MySqlWire.COM_QUERY);
        }
        assertThat(text(next)).as("Sluice's session check").startsWith(SESSION_CHECK);
        return send(before, trackers, response(sessionCheckResult(text(next).contains("session_track"))));
    }

    /** The answer to Sluice's session check: one row of the schema and the session's character sets and modes. */
    public List<byte[]> sessionCheckResult() {
        return sessionCheckResult(false);
    }

    /**
     * As {@link #sessionCheckResult()}, with the default session trackers too when {@code trackerDefaults} (a
     * connection that follows session state asks for them): MariaDB's variables list, and, since this server greets
     * as MySQL, {@code session_track_gtids} as MySQL 8.0 has it by default ({@code OFF}).
     */
    public List<byte[]> sessionCheckResult(boolean trackerDefaults) {
        return sessionCheckResult(trackerDefaults, false);
    }

    /**
     * As {@link #sessionCheckResult(boolean)}, with the session's access mode, READ ONLY, last when
     * {@code accessMode} (a replica's connection asks for it, decision 110).
     */
    public List<byte[]> sessionCheckResult(boolean trackerDefaults, boolean accessMode) {
        return sessionCheckResult(schema, deprecateEof(), trackerDefaults, accessMode);
    }

    /**
     * The answer to Sluice's session check on a connection whose schema is {@code schema}, for a scripted server that
     * is not one of these ({@link ScriptedMySqlServer}); as {@link #sessionCheckResult(boolean, boolean)}.
     */
    public static List<byte[]> sessionCheckResult(String schema, boolean deprecateEof, boolean trackerDefaults,
            boolean accessMode) {
        List<String> names = new ArrayList<>(List.of("DATABASE()", "client", "connection", "results", "collation",
                "sql_mode", "wait_timeout"));
        // Arrays.asList: DATABASE() is NULL on a connection without a schema.
        List<String> values = new ArrayList<>(Arrays.asList(schema, CHARSET, CHARSET, CHARSET, COLLATION, SQL_MODE,
                WAIT_TIMEOUT));
        if (trackerDefaults) {
            names.addAll(List.of("variables", "schema", "state_change", "gtids"));
            values.addAll(List.of("autocommit,character_set_client,character_set_connection,character_set_results,"
                    + "time_zone", "ON", "OFF", "OFF"));
        }
        if (accessMode) {
            names.add("read_only");
            values.add("1");
        }
        List<byte[]> columns = new ArrayList<>();
        for (String name : names) {
            columns.add(MySqlWire.columnDefinition(name, MySqlWire.MYSQL_TYPE_VAR_STRING));
        }
        byte[] row = MySqlWire.textRow(values.toArray(new String[0]));
        return MySqlWire.resultSet(deprecateEof, columns, List.of(row), MySqlWire.SERVER_STATUS_AUTOCOMMIT);
    }

    // ---- commands ---------------------------------------------------------------------------------------------

    /** The next packet Sluice sent; fails when it sent none. */
    public Packet expectPacket() {
        Packet next = channel.nextPacket();
        assertThat(next).as("a packet from Sluice on backend connection %d", connectionId).isNotNull();
        return next;
    }

    /** The next command Sluice sent, which must be {@code command} (sequence id 0); the answer starts at 1. */
    public Packet expectCommand(int command) {
        Packet next = expectPacket();
        assertThat(next.first()).as("command on backend connection %d (%s)", connectionId, describe(next))
                .isEqualTo(command);
        assertThat(next.sequenceId()).as("a command's sequence id").isZero();
        nextSequenceId = 1;
        if (command == MySqlWire.COM_INIT_DB) {
            schema = text(next);
        }
        return next;
    }

    /**
     * The next command Sluice sent, whatever it is, or {@code null} when it sent none: for a test that plays the
     * server by rules rather than by a fixed script. The answer starts at sequence id 1.
     */
    public Packet nextCommand() {
        Packet next = channel.nextPacket();
        if (next != null) {
            assertThat(next.sequenceId()).as("a command's sequence id").isZero();
            nextSequenceId = 1;
            if (next.first() == MySqlWire.COM_INIT_DB) {
                schema = text(next);
            }
        }
        return next;
    }

    /** The next command must be {@code command} with {@code argument} (UTF-8) after the command byte. */
    public Packet expectCommand(int command, String argument) {
        Packet next = expectCommand(command);
        assertThat(text(next)).as("argument of command 0x%s", Integer.toHexString(command)).isEqualTo(argument);
        return next;
    }

    /** The next command must be COM_QUERY of exactly {@code sql}. */
    public Packet expectQuery(String sql) {
        return expectCommand(MySqlWire.COM_QUERY, sql);
    }

    /** The next command must be COM_QUERY of SQL that starts with {@code prefix}. */
    public Packet expectQueryStartingWith(String prefix) {
        Packet next = expectCommand(MySqlWire.COM_QUERY);
        assertThat(text(next)).startsWith(prefix);
        return next;
    }

    /**
     * The next command must be a prepared-statement command ({@code COM_STMT_EXECUTE}, {@code COM_STMT_CLOSE}, ...)
     * on statement {@code statementId}: the id as this server gave it, which Sluice must have put in place of the
     * client's.
     */
    public Packet expectStatementCommand(int command, int statementId) {
        Packet next = expectCommand(command);
        byte[] p = next.payload();
        int id = (p[1] & 0xFF) | (p[2] & 0xFF) << 8 | (p[3] & 0xFF) << 16 | (p[4] & 0xFF) << 24;
        assertThat(id).as("statement id in command 0x%s", Integer.toHexString(command)).isEqualTo(statementId);
        return next;
    }

    /** Sluice sent nothing more, not even part of a packet. */
    public ScriptedServerConnection expectNothing() {
        Packet next = channel.nextPacket();
        assertThat(next).as("nothing more from Sluice on backend connection %d", connectionId).isNull();
        assertThat(channel.unreadWrittenBytes()).as("bytes of a partial packet").isZero();
        return this;
    }

    // ---- answers ----------------------------------------------------------------------------------------------

    /** Answers the last command with {@code payloads}, numbered on from its sequence id, in one read; then a turn. */
    public ScriptedServerConnection respond(byte[]... payloads) {
        return respond(Arrays.asList(payloads));
    }

    /** As {@link #respond(byte[]...)}. */
    public ScriptedServerConnection respond(List<byte[]> payloads) {
        MySqlWire.Frames frames = new MySqlWire.Frames(nextSequenceId).packets(payloads);
        nextSequenceId = frames.sequenceId();
        send(frames.toBytes());
        return this;
    }

    /**
     * One response to a command (sequence ids from 1), to be sent with others in one read: the answers to commands
     * Sluice pipelined.
     */
    public static byte[] response(byte[]... payloads) {
        return MySqlWire.frames(1, Arrays.asList(payloads));
    }

    /** As {@link #response(byte[]...)}. */
    public static byte[] response(List<byte[]> payloads) {
        return MySqlWire.frames(1, payloads);
    }

    /** Sends {@code parts} as they are, together in one read, then lets the loop turn. */
    public ScriptedServerConnection send(byte[]... parts) {
        sendWithoutTurn(parts);
        loop.runTasks();
        return this;
    }

    /** Sends {@code bytes} in reads of {@code size} bytes each (the last may be shorter), a loop turn after each. */
    public ScriptedServerConnection sendInPieces(byte[] bytes, int size) {
        for (int at = 0; at < bytes.length; at += size) {
            send(Arrays.copyOfRange(bytes, at, Math.min(bytes.length, at + size)));
        }
        return this;
    }

    /** Sends {@code parts} in one read and leaves what Sluice queued meanwhile for the test to run. */
    public ScriptedServerConnection sendWithoutTurn(byte[]... parts) {
        channel.deliver(MySqlWire.concat(parts));
        return this;
    }

    /** The server dies: it closes the connection now, whatever is in flight; then the loop turns. */
    public void die() {
        channel.peerClose();
        loop.runTasks();
    }

    /** What follows the command byte, as UTF-8: a COM_QUERY's SQL. */
    public static String text(Packet packet) {
        byte[] p = packet.payload();
        return new String(p, 1, p.length - 1, StandardCharsets.UTF_8);
    }

    private static String describe(Packet packet) {
        return packet.first() == MySqlWire.COM_QUERY ? "COM_QUERY " + text(packet) : packet.toString();
    }

    private static int indexOf(byte[] bytes, int from) {
        for (int i = from; i < bytes.length; i++) {
            if (bytes[i] == 0) {
                return i;
            }
        }
        throw new AssertionError("no NUL after byte " + from);
    }
}
