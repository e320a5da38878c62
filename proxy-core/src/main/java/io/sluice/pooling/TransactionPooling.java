package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.SetSessionVariables;
import io.sluice.balancer.replication.CausalWait;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.Packets.BackendError;
import io.sluice.protocol.ServerStatus;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import io.sluice.relay.SessionStateFilter;
import io.sluice.relay.SessionStateListener;
import io.sluice.sql.SessionEffects;
import io.sluice.state.PreparedStatement;
import io.sluice.state.SessionVariables;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.function.BiPredicate;
import java.util.function.Consumer;

/**
 * Transaction pooling ({@code pooling: TRANSACTION}): the session gives its backend connection back after each
 * transaction (or autocommit statement) and takes one again for the next, made to match it. Built from three parts:
 * {@link Pins} (what keeps the session on its connection), {@link StatementIds} (prepared statements across
 * connections) and {@link SessionStateFollower} (variables, schema and last-insert id as the server reports them).
 * See docs/design/2026-11-22-transaction-pooling.md.
 */
public final class TransactionPooling implements CommandPolicy, StatementMapping {
    private final SessionPort port;
    private final Pins pins;
    /** The one scan of a statement (decision 136), shared with a read/write split that wraps this policy. */
    private final QueryScan scan;
    private final SessionStateFollower follower;
    private final OwnLastInsertId ownLastInsertId;
    private final StatementIds statements;
    private final boolean deprecateEof;
    /** The trackers a client that negotiated CLIENT_SESSION_TRACK would have; {@code null} for one that did not. */
    private final ClientTrackers clientTrackers;
    /** Whether user variables move with the session (read back from MariaDB) rather than pin it. */
    private final boolean carriesUserVariables;
    /**
     * The session's last GTID when it moved to another server, until a connection there has waited for it; else
     * {@code null}.
     */
    private String gtidAfterMove;
    /** How long the new server may take to apply it ({@code pooling.moveGtidWaitMilliseconds}). */
    private Duration moveWait = Duration.ZERO;
    /**
     * The connection the session's last statement ran on, and its {@link BackendConnection#lendings()} and
     * {@link BackendConnection#ownRuns()} then: see {@link #serverValuesTrusted()}.
     */
    private BackendConnection lastStatementOn;
    private long lastStatementLending;
    private long lastStatementOwnRuns;
    /** Statements sent, and their count when {@link #lastStatementOn} was: a prepare leaves the server's values. */
    private int statementsSent;
    private int statementsRecorded;
    /**
     * The response just ended was a replica's refusal that the client never saw (read/write splitting runs the
     * statement again on the primary): its error is no diagnostics of the session's. The connection that holds it is
     * reset when it goes back.
     */
    private boolean refusalKept;
    /** The pins before the last statement's own ({@link Pins#snapshot}): where it runs is still to be decided. */
    private int pinsBeforeStatement;
    /** Likewise whether user variables were to be read back before the last statement, which may name one itself. */
    private boolean variablesUnknownBeforeStatement;
    /** A read-back of the session's last-insert id runs: see {@link #readsBackForNext()}. */
    private boolean readingLastInsertId;
    /** Statements that define a trigger or a view: what they name counts at once, read again once run (203). */
    private final CodeDefinitions definitions;

    /**
     * For a session whose connections negotiate CLIENT_SESSION_TRACK (a server without it: {@link PinnedSession}).
     *
     * @param deprecateEof whether the session negotiated CLIENT_DEPRECATE_EOF, for the read-back's result
     * @param clientTracksState whether the client itself negotiated CLIENT_SESSION_TRACK
     * @param carriesUserVariables whether the server lets Sluice read user variables back (MariaDB's
     *     {@code information_schema.USER_VARIABLES}), so that they move with the session instead of pinning it
     */
    public TransactionPooling(SessionPort port, boolean deprecateEof, boolean clientTracksState,
            boolean carriesUserVariables) {
        this.port = port;
        this.carriesUserVariables = carriesUserVariables;
        this.clientTrackers = clientTracksState ? new ClientTrackers() : null;
        this.pins = new Pins(port::pinned, port::pinChanged);
        this.scan = new QueryScan(port);
        this.definitions = new CodeDefinitions(port);
        this.follower = new SessionStateFollower(port, pins, clientTrackers, scan.reading());
        this.ownLastInsertId = new OwnLastInsertId(port);
        this.statements = new StatementIds(port, pins, follower::localStatus, scan.reading());
        this.deprecateEof = deprecateEof;
    }

    @Override
    public boolean followsSession() {
        return true;
    }

    @Override
    public SessionStateFilter sessionStateShown(BackendConnection connection) {
        if (clientTrackers == null) {
            return SessionStateFilter.WITHOUT_SESSION_TRACK;
        }
        clientTrackers.defaults(connection.state().trackerDefaults());
        return clientTrackers;
    }

    @Override
    public ByteBuf onCommand(int command, ByteBuf frame) {
        int base = frame.readerIndex() + Packets.HEADER_SIZE;
        boolean wasScanned = scan.take();
        switch (command) {
            case Command.COM_QUERY:
                return beforeQuery(frame, base, wasScanned);
            case Command.COM_PING:
                if (port.connection() == null && port.isQuiet()) {
                    frame.release(); // Sluice is up and the session holds nothing: no backend is needed to say so
                    port.replyOk(port.replySequenceId(), follower.localStatus());
                    return null;
                }
                return frame;
            case Command.COM_RESET_CONNECTION:
                BackendConnection held = port.connection();
                if (!port.isQuiet() || (held != null && !held.isBetweenCommands())) {
                    return frame; // pipelined behind other commands: let the server do it, on a connection kept
                }
                frame.release();
                forget();
                if (held != null) {
                    port.resetConnection(); // COM_RESET_CONNECTION there, before any other session gets it
                }
                port.replyOk(port.replySequenceId(), ServerStatus.SERVER_STATUS_AUTOCOMMIT);
                return null;
            case Command.COM_STMT_CLOSE:
                if (frame.readableBytes() >= Packets.HEADER_SIZE + 5) {
                    statements.close(frame.getIntLE(base + 1));
                }
                frame.release(); // the server statement stays in its connection's cache, for other sessions too
                return null;
            case Command.COM_STMT_SEND_LONG_DATA, Command.COM_STMT_RESET:
                pins.statementCommand(command, frame, base);
                if (command == Command.COM_STMT_SEND_LONG_DATA && frame.readableBytes() >= Packets.HEADER_SIZE + 5) {
                    ownValues(statements.get(frame.getIntLE(base + 1))); // where its execute will run
                }
                return frame;
            case Command.COM_STMT_EXECUTE:
                // The data sent ahead is this execute's: it runs on the pinned connection, then the pin ends.
                pins.unpin(PinReason.LONG_DATA);
                var executed = frame.readableBytes() >= Packets.HEADER_SIZE + 5
                        ? statements.get(frame.getIntLE(base + 1)) : null;
                int sniffed = executed == null ? 0 : executed.sniffed();
                // A prepared LAST_INSERT_ID() cannot have the session's id written into it as a query's text can:
                // the server's must be the session's, as before code the text does not show.
                beforeHiddenCode(sniffed, SessionEffects.STORED_CODE | SessionEffects.CALLS_LAST_INSERT_ID);
                ownValues(executed);
                statementsSent++;
                follower.statementSent(sniffed);
                pins.nextStatement(sniffed); // it replaces the last statement's warnings, as a query does
                pinsBeforeStatement = pins.snapshot();
                variablesUnknownBeforeStatement = follower.userVariablesUnknown();
                pins.apply(sniffed); // each execute leaves them again (decision 202); after the snapshot, as a query's
                definitions.sent(executed);
                if (executed != null && frame.readableBytes() >= Packets.HEADER_SIZE + 6 && frame.getByte(base + 5) != 0) {
                    pins.cursorOpened(executed.clientId()); // CURSOR_TYPE_*: the rows come by COM_STMT_FETCH, here
                }
                return frame;
            case Command.COM_SET_OPTION:
                pins.pin(PinReason.SET_OPTION); // multi-statements on or off: no tracker reports it
                return frame;
            default:
                return frame;
        }
    }

    /** Sniffs a COM_QUERY for pinning state; answers SELECT LAST_INSERT_ID() from the session's last OK packet. */
    private ByteBuf beforeQuery(ByteBuf frame, int base, boolean scanned) {
        int end = frame.writerIndex();
        int flags = scan.effects(frame, base, end, scanned);
        long previousRowCount = follower.rowCount(); // this statement's own is not known yet
        beforeHiddenCode(flags, SessionEffects.STORED_CODE);
        statementsSent++;
        follower.statementSent(flags);
        pins.nextStatement(flags);
        definitions.sent(flags, frame, base, end);
        pinsBeforeStatement = pins.snapshot();
        variablesUnknownBeforeStatement = follower.userVariablesUnknown();
        if ((flags & ~SessionEffects.QUALIFIERS) == 0) {
            return frame;
        }
        if (carriesUserVariables && (flags & SessionEffects.USER_VARIABLE) != 0) {
            follower.userVariablesTouched();
            pins.apply(flags & ~SessionEffects.USER_VARIABLE);
        } else {
            pins.apply(flags);
        }
        if ((flags & (SessionEffects.TRACKED_VARIABLES | SessionEffects.UNSCOPED_SYSTEM_VARIABLE)) != 0) {
            String sql = sql(frame, base, end);
            String rewritten = sql;
            if ((flags & SessionEffects.UNSCOPED_SYSTEM_VARIABLE) != 0) {
                String scoped = QueryRewrites.scopeAssignments(rewritten);
                rewritten = scoped == null ? rewritten : scoped;
            }
            if ((flags & SessionEffects.TRACKED_VARIABLES) != 0) {
                String tracked = QueryRewrites.trackAllVariables(rewritten);
                rewritten = tracked == null ? rewritten : tracked;
            }
            return rewritten.equals(sql) ? frame : replaceQuery(frame, rewritten);
        }
        int ownValues = flags & (SessionEffects.CALLS_LAST_INSERT_ID | SessionEffects.PREVIOUS_VALUES);
        if (ownValues != 0 && (ownValues &= ~serverValuesTrusted()) != 0) {
            // The server's LAST_INSERT_ID(), ROW_COUNT() and FOUND_ROWS() belong to whichever connection the session
            // now has: the session's own go into the statement instead (issue #38).
            String sql = QueryRewrites.withPreviousValues(sql(frame, base, end), ownValues, follower.foundRows(),
                    previousRowCount);
            if ((ownValues & SessionEffects.CALLS_LAST_INSERT_ID) != 0) {
                sql = QueryRewrites.withLastInsertId(sql, follower.lastInsertId(),
                        (flags & SessionEffects.SELECT_STATEMENT) != 0);
            }
            return replaceQuery(frame, sql);
        }
        return frame;
    }

    /** A prepared ROW_COUNT() or FOUND_ROWS() is about to run: see {@link StatementIds#runsWithOwnValues}. */
    private void ownValues(PreparedStatement statement) {
        if (statement != null && (statement.sniffed() & SessionEffects.PREVIOUS_VALUES) != 0) {
            statements.runsWithOwnValues(statement, serverValuesTrusted(), follower.foundRows(), follower.rowCount());
        }
    }

    /**
     * Code the text does not show is about to run (a stored procedure, a stored function, {@code EXECUTE IMMEDIATE}),
     * or a prepared statement that reads {@code LAST_INSERT_ID()}: the server's {@code LAST_INSERT_ID()} is made the
     * session's first, there (see {@link OwnLastInsertId}).
     *
     * @param readsServerId the flags of {@code flags} that make the statement read the server's id
     */
    private void beforeHiddenCode(int flags, int readsServerId) {
        if ((flags & readsServerId) != 0) {
            BackendConnection held = port.connection();
            // A replica's connection may be let go for the primary, which runs such code (read/write splitting)
            boolean staysOnHeld = held != null && port.isQuiet() && !held.state().readOnly()
                    && (held.isBetweenCommands() && !held.runsOwnCommand() && !mayGiveBack(held)
                    // a read-back of Sluice's own runs there: the statement waits for it, then runs there first
                    // (issue #38, seed 5216 of the long run), so the assignment can wait in line behind it too
                    || held.runsOwnCommand());
            ownLastInsertId.beforeHiddenCode(held, staysOnHeld, follower.lastInsertId());
        }
    }

    /**
     * Which of the server's own answers to {@code LAST_INSERT_ID()}, {@code ROW_COUNT()} and {@code FOUND_ROWS()} (as
     * {@link SessionEffects} flags) are the session's, and truer than what Sluice followed (after a CALL that inserted,
     * a procedure's SELECT). None unless the session holds the connection its last statement ran on and has held it
     * since. Then {@code ROW_COUNT()} and {@code FOUND_ROWS()} are the server's if nothing of Sluice's own ran there
     * since (a read-back's SELECT replaces them); {@code LAST_INSERT_ID()}, which lasts until the next insert, only while
     * code the text does not show keeps the session there ({@code stored_code}) and Sluice gave the connection the
     * session's id before that code ran: else it may be an id that the session that had the connection before
     * generated, and the session's own lost (issue #38: seeds 132, 145, 243, 289, 458 and 551 of the long run).
     */
    private int serverValuesTrusted() {
        BackendConnection held = port.connection();
        if (held == null || held != lastStatementOn || held.lendings() != lastStatementLending) {
            return 0;
        }
        int trusted = held.ownRuns() == lastStatementOwnRuns
                ? SessionEffects.CALLS_ROW_COUNT | SessionEffects.CALLS_FOUND_ROWS : 0;
        return pins.has(PinReason.STORED_CODE) && ownLastInsertId.isOwn(held)
                ? trusted | SessionEffects.CALLS_LAST_INSERT_ID : trusted;
    }

    private static String sql(ByteBuf frame, int base, int end) {
        return frame.toString(base + 1, end - base - 1, StandardCharsets.ISO_8859_1);
    }

    /** A COM_QUERY of {@code sql} (read a byte per character, any charset) for the client's; {@code frame} released. */
    private ByteBuf replaceQuery(ByteBuf frame, String sql) {
        int sequenceId = Packets.sequenceId(frame, frame.readerIndex());
        frame.release();
        ByteBuf replaced = Packets.command(port.clientChannel().alloc(), Command.COM_QUERY, sql,
                StandardCharsets.ISO_8859_1);
        replaced.setByte(replaced.readerIndex() + 3, sequenceId);
        return replaced;
    }

    @Override
    public boolean sendStatementCommand(BackendConnection connection, int command, ByteBuf frame, ResponseKind kind,
            ResponseObserver captured) {
        return statements.send(connection, command, frame, kind, captured);
    }

    @Override
    public void afterResponses(BackendConnection connection) {
        if (statementsRecorded != statementsSent) {
            statementsRecorded = statementsSent;
            lastStatementOn = connection;
            lastStatementLending = connection.lendings();
            lastStatementOwnRuns = connection.ownRuns();
        }
        var tracker = connection.tracker();
        boolean clients = !refusalKept;
        refusalKept = false;
        if (clients && !port.visiting()
                && (tracker.sessionState().lastStatementLeftWarnings() || tracker.lastResponseFailed())) {
            // SHOW WARNINGS, SHOW ERRORS and @@warning_count read them on this connection: the session's next
            // statement runs here, and no other session gets the connection with them (issue #38). Not on another
            // group's connection a rule sent one statement to: the session's next is its own group's (decision 194),
            // and the connection is reset before it is pooled again.
            follower.warningsLeft();
            if (tracker.lastResponseFailed()) {
                follower.failed();
            }
            pins.pin(PinReason.DIAGNOSTICS);
            connection.state().diagnosticsLeft();
        }
        if (pins.has(PinReason.BACKUP_LOCK)) {
            connection.state().taint(); // no reset releases it: closed when the session ends
        }
        definitions.answered();
        if (connection.isBetweenCommands() && !connection.runsOwnCommand()) {
            int wanted = follower.takeReadBack();
            if (wanted != 0) {
                readBack(connection, wanted);
                return;
            }
            if (readUserVariablesBeforeGivingBack(connection)) {
                return;
            }
        }
        if (port.isQuiet() && mayGiveBack(connection)) {
            port.giveBack(); // the transaction (or autocommit statement) is over
        }
    }

    /**
     * When the connection would go back now but for user variables the session may have changed, reads them first
     * (the session's commands wait meanwhile); the connection goes back once they are read.
     *
     * @return whether the read began
     */
    private boolean readUserVariablesBeforeGivingBack(BackendConnection on) {
        if (!follower.userVariablesUnknown() || !port.isQuiet() || !mayGiveBackButForUserVariables(on)
                || follower.warningsPending()) {
            // With warnings left, the read would replace them before the client's SHOW WARNINGS: the session keeps
            // the connection until a statement leaves none.
            return false;
        }
        long readBegan = follower.userVariablesReadBegins();
        on.run(new ReadUserVariables(on, deprecateEof, new ReadUserVariables.Outcome() {
            @Override
            public void read(Map<String, String> literals) {
                follower.userVariablesRead(on, literals, readBegan);
                // which gives the connection back when nothing else came meanwhile; a statement that did (the
                // client's next, sent as soon as it had its answer) runs first, and the variables are read again
                // after it if it named one
                port.resume();
            }

            @Override
            public void refused() {
                follower.userVariablesPinned();
                pins.pin(PinReason.USER_VARIABLE); // they cannot be read: the session keeps its connection
                port.resume();
            }

            @Override
            public void lost(BackendException cause) {
                port.lostBackend(on, cause);
            }
        }));
        return true;
    }

    /** Reads back the collation, last-insert id or clock; the session's commands wait meanwhile. */
    private void readBack(BackendConnection on, int wanted) {
        readingLastInsertId = (wanted & ReadBack.LAST_INSERT_ID) != 0;
        on.run(new ReadBack(wanted, deprecateEof, new ReadBack.Outcome() {
            @Override
            public void read(String collation, String lastInsertId, String timestamp) {
                readingLastInsertId = false;
                follower.readBack(on, collation, lastInsertId, timestamp);
                if (!readUserVariablesBeforeGivingBack(on)) {
                    port.resume();
                }
            }

            @Override
            public void failed(BackendException cause) {
                readingLastInsertId = false;
                port.lostBackend(on, cause);
            }
        }));
    }

    /**
     * A {@code SELECT LAST_INSERT_ID()} is answered from the session's id when it arrives (the server's may be another
     * session's): one that arrives while the id a {@code LAST_INSERT_ID(expr)} set is being read back must wait to be
     * looked at until the read ended, or it gets the id from before (issue #38, seeds 10700 and 16531).
     */
    @Override
    public boolean readsBackForNext() {
        return readingLastInsertId;
    }

    @Override
    public SessionVariables variables() {
        return follower.variables();
    }

    /**
     * Read/write splitting: told first when a connection refuses to prepare again the statement an execute waits for;
     * true when it takes the execute elsewhere (decision 110).
     */
    public void onPrepareRefused(BiPredicate<BackendConnection, BackendError> policy) {
        statements.onPrepareRefused(policy);
    }

    /**
     * The response about to be reported to {@link #afterResponses} is a refusal kept from the client: the statement
     * did nothing there, so what its text would have pinned the session for is not on that connection.
     */
    public void refusalKept() {
        refusalKept = true;
        pins.restore(pinsBeforeStatement);
    }

    /**
     * As {@link #mayGiveBack}, for a statement being routed: the pins its own text brings, and the user variables it
     * names, belong to the connection it will run on, not to the one held now (read/write splitting). Counted against
     * the connection held, a {@code SELECT SQL_CALC_FOUND_ROWS ... INTO @v} kept a session on the replica its last
     * statement's diagnostics held it to, and its next write ran there and was refused (issue #38, split long run
     * seeds 184 and 324).
     */
    public boolean mayGiveBackBeforeStatement(BackendConnection connection) {
        return pinsBeforeStatement == 0 && connectionDone(connection) && !variablesUnknownBeforeStatement;
    }

    /**
     * Whether the connection is held only for the warnings its last statement left (and may go): a prepare, which is
     * no statement of its own, may then go to the primary (read/write splitting, issue #38: a replica refused it).
     */
    public boolean mayGiveBackButForDiagnostics(BackendConnection connection) {
        return !pins.isPinnedBesides(PinReason.DIAGNOSTICS) && connectionDone(connection)
                && !follower.userVariablesUnknown();
    }

    /** Scans the COM_QUERY {@code frame} and classifies it for a read/write split (decision 136). */
    public int classifyQuery(ByteBuf frame) {
        return scan.classify(frame);
    }

    /** The frame passed next to {@link #onCommand} is a COM_QUERY {@link #classifyQuery} read: see {@link QueryScan}. */
    public void queryScanned(ByteBuf frame) {
        scan.scanned(frame);
    }

    /** The session's prepared statement of this client id, or {@code null}. */
    public PreparedStatement statement(int clientId) {
        return statements.get(clientId);
    }

    /** The GTID of the session's last write (MariaDB with a binary log), or {@code null}. */
    public String lastGtid() {
        return follower.lastGtid();
    }

    @Override
    public boolean movedToAnotherServer(Duration timeout) {
        moveWait = timeout;
        String gtid = follower.lastGtid();
        gtidAfterMove = gtid == null || gtid.isEmpty() ? null : gtid;
        return gtidAfterMove != null;
    }

    @Override
    public void moveUndone() {
        gtidAfterMove = null; // back where the session wrote
    }

    @Override
    public boolean mustPrepare(BackendConnection connection) {
        return gtidAfterMove != null || ownLastInsertId.isWanted();
    }

    @Override
    public void prepareConnection(BackendConnection connection, Consumer<BackendException> done) {
        if (gtidAfterMove == null) {
            syncVariables(connection, done);
            return;
        }
        syncVariables(connection, error -> {
            if (error != null) {
                done.accept(error);
                return;
            }
            String gtid = gtidAfterMove;
            // The same wait as a causal read on a replica (decision 097): a session that moved must not read, on its
            // new server, data older than its own last write.
            GtidWait.run(connection, gtid, moveWait, deprecateEof, new GtidWait.Outcome() {
                @Override
                public void reached() {
                    gtidAfterMove = null; // every connection of this server has it now
                    done.accept(null);
                }

                @Override
                public void notReached(CausalWait.Outcome why) {
                    done.accept(new GtidNotReached(connection.dataSourceName() + " had not applied the session's "
                            + "last write " + gtid + " within " + moveWait.toMillis() + " ms ("
                            + why.name().toLowerCase(java.util.Locale.ROOT) + ")"));
                }

                @Override
                public void lost(BackendException cause) {
                    done.accept(cause);
                }
            });
        });
    }

    /** Makes the connection's session variables the session's. */
    private void syncVariables(BackendConnection connection, Consumer<BackendException> done) {
        String variables = SessionVariables.syncStatement(connection.state().variables(), follower.variables(),
                connection.state().loginValues(), connection.state().readOnly());
        String ownId = ownLastInsertId.assignmentWanted(follower.lastInsertId());
        if (variables == null && ownId == null) {
            done.accept(null);
            return;
        }
        String statement = ownId == null ? variables : variables == null ? ownId : ownId + ", " + variables.substring(4);
        connection.run(new SetSessionVariables(statement, error -> {
            if (error == null && ownId != null) {
                ownLastInsertId.assigned(connection);
            }
            if (error == null && connection.state().readOnly()) {
                connection.state().variables().copyFromButAccessMode(follower.variables());
            } else if (error == null) {
                connection.state().variables().copyFrom(follower.variables());
            } else if (error.serverError() != null) {
                connection.close(); // its variables are now half set: unknown state
            }
            if (error == null) {
                done.accept(null);
            } else if (error.serverError() != null) {
                done.accept(new BackendException("restoring session variables refused", error.serverError()));
            } else {
                done.accept(new BackendException("restoring session variables on " + connection.address()
                        + " failed", error));
            }
        }));
    }

    @Override
    public SessionStateListener stateFollower() {
        return follower;
    }

    @Override
    public boolean mayGiveBack(BackendConnection connection) {
        return mayGiveBackButForUserVariables(connection) && !follower.userVariablesUnknown();
    }

    private boolean mayGiveBackButForUserVariables(BackendConnection connection) {
        return !pins.isPinned() && connectionDone(connection);
    }

    /** Whether the connection is between commands, outside a transaction, and in a state its checks know. */
    private static boolean connectionDone(BackendConnection connection) {
        return connection != null && !connection.runsOwnCommand() && connection.isBetweenCommands()
                && !connection.tracker().inTransaction() && !connection.state().isTainted();
    }

    @Override
    public void sessionEnded() {
        pins.end();
        definitions.ended();
    }

    @Override
    public void forget() {
        if (clientTrackers != null) {
            clientTrackers.forget();
        }
        follower.forget();
        ownLastInsertId.forget();
        pins.forget();
        statements.forget();
    }

    @Override
    public PinReason pinnedBy() {
        return pins.first();
    }
}
