package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.netty.util.collection.IntObjectHashMap;
import io.sluice.backend.BackendConnection;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ServerStatus;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import io.sluice.relay.ResponseTracker;
import io.sluice.sql.UnreadText;
import io.sluice.sql.SessionEffects;
import io.sluice.sql.StatementScan;
import io.sluice.state.PreparedStatement;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;

/**
 * Session pooling for a session on MariaDB, which may move to another server of its group (decisions 106, 108): one
 * connection for the session's life, as {@link CommandPolicy#SESSION}, but its server-side prepared statements are
 * recorded so that they can be prepared again on the server it moves to, and its named locks are followed.
 *
 * <p>Before its first move the server's statement ids are the client's and commands go through unchanged; what is
 * recorded is the text and the server's id and parameter count of each COM_STMT_PREPARE (at its OK), forgotten at
 * COM_STMT_CLOSE, COM_RESET_CONNECTION and COM_CHANGE_USER, and the parameter types of an execute that sends them
 * (an execute that does not, which is most after the first, only costs a map lookup). After its first move the
 * session's statements are driven by transaction pooling's {@link StatementIds}, under the ids the client knows:
 * prepared again on the new connection on first use, their ids rewritten in each command.
 *
 * <p>With MariaDB's metadata caching, the column definitions the client receives for each statement are followed
 * ({@link ClientDefinitions}), before and after a move: a move needs the new server to answer with them
 * ({@link MetadataCheck}).
 *
 * <p>What keeps the session where it is ({@link #pinnedBy}): a named lock ({@code GET_LOCK}, followed from the
 * statements that call the lock functions, decision 108), an open cursor, long data sent ahead of an execute,
 * and a statement whose parameter types went by unread: a MariaDB execute pipelined behind its prepare (id -1),
 * before the prepare's answer gave the parameter count, is read by the placeholders its text seems to have, and a
 * guess the answer refutes leaves the types unknown (a client that sends them once would then not send them again).
 */
public final class SessionPooling implements CommandPolicy, StatementMapping {
    /** The types of a statement executed while they could not be read: it cannot move. */
    private static final byte[] MISSED = new byte[0];
    /**
     * What the session's server cannot be asked about: MariaDB shows a session's named locks only through the
     * metadata_lock_info plugin or performance_schema, so they are followed from the statements, as transaction
     * pooling does (decision 108).
     */
    private static final int LOCK_FUNCTIONS = SessionEffects.GET_LOCK | SessionEffects.RELEASE_LOCK
            | SessionEffects.RELEASE_ALL_LOCKS;
    /**
     * What the session's server does not tell at a move either: code the text does not show (a procedure, EXECUTE
     * IMMEDIATE), which may take a named lock or a table lock, an open HANDLER, the role (not read by the
     * move's snapshot), a backup lock, and a sequence's last value where {@link HiddenStateFilter} lets the statement
     * through for another reason (a plain {@code SELECT NEXTVAL(s)} it does not: a known limit of moves, see
     * docs/isolation.md). Each keeps the session on its server for good (issue #38).
     */
    private static final int FOLLOWED = LOCK_FUNCTIONS | SessionEffects.STORED_CODE | SessionEffects.HANDLER
            | SessionEffects.SET_ROLE | SessionEffects.NEXT_SEQUENCE_VALUE | SessionEffects.BACKUP_LOCK;

    private final SessionPort port;
    /** What the server reads otherwise in the session's text: its character set, its sql_mode (decision 204). */
    private final ClientReading reading;
    /** The one scan of a statement, reused (decision 136). */
    private final StatementScan scan;
    private final Pins pins = new Pins(reason -> { }, (before, now) -> { }, FOLLOWED);
    /** Before the first move: the statements the client prepared, by the server's id; {@code null} until one. */
    private IntObjectHashMap<PreparedStatement> recorded;
    /** Before the first move: the prepare sent last, until its answer; an execute of id -1 names it. */
    private Pending pending;
    private PreparedStatement lastPrepared;
    /** After the first move: the statements, mapped onto each connection; {@code null} before. */
    private StatementIds mapped;
    /**
     * Whether a statement the session prepared may leave what {@link #pins} follow (a lock function in its text, or
     * any mapped one): until then an execute is not looked up for it.
     */
    private boolean effectsPrepared;

    /**
     * The COM_STMT_PREPARE in flight: its text, and the parameter types of an execute sent right behind it (MariaDB's
     * id -1), read by the number of placeholders the text seems to have, which its answer then confirms.
     */
    private static final class Pending {
        final String sql;
        /** Its execute sent before its answer, read as having the guessed parameter count; {@code null}: none. */
        PreparedStatement guess;
        /** With MariaDB's metadata caching: what records the definitions its client receives; else {@code null}. */
        ClientDefinitions definitions;
        /**
         * What {@link SessionEffects} found in its text when it may call a lock function (decision 108), which each of
         * its executes applies (decision 202); usually 0.
         */
        int locks;

        Pending(String sql) {
            this.sql = sql;
        }

        /** The types of the execute behind it, if it carries them; the guess is checked at the answer. */
        void executed(ByteBuf frame, int base) {
            if (guess == null) {
                guess = new PreparedStatement(-1, sql);
                guess.prepared(Math.max(placeholders(sql), 0));
                if (guess.parameters() > 0) {
                    StatementIds.ParameterTypes.learn(frame, base, guess);
                }
            }
        }

        /** Whether the execute's types went by unread (a wrong guess, or sent none): the statement cannot move. */
        boolean typesMissed(int parameters) {
            return guess != null && parameters > 0
                    && (guess.parameters() != parameters || guess.parameterTypes() == null);
        }
    }

    public SessionPooling(SessionPort port) {
        this.port = port;
        this.reading = new ClientReading(port);
        this.scan = new StatementScan(() -> io.sluice.sql.HiddenCodeNames.NONE, reading::unread);
    }

    /** Whether the text may leave what only the scan tells: {@link HiddenStateFilter}, or text read otherwise. */
    private boolean mayLeaveHiddenState(ByteBuf frame, int from, int to, boolean lockFunctionsOnly) {
        return (lockFunctionsOnly ? HiddenStateFilter.mayCallLockFunction(frame, from, to)
                : HiddenStateFilter.mayLeaveHiddenState(frame, from, to))
                || UnreadText.in(StatementClassifier.BYTES, frame, from, to, reading.unread());
    }

    @Override
    public ByteBuf onCommand(int command, ByteBuf frame) {
        int base = frame.readerIndex() + Packets.HEADER_SIZE;
        switch (command) {
            case Command.COM_QUERY:
                int end = frame.writerIndex();
                if (mayLeaveHiddenState(frame, base + 1, end, false)) {
                    int effects = scan.scan(StatementClassifier.BYTES, frame, base + 1, end).effects();
                    reading.statementSent(scan.assignments());
                    pins.apply(effects);
                    BackendConnection held = port.connection();
                    if ((effects & SessionEffects.BACKUP_LOCK) != 0 && held != null) {
                        held.state().taint(); // no reset releases it: closed when the session ends
                    }
                }
                return frame;
            case Command.COM_STMT_EXECUTE:
                pins.unpin(PinReason.LONG_DATA); // the data sent ahead is this execute's
                if (effectsPrepared && frame.readableBytes() >= Packets.HEADER_SIZE + 5) {
                    pins.apply(effects(frame.getIntLE(base + 1))); // each execute takes its locks again (decision 202)
                }
                if (frame.readableBytes() >= Packets.HEADER_SIZE + 6 && frame.getByte(base + 5) != 0) {
                    pins.cursorOpened(frame.getIntLE(base + 1)); // CURSOR_TYPE_*: rows come by COM_STMT_FETCH
                }
                return frame;
            case Command.COM_STMT_SEND_LONG_DATA, Command.COM_STMT_RESET:
                pins.statementCommand(command, frame, base);
                return frame;
            case Command.COM_STMT_CLOSE:
                if (frame.readableBytes() < Packets.HEADER_SIZE + 5) {
                    return frame;
                }
                int id = frame.getIntLE(base + 1);
                pins.cursorClosed(id);
                if (mapped == null) {
                    if (recorded != null) {
                        recorded.remove(id);
                    }
                    return frame; // the server closes it
                }
                mapped.close(id);
                frame.release(); // the server statement stays in the connection's cache, as in transaction pooling
                return null;
            case Command.COM_RESET_CONNECTION:
                forget();
                BackendConnection connection = port.connection();
                if (connection != null && connection.state().statements() != null) {
                    connection.state().statements().clear(); // the server closes every statement
                }
                return frame;
            default:
                return frame;
        }
    }

    @Override
    public boolean sendStatementCommand(BackendConnection connection, int command, ByteBuf frame, ResponseKind kind,
            ResponseObserver captured) {
        if (mapped != null) {
            return mapped.send(connection, command, frame, kind, captured);
        }
        if (command == Command.COM_STMT_PREPARE) {
            record(connection, frame, captured);
            return true;
        }
        ResponseObserver definitions = null;
        if (command == Command.COM_STMT_EXECUTE && (recorded != null || pending != null)
                && frame.readableBytes() >= Packets.HEADER_SIZE + 5) {
            definitions = learnTypes(frame);
        }
        connection.forward(frame, kind, captured, definitions, 0);
        return true;
    }

    /** Forwards the client's COM_STMT_PREPARE as it is and records the statement when its OK has gone by. */
    private void record(BackendConnection connection, ByteBuf frame, ResponseObserver captured) {
        int base = frame.readerIndex() + Packets.HEADER_SIZE;
        Pending prepare = new Pending(
                frame.toString(base + 1, frame.writerIndex() - base - 1, StandardCharsets.ISO_8859_1));
        if (connection.key().cacheMetadata()) {
            prepare.definitions = new ClientDefinitions(); // the client's definitions decide where it may move
        }
        pending = prepare;
        lastPrepared = null;
        int end = frame.writerIndex();
        prepare.locks = mayLeaveHiddenState(frame, base + 1, end, true)
                ? scan.scan(StatementClassifier.BYTES, frame, base + 1, end).effects() : 0;
        effectsPrepared |= prepare.locks != 0;
        connection.forward(frame, ResponseKind.PREPARE, captured, new ResponseObserver() {
            @Override
            public boolean digestsDefinitions() {
                return prepare.definitions != null;
            }

            @Override
            public void onResponse(ResponseTracker tracker) {
                recorded(prepare, tracker);
            }
        }, 0);
    }

    /** The answer to a client's COM_STMT_PREPARE went by: the statement is recorded, by the server's id. */
    private void recorded(Pending prepare, ResponseTracker tracker) {
        if (pending == prepare) {
            pending = null;
        }
        if (tracker.lastResponseFailed() || mapped != null) {
            return;
        }
        PreparedStatement statement = new PreparedStatement(tracker.outcome().serverStatementId(), prepare.sql);
        statement.sniffed(prepare.locks); // applied at each execute, not here: nothing runs at a prepare
        if (prepare.definitions != null) {
            prepare.definitions.follow(statement, tracker.outcome().definitionsDigest());
        }
        statement.prepared(tracker.outcome().parameters());
        if (prepare.typesMissed(statement.parameters())) {
            statement.parameterTypes(MISSED);
        } else if (prepare.guess != null) {
            statement.parameterTypes(prepare.guess.parameterTypes());
        }
        if (recorded == null) {
            recorded = new IntObjectHashMap<>();
        }
        recorded.put(statement.clientId(), statement);
        if (pending == null) {
            lastPrepared = statement;
        }
    }

    /**
     * What the statement an execute names leaves (its lock functions, before a move; what the mapped statement's scan
     * found, after one): 0 for a statement not known.
     */
    private int effects(int id) {
        if (mapped != null) {
            PreparedStatement statement = mapped.get(id);
            return statement == null ? 0 : statement.sniffed();
        }
        if (id == -1 && pending != null) {
            return pending.locks; // sent right behind its prepare, before the answer
        }
        PreparedStatement statement = id == -1 ? lastPrepared : recorded == null ? null : recorded.get(id);
        return statement == null ? 0 : statement.sniffed();
    }

    /**
     * An execute that sends its parameter types: they are the statement's until another one sends others.
     *
     * @return what records the column definitions its result may carry to the client, or {@code null}
     */
    private ResponseObserver learnTypes(ByteBuf frame) {
        int base = frame.readerIndex() + Packets.HEADER_SIZE;
        int id = frame.getIntLE(base + 1);
        PreparedStatement statement = id == -1 ? (pending == null ? lastPrepared : null)
                : recorded == null ? null : recorded.get(id);
        if (statement == null) {
            if (id == -1 && pending != null) {
                pending.executed(frame, base); // behind its prepare: how many parameters is not known yet
                return pending.definitions;
            }
            return null;
        }
        if (statement.parameters() > 0) {
            StatementIds.ParameterTypes.learn(frame, base, statement);
        }
        return ClientDefinitions.of(statement);
    }

    /**
     * How many {@code ?} placeholders {@code sql} has outside quotes and comments, by the one scan
     * ({@link StatementScan#placeholders()}): a guess, which the server's parameter count confirms or refutes; -1
     * for text it does not try to read (executable comments, unclosed ones).
     */
    static int placeholders(String sql) {
        return new StatementScan().scan(sql).placeholders();
    }

    /**
     * The session's connection was replaced by one of another server (a session-pooling move): from now on its
     * statements are mapped, under the ids the client knows, and prepared again there on first use.
     *
     * @param sqlMode the session's {@code sql_mode}, which the move set on the new connection (its server's global,
     *     the new connection's login value, may differ: decision 204 reads the text in the session's), or
     *     {@code null} when the move did not read it
     */
    public void movedToAnotherConnection(String sqlMode) {
        if (sqlMode != null) {
            reading.reportedSqlMode(sqlMode);
        }
        if (mapped != null) {
            return; // moved before: the mapping goes on, the new connection prepares on first use
        }
        BackendConnection connection = port.connection();
        mapped = new StatementIds(port, pins, this::localStatus,
                connection != null && connection.key().cacheMetadata(), reading);
        effectsPrepared = true; // its prepares read every statement
        if (recorded != null) {
            for (PreparedStatement statement : recorded.values()) {
                mapped.adopt(statement);
            }
        }
        recorded = null;
        pending = null;
        lastPrepared = null;
    }

    /**
     * The statements the session has open, to be prepared on the connection it moves to: those recorded before its
     * first move, or mapped since.
     */
    public Collection<PreparedStatement> statements() {
        if (mapped != null) {
            return mapped.statements();
        }
        return recorded == null ? List.of() : recorded.values();
    }

    /** The status flags of an OK Sluice answers with: those the server last sent on the session's connection. */
    private int localStatus() {
        BackendConnection connection = port.connection();
        return connection == null ? ServerStatus.SERVER_STATUS_AUTOCOMMIT : connection.tracker().serverStatus()
                & (ServerStatus.SERVER_STATUS_AUTOCOMMIT | ServerStatus.SERVER_STATUS_IN_TRANS);
    }

    @Override
    public void forget() {
        pins.forget();
        reading.forget();
        recorded = null;
        pending = null;
        lastPrepared = null;
        if (mapped != null) {
            mapped.forget();
        }
    }

    @Override
    public PinReason pinnedBy() {
        PinReason pin = pins.first();
        if (pin != null || recorded == null) {
            return pin;
        }
        for (PreparedStatement statement : recorded.values()) {
            if (statement.parameterTypes() == MISSED) {
                return PinReason.PREPARED_STATEMENT;
            }
        }
        return null;
    }
}
