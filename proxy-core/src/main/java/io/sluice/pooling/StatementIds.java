package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.netty.util.collection.IntObjectHashMap;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.PrepareStatement;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import io.sluice.relay.ResponseTracker;
import io.sluice.sql.SessionEffects;
import io.sluice.sql.StatementScan;
import io.sluice.state.PreparedStatement;
import io.sluice.state.StatementCache;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Transaction pooling's prepared statements: the session's statements under ids of the session's own, mapped onto
 * whichever connection runs them. A statement prepared on one connection is prepared again, by Sluice, on the next
 * connection that needs it; the server's ids never reach the client (the id in a COM_STMT_PREPARE_OK is replaced as
 * the response streams past), and the client's ids are replaced by the connection's in each command.
 *
 * <p>Also a session-pooling session's, once it moved to another server (decision 106): the statements it prepared
 * before are {@link #adopt adopted} under the ids the client knows, the old server's.
 */
final class StatementIds {
    private final SessionPort port;
    /** The one scan of a statement (decision 136), reused for every prepare. */
    private final StatementScan scan;
    /**
     * Told when the server refuses to prepare again the statement an execute waits for; true when the policy takes
     * the execute elsewhere (read/write splitting: a replica refused it as a write, decision 110), else the execute
     * gets the error.
     */
    private java.util.function.BiPredicate<BackendConnection, io.sluice.protocol.Packets.BackendError> prepareRefused =
            (connection, error) -> false;
    private final Pins pins;
    /** The status flags of an OK Sluice answers with: autocommit as the session last set it. */
    private final java.util.function.IntSupplier localStatus;
    /** The session's prepared statements, by the ids Sluice gave them; {@code null} until the first prepare. */
    private IntObjectHashMap<PreparedStatement> statements;
    private int nextStatementId;
    /** MariaDB's "the statement just prepared" (id -1), for a prepare and an execute sent together. */
    private PreparedStatement lastPrepared;
    /**
     * A session-pooling session with MariaDB's metadata caching (issue #31): the column definitions its client
     * receives are recorded, and a statement prepared again lazily must answer with those.
     */
    private final boolean followsDefinitions;
    /**
     * A statement whose execute runs as another text ({@link #runsWithOwnValues}), and that text: kept after the
     * execute, for the COM_STMT_FETCH of a cursor it opened, until the statement's next execute decides again.
     */
    private PreparedStatement runsAs;
    private String runsAsText;

    /** @param reading what the server reads otherwise in the session's text (decision 204) */
    StatementIds(SessionPort port, Pins pins, java.util.function.IntSupplier localStatus, ClientReading reading) {
        this(port, pins, localStatus, false, reading);
    }

    /** @param followsDefinitions whether the client's column definitions are recorded (metadata caching) */
    StatementIds(SessionPort port, Pins pins, java.util.function.IntSupplier localStatus,
            boolean followsDefinitions, ClientReading reading) {
        this.port = port;
        this.scan = new StatementScan(port.hiddenCode(), reading::unread);
        this.pins = pins;
        this.localStatus = localStatus;
        this.followsDefinitions = followsDefinitions;
    }

    /** The session's statements, under the ids the client knows. */
    java.util.Collection<PreparedStatement> statements() {
        return statements == null ? java.util.List.of() : statements.values();
    }

    /** The statement the client calls {@code clientId}, or {@code null}. */
    PreparedStatement get(int clientId) {
        if (clientId == -1) {
            return lastPrepared;
        }
        return statements == null ? null : statements.get(clientId);
    }

    /**
     * Takes on a statement prepared by the client directly on a server connection Sluice did not map (session
     * pooling, before its first move), under the id the client knows it by. Ids Sluice gives later come after it.
     */
    void adopt(PreparedStatement statement) {
        if (statements == null) {
            statements = new IntObjectHashMap<>();
        }
        statements.put(statement.clientId(), statement);
        if (Integer.compareUnsigned(statement.clientId(), nextStatementId) > 0) {
            nextStatementId = statement.clientId();
        }
    }

    /**
     * A prepared {@code ROW_COUNT()} or {@code FOUND_ROWS()} reads the server's, which on a connection the session's
     * last statement did not run on is another session's: unless {@code trusted} (flags of {@link SessionEffects})
     * says the server's are the session's, the statement's next execute (and the long data sent ahead of it) runs a
     * statement Sluice prepares there from the text with the session's own written in, as a query's is (issue #38;
     * the same parameters, the same columns).
     */
    void runsWithOwnValues(PreparedStatement statement, int trusted, long foundRows, long rowCount) {
        int own = statement.sniffed() & SessionEffects.PREVIOUS_VALUES & ~trusted;
        runsAs = own == 0 ? null : statement;
        runsAsText = own == 0 ? null : QueryRewrites.withPreviousValues(statement.sql(), own, foundRows, rowCount);
    }

    /** COM_STMT_CLOSE: forgets the statement; the server's stays in its connection's cache, for other sessions too. */
    void close(int clientId) {
        if (statements != null && statements.remove(clientId) != null) {
            pins.cursorClosed(clientId);
        }
    }

    /** COM_RESET_CONNECTION or COM_CHANGE_USER: the session has no statements any more. */
    void forget() {
        statements = null;
        lastPrepared = null;
        runsAs = null;
    }

    /**
     * Sends a prepared-statement command on {@code connection}: prepares the statement there first if this connection
     * has never seen it, and writes the connection's statement id into the frame.
     *
     * @return false when the frame must wait: for the connection to finish the client's responses before Sluice's own
     *     prepare, for that prepare, or for the first prepare of the statement to be answered
     */
    boolean send(BackendConnection connection, int command, ByteBuf frame, ResponseKind kind,
            ResponseObserver captured) {
        int base = frame.readerIndex() + Packets.HEADER_SIZE;
        int replySequenceId = Packets.sequenceId(frame, frame.readerIndex()) + 1;
        if (command == Command.COM_STMT_PREPARE) {
            prepare(connection, frame, base, captured);
            return true;
        }
        if (frame.readableBytes() < Packets.HEADER_SIZE + 5) {
            frame.release();
            port.failMalformed(command, replySequenceId);
            return true;
        }
        int clientId = frame.getIntLE(base + 1);
        PreparedStatement statement = get(clientId);
        if (statement == null) {
            frame.release();
            if (command != Command.COM_STMT_SEND_LONG_DATA) { // which has no response, not even an error
                port.replyUnknownStatement(Integer.toUnsignedLong(clientId), command, replySequenceId);
            }
            return true;
        }
        if (!statement.isPrepared()) {
            return false; // sent right behind its prepare (MariaDB's id -1): its parameters are not known yet
        }
        String text = statement == runsAs ? runsAsText : statement.sql();
        StatementCache.Entry entry = connection.state().statements().get(text);
        if (entry == null) {
            if (command == Command.COM_STMT_RESET) {
                frame.release(); // never used on this connection: nothing to reset here
                port.replyOk(replySequenceId, localStatus.getAsInt());
                return true;
            }
            prepareAgain(connection, statement, text);
            return false;
        }
        frame.setIntLE(base + 1, entry.serverId());
        if (command == Command.COM_STMT_EXECUTE && statement.parameters() > 0) {
            frame = ParameterTypes.carry(frame, base, statement, entry, port.clientChannel().alloc());
        }
        connection.forward(frame, kind, captured,
                command == Command.COM_STMT_EXECUTE ? ClientDefinitions.of(statement) : null, 0);
        return true;
    }

    /**
     * The client's COM_STMT_PREPARE goes to the server as it is; the session's id for it replaces the server's in the
     * response as it is relayed, and the mapping is recorded when the response ends.
     */
    private void prepare(BackendConnection connection, ByteBuf frame, int base, ResponseObserver captured) {
        String sql = frame.toString(base + 1, frame.writerIndex() - base - 1, StandardCharsets.ISO_8859_1);
        // One scan gives what the statement leaves on the session and where a split group runs it (decision 136).
        int statementClass = StatementClassifier.classify(scan, StatementClassifier.BYTES, frame, base + 1,
                frame.writerIndex());
        int flags = scan.effects();
        PreparedStatement statement = new PreparedStatement(++nextStatementId, sql);
        statement.statementClass(statementClass);
        // Known before the answer: an execute sent right behind the prepare (MariaDB's id -1) reads it too
        statement.sniffed(flags);
        lastPrepared = statement;
        connection.forward(frame, ResponseKind.PREPARE, captured, new ResponseObserver() {
            @Override
            public boolean digestsDefinitions() {
                return followsDefinitions;
            }

            @Override
            public void onResponse(ResponseTracker tracker) {
                prepared(connection, statement, sql, tracker);
            }
        }, statement.clientId());
    }

    /** The answer to the client's COM_STMT_PREPARE went by: the mapping is recorded. */
    private void prepared(BackendConnection connection, PreparedStatement statement, String sql,
            ResponseTracker tracker) {
        if (tracker.lastResponseFailed()) {
            if (lastPrepared == statement) {
                lastPrepared = null;
            }
            return;
        }
        statement.prepared(tracker.outcome().parameters());
        if (followsDefinitions) {
            new ClientDefinitions().follow(statement, tracker.outcome().definitionsDigest());
        }
        connection.state().statements().put(sql, tracker.outcome().serverStatementId(),
                tracker.outcome().parameters(),
                connection::closeStatement);
        if (statements == null) {
            statements = new IntObjectHashMap<>();
        }
        statements.put(statement.clientId(), statement);
        // Nothing it pins for is there before it runs: its pins come with each execute (decision 202). Applied once
        // here, a GET_LOCK(?) its driver keeps prepared and executes again after its release took the lock uncounted
        // (moves long run seed 32426); a pin here on a replica's connection kept the execute, which may take a lock
        // or write, from going to the primary (split long run seed 55).
    }

    /**
     * Prepares, on the connection in use, a statement the session prepared on another one. Only once the client's
     * responses on the connection have ended: Sluice's own response must not come between them.
     */
    private void prepareAgain(BackendConnection connection, PreparedStatement statement, String text) {
        if (!connection.isBetweenCommands() || connection.runsOwnCommand()) {
            return; // tried again when the responses have been relayed
        }
        PrepareStatement[] own = new PrepareStatement[1];
        own[0] = new PrepareStatement(text, new PrepareStatement.Outcome() {
            @Override
            public void prepared(int serverId, int parameters) {
                MetadataCheck.Verdict verdict = followsDefinitions
                        ? MetadataCheck.judge(statement, own[0].definitions()) : MetadataCheck.Verdict.SAME;
                if (verdict == MetadataCheck.Verdict.DIFFERS) {
                    // The server would leave out of the execute definitions the client does not have: it would
                    // decode the rows with others. The client must prepare the statement again.
                    connection.closeStatement(serverId);
                    port.failHeldCommand(MetadataCheck.needsReprepare());
                    port.resume();
                    return;
                }
                statement.definitionsExpected(verdict == MetadataCheck.Verdict.SENDS);
                connection.state().statements().put(text, serverId, parameters, connection::closeStatement);
                port.resume();
            }

            @Override
            public void failed(BackendException refusal) {
                if (refusal.serverError() == null) {
                    port.lostBackend(connection, refusal);
                    return;
                }
                if (prepareRefused.test(connection, refusal.serverError())) {
                    port.resume(); // the policy runs the waiting command elsewhere (a replica refused it as a write)
                    return;
                }
                // It no longer prepares (a table was dropped since): the waiting command gets the server's error.
                port.failHeldCommand(refusal.serverError());
                port.resume();
            }
        });
        connection.run(own[0]);
    }

    /** Who is told first when a prepare again is refused (see {@link #prepareRefused}). */
    void onPrepareRefused(
            java.util.function.BiPredicate<BackendConnection, io.sluice.protocol.Packets.BackendError> policy) {
        prepareRefused = policy;
    }

    /** Keeps an execute's parameter types right on a server statement other sessions may have used. */
    static final class ParameterTypes {
        private ParameterTypes() {
        }

        /**
         * The parameter types a COM_STMT_EXECUTE carries (new-params-bound 1), kept as the statement's unless they
         * are the ones it had.
         *
         * @return the statement's types now, or {@code null} when the frame carries none (or is too short to)
         */
        static byte[] learn(ByteBuf frame, int base, PreparedStatement statement) {
            int count = statement.parameters();
            int flagAt = base + 10 + (count + 7) / 8;
            if (count <= 0 || flagAt >= frame.writerIndex() || frame.getByte(flagAt) != 1) {
                return null;
            }
            int typesAt = flagAt + 1;
            byte[] known = statement.parameterTypes();
            if (known == null || known.length != 2 * count || !sameBytes(frame, typesAt, known)) {
                if (typesAt + 2 * count > frame.writerIndex()) {
                    return null;
                }
                known = new byte[2 * count];
                frame.getBytes(typesAt, known);
                statement.parameterTypes(known);
            }
            return known;
        }

        /**
         * An execute may leave out the parameter types ("new params bound" 0), meaning "as last time". The server
         * statement on this connection may have last received other types, from another session, or none: then the
         * session's types are put back into the frame (taken; the result is the frame to forward).
         */
        static ByteBuf carry(ByteBuf frame, int base, PreparedStatement statement, StatementCache.Entry entry,
                io.netty.buffer.ByteBufAllocator alloc) {
            int count = statement.parameters();
            int flagAt = base + 10 + (count + 7) / 8;
            if (flagAt >= frame.writerIndex()) {
                return frame;
            }
            if (frame.getByte(flagAt) == 1) {
                byte[] known = learn(frame, base, statement);
                if (known != null) {
                    entry.boundTypes(known);
                }
                return frame;
            }
            byte[] types = statement.parameterTypes();
            if (types == null || types == entry.boundTypes() || Arrays.equals(types, entry.boundTypes())
                    || Packets.payloadLength(frame, frame.readerIndex()) + types.length >= Packets.MAX_PAYLOAD) {
                return frame;
            }
            ByteBuf rebuilt = alloc.ioBuffer(frame.readableBytes() + types.length);
            rebuilt.writeBytes(frame, frame.readerIndex(), flagAt - frame.readerIndex());
            rebuilt.writeByte(1);
            rebuilt.writeBytes(types);
            rebuilt.writeBytes(frame, flagAt + 1, frame.writerIndex() - flagAt - 1);
            rebuilt.setMediumLE(rebuilt.readerIndex(), rebuilt.readableBytes() - Packets.HEADER_SIZE);
            frame.release();
            entry.boundTypes(types);
            return rebuilt;
        }

        private static boolean sameBytes(ByteBuf frame, int at, byte[] expected) {
            if (at + expected.length > frame.writerIndex()) {
                return false;
            }
            for (int i = 0; i < expected.length; i++) {
                if (frame.getByte(at + i) != expected[i]) {
                    return false;
                }
            }
            return true;
        }
    }
}
