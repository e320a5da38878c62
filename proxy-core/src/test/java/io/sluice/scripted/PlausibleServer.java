package io.sluice.scripted;

import io.sluice.relay.ResponseKind;
import io.sluice.testing.MemoryChannel.Packet;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedBackend;
import io.sluice.testing.ScriptedServerConnection;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Plays every connection of a {@link ScriptedBackend} as a server would, whatever Sluice sends: it logs new connections
 * in, answers Sluice's own commands (reset, session trackers, session check) as a clean server, and answers the
 * client's commands with what a server may plausibly send for each command (OK, ERR, a small result, a
 * COM_STMT_PREPARE_OK with its definitions; nothing for COM_STMT_CLOSE and COM_STMT_SEND_LONG_DATA), chosen from the
 * test's seeded random.
 *
 * <p>It also keeps what a server knows about each connection, for the fuzz tests' pool invariant: whether it owes an
 * answer, whether a transaction is open, and whether a client's command ran on it since its last session check (the
 * reset Sluice must run before pooling it again in session pooling).
 */
final class PlausibleServer {
    private static final String SESSION_CHECK = "SELECT DATABASE(), @@character_set_client";
    private static final String SESSION_TRACKERS = "SET SESSION session_track_system_variables";
    private static final int MAX_ROUNDS = 100;

    private final ScriptedBackend backend;
    private final Random random;
    /** The connections not yet seen closed, by their index in the backend: a long run opens tens of thousands. */
    private final TreeMap<Integer, Known> live = new TreeMap<>();
    private int seen;
    private int nextStatementId = 1;
    private boolean hostile;

    /** What the server knows of one connection. */
    private static final class Known {
        final ArrayDeque<Packet> backlog = new ArrayDeque<>();
        boolean loggedIn;
        boolean inTransaction;
        boolean clientCommandSinceCheck;
    }

    PlausibleServer(ScriptedBackend backend, Random random) {
        this.backend = backend;
        this.random = random;
    }

    /**
     * From now on ({@code on}) the answer to each client COM_QUERY is damaged before it is sent, in one to three reads:
     * bytes flipped, cut short, garbage spliced in or appended, a stretch repeated. Sluice's own commands are still
     * answered as a clean server does.
     */
    void hostile(boolean on) {
        hostile = on;
    }

    /** Logs in new connections and answers everything Sluice sent, until Sluice sends nothing more. */
    void serve() {
        for (int round = 0; round < MAX_ROUNDS; round++) {
            if (!step()) {
                return;
            }
        }
        throw new AssertionError("Sluice and the server still talking after " + MAX_ROUNDS + " rounds");
    }

    /** Reads what Sluice sent into each connection's backlog, without answering. */
    void receive() {
        while (seen < backend.opened()) {
            live.put(seen++, new Known());
        }
        for (Map.Entry<Integer, Known> entry : live.entrySet()) {
            Known k = entry.getValue();
            if (!k.loggedIn) {
                continue;
            }
            for (Packet p; (p = backend.connection(entry.getKey()).channel().nextPacket()) != null; ) {
                k.backlog.add(p);
            }
        }
    }

    /**
     * Open connections the pool may hold idle: logged in, owing no answer, no transaction open and, in session
     * pooling ({@code resetBeforePooling}), no client command since the last session check. The pool's idle count must
     * never exceed it.
     */
    int clean(boolean resetBeforePooling) {
        receive();
        int clean = 0;
        for (Map.Entry<Integer, Known> entry : live.entrySet()) {
            Known k = entry.getValue();
            if (backend.connection(entry.getKey()).isOpen() && k.loggedIn && !owesAnswer(k) && !k.inTransaction
                    && !(resetBeforePooling && k.clientCommandSinceCheck)) {
                clean++;
            }
        }
        return clean;
    }

    /** Each connection as the server sees it, for a failure's message. */
    String describe() {
        StringBuilder out = new StringBuilder();
        for (Map.Entry<Integer, Known> entry : live.entrySet()) {
            int i = entry.getKey();
            Known k = entry.getValue();
            out.append(String.format("%n  connection %d: %s%s, backlog %s%s%s", i,
                    backend.connection(i).isOpen() ? "open" : "closed", k.loggedIn ? "" : ", not logged in",
                    k.backlog, k.inTransaction ? ", in a transaction" : "",
                    k.clientCommandSinceCheck ? ", used since its check" : ""));
        }
        return out.toString();
    }

    private static boolean owesAnswer(Known k) {
        for (Packet p : k.backlog) {
            ResponseKind kind = p.first() < 0 ? null : ResponseKind.of(p.first());
            if (kind != null && kind != ResponseKind.NONE) {
                return true;
            }
        }
        return false;
    }

    private boolean step() {
        receive();
        boolean acted = false;
        for (Iterator<Map.Entry<Integer, Known>> it = live.entrySet().iterator(); it.hasNext(); ) {
            Map.Entry<Integer, Known> entry = it.next();
            ScriptedServerConnection connection = backend.connection(entry.getKey());
            Known k = entry.getValue();
            if (!connection.isOpen()) {
                it.remove(); // closed for good: nothing more to answer or count
                continue;
            }
            if (!k.loggedIn) {
                if (connection.channel().isActive()) {
                    k.loggedIn = true;
                    connection.login();
                    acted = true;
                }
                continue;
            }
            Packet p = k.backlog.poll();
            if (p != null) {
                answer(connection, k, p);
                acted = true;
            }
        }
        return acted;
    }

    private void answer(ScriptedServerConnection connection, Known k, Packet command) {
        int c = command.first();
        ResponseKind kind = c < 0 ? null : ResponseKind.of(c);
        if (kind == null || kind == ResponseKind.NONE) {
            k.clientCommandSinceCheck |= c == MySqlWire.COM_STMT_CLOSE || c == 0x18;
            return;
        }
        int seq = command.sequenceId() + 1;
        String text = c == MySqlWire.COM_QUERY
                ? new String(command.payload(), 1, command.payload().length - 1, StandardCharsets.UTF_8) : "";
        if (text.startsWith(SESSION_CHECK)) {
            k.clientCommandSinceCheck = false;
            reply(connection, seq, connection.sessionCheckResult(text.contains("session_track")));
            return;
        }
        if (c == MySqlWire.COM_INIT_DB) {
            // Sluice selects a schema on an idle connection itself before lending it, and pools it again, schema
            // and all, when the session it was for has left meanwhile: the pool keys on the schema. Nor does a USE
            // ever open or end a transaction. (Long run, seed 1006, case 36,192: this model had flipped the
            // transaction state on Sluice's own COM_INIT_DB and counted it as the client's.)
            // The same draws from the random as any other command's answer, so that a seed replays as it ran.
            if (random.nextInt(6) == 0) {
                reply(connection, seq, List.of(MySqlWire.err(1049, "42000", "Unknown database")));
            } else {
                random.nextInt(5);
                reply(connection, seq, List.of(MySqlWire.ok(status(k.inTransaction))));
            }
            return;
        }
        if (text.startsWith(SESSION_TRACKERS) || c == MySqlWire.COM_RESET_CONNECTION) {
            if (c == MySqlWire.COM_RESET_CONNECTION) {
                k.inTransaction = false;
            }
            reply(connection, seq, List.of(MySqlWire.ok(MySqlWire.SERVER_STATUS_AUTOCOMMIT)));
            return;
        }
        k.clientCommandSinceCheck = true;
        if (random.nextInt(6) == 0) {
            reply(connection, seq, List.of(MySqlWire.err(1064, "42000", "You have an error in your SQL syntax")));
            return; // an ERR leaves the transaction as it was
        }
        // Only an OK or a result's end carries a status: a transaction opens or closes there, not at an ERR or a
        // COM_STMT_PREPARE_OK.
        boolean carriesStatus = kind != ResponseKind.PREPARE && kind != ResponseKind.ROWS
                && kind != ResponseKind.FIELD_LIST;
        int status = carriesStatus ? status(k) : status(k.inTransaction);
        switch (kind) {
            case RESULT:
                List<byte[]> result = random.nextBoolean() ? List.of(MySqlWire.ok(status))
                        : Fixtures.oneRow("1", status);
                if (hostile) {
                    sendDamaged(connection, MySqlWire.frames(seq, result));
                } else {
                    reply(connection, seq, result);
                }
                break;
            case BINARY_RESULT:
                reply(connection, seq, random.nextBoolean() ? List.of(MySqlWire.ok(status))
                        : MySqlWire.resultSet(connection.deprecateEof(),
                                List.of(MySqlWire.columnDefinition("1", MySqlWire.MYSQL_TYPE_LONG)),
                                List.of(MySqlWire.binaryRow(1)), status));
                break;
            case PREPARE:
                reply(connection, seq, prepareOk(connection.deprecateEof(), status));
                break;
            case ROWS:
            case FIELD_LIST:
                reply(connection, seq, List.of(MySqlWire.err(1243, "HY000", "Unknown prepared statement handler")));
                break;
            default: // SINGLE
                reply(connection, seq, List.of(MySqlWire.ok(status)));
        }
    }

    /** Autocommit, now and then a transaction opened or closed; the connection remembers which. */
    private int status(Known k) {
        if (random.nextInt(5) == 0) {
            k.inTransaction = !k.inTransaction;
        }
        return status(k.inTransaction);
    }

    private static int status(boolean inTransaction) {
        return MySqlWire.SERVER_STATUS_AUTOCOMMIT | (inTransaction ? MySqlWire.SERVER_STATUS_IN_TRANS : 0);
    }

    private List<byte[]> prepareOk(boolean deprecateEof, int status) {
        int params = random.nextInt(3);
        int columns = random.nextInt(2);
        List<byte[]> packets = new ArrayList<>();
        packets.add(MySqlWire.prepareOk(nextStatementId++, columns, params, 0));
        for (int[] group : new int[][] {{params}, {columns}}) {
            for (int i = 0; i < group[0]; i++) {
                packets.add(MySqlWire.columnDefinition("?", MySqlWire.MYSQL_TYPE_LONG));
            }
            if (group[0] > 0 && !deprecateEof) {
                packets.add(MySqlWire.eof(status));
            }
        }
        return packets;
    }

    private void sendDamaged(ScriptedServerConnection connection, byte[] bytes) {
        byte[] out = bytes.clone();
        switch (random.nextInt(5)) {
            case 0:
                for (int n = 1 + random.nextInt(3); n > 0; n--) {
                    out[random.nextInt(out.length)] = (byte) random.nextInt(256);
                }
                break;
            case 1:
                out = Arrays.copyOf(bytes, random.nextInt(bytes.length));
                break;
            case 2: { // a stretch repeated: part of a packet, or a whole one, twice
                int from = random.nextInt(bytes.length);
                int to = from + random.nextInt(bytes.length - from + 1);
                out = MySqlWire.concat(Arrays.copyOf(bytes, to), Arrays.copyOfRange(bytes, from, bytes.length));
                break;
            }
            default: { // garbage after the response
                byte[] garbage = new byte[1 + random.nextInt(12)];
                random.nextBytes(garbage);
                out = MySqlWire.concat(bytes, garbage);
            }
        }
        for (int at = 0; at < out.length; ) {
            int end = Math.min(out.length, at + 1 + random.nextInt(out.length));
            connection.send(Arrays.copyOfRange(out, at, end));
            at = end;
        }
    }

    private static void reply(ScriptedServerConnection connection, int firstSequenceId, List<byte[]> payloads) {
        connection.send(MySqlWire.frames(firstSequenceId, payloads));
    }
}
