package io.sluice.routing;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.SetSessionVariables;
import io.sluice.config.CausalReads;
import io.sluice.config.TransactionalReadQueryStrategy;
import io.sluice.pooling.PinReason;
import io.sluice.pooling.SessionPort;
import io.sluice.pooling.StatementMapping;
import io.sluice.pooling.TransactionPooling;
import io.sluice.protocol.Command;
import io.sluice.protocol.ErrorCode;
import io.sluice.protocol.Packets;
import io.sluice.readwrite.Route;
import io.sluice.readwrite.RouteReason;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.readwrite.TransactionState;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import io.sluice.relay.SessionStateFilter;
import io.sluice.relay.SessionStateListener;
import io.sluice.state.PreparedStatement;
import io.sluice.state.SessionVariables;
import java.util.function.Consumer;

/**
 * Read/write splitting (issue #28): transaction pooling whose every transaction, or autocommit statement, takes its
 * connection from the primary or from a replica of the session's group, as its first statement's class says
 * ({@link StatementClassifier}, {@link TransactionState}). The session's state follows it to whichever server runs
 * the statement, as transaction pooling carries it between connections ({@link TransactionPooling}, which this
 * wraps). With causal reads (the default) a read after the session's write runs on a replica only once that replica
 * has applied the write ({@code MASTER_GTID_WAIT} before the read, up to the group's timeout), else on the primary.
 *
 * <p>A prepared statement's executions go where its SQL would go as a query (it is prepared again on a replica
 * connection on first use); every other command goes to the primary; so does everything while a connection is held
 * (a transaction, a pin), which runs where it began.
 *
 * <p>A replica is never written through it (decision 110): replica connections are READ ONLY (their pool's, or made
 * so here before they are lent), a session's access mode is never carried to them, what would make one read-write
 * is refused where it would run there, and a plain read a replica refuses as a write runs again on the primary.
 */
public final class ReadWriteSplitting implements RoutingPolicy, StatementMapping {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(ReadWriteSplitting.class);
    /** A command that is not a COM_QUERY: no scan was made before the policy's work. */
    private static final int NOT_SCANNED = -3;
    private final TransactionPooling inner;
    private final SessionPort port;
    private final Router router;
    private final ReadWriteGroup group;
    private final TransactionState transaction;
    private final CausalWaiter causal;
    /** Where the session's previous statement ran: {@code SHOW WARNINGS} and the like go there. */
    private String previous;
    /** The read being routed asked for no causal wait ({@code /* sluice: replica *}{@code /}). */
    private boolean waitSkipped;
    /**
     * The statement just routed to a replica, kept (retained) to run again on the primary should the replica refuse
     * it as a write (decision 110); {@code null} when there is none. Released once its response is relayed.
     */
    private ByteBuf runAgain;
    private int runAgainFrom;
    private int runAgainTo;
    /** The command kept: COM_QUERY, or COM_STMT_EXECUTE with the session's statement id it named. */
    private int runAgainCommand;
    private int runAgainStatement;
    /** The statement kept to run again is a write sent to the primary, not a read sent to a replica. */
    private boolean runAgainOnPrimary;
    /** The statement first among the held ones is one a replica refused: it goes to the primary. */
    private boolean refusedByReplica;
    /**
     * A client's COM_RESET_CONNECTION went to the server (pipelined behind other commands): it put the access mode
     * back to the server's default, so a replica's connection is made READ ONLY again once it is answered.
     */
    private boolean resetForwarded;

    ReadWriteSplitting(SessionPort port, Router router, ReadWriteGroup group, boolean deprecateEof,
            boolean clientTracksState, boolean mariaDb) {
        this.inner = new TransactionPooling(port, deprecateEof, clientTracksState, mariaDb);
        this.port = port;
        this.router = router;
        this.group = group;
        this.causal = new CausalWaiter(group, router, deprecateEof, () -> previous = group.primary());
        this.transaction = new TransactionState(
                group.config().transactionalReadQueryStrategy() != TransactionalReadQueryStrategy.PRIMARY);
        inner.onPrepareRefused(this::prepareRefused);
    }

    /**
     * A replica refused to prepare the statement an execute kept to run again waits for, as a write (MariaDB checks
     * the access mode when it opens the tables, so a view that calls a writing function is refused at prepare): the
     * execute, still first among the held commands and untouched, runs on the primary instead (decision 110).
     */
    private boolean prepareRefused(BackendConnection connection, Packets.BackendError error) {
        if (runAgain == null || runAgainCommand != Command.COM_STMT_EXECUTE || !isReplica(connection)
                || error.code() != ErrorCode.ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION.code()
                && error.code() != ErrorCode.ER_OPTION_PREVENTS_STATEMENT.code()) {
            return false;
        }
        dropRunAgain();
        log.debug("read/write group {}: replica {} refused to prepare a statement as a write; it runs on the primary",
                group.name(), connection.dataSourceName());
        refusedByReplica = true;
        router.routeFirstAgain();
        return true;
    }

    @Override
    public ByteBuf onCommand(int command, ByteBuf frame) {
        transaction.sessionReadOnly(sessionReadOnly());
        // One scan of a query for all that follows, the pins included (decision 136).
        int queryClass = command == Command.COM_QUERY ? inner.classifyQuery(frame) : NOT_SCANNED;
        BackendConnection held = port.connection();
        if (command == Command.COM_QUERY && held != null && staysOnReplica(held)
                && StatementClassifier.changesAccessMode(queryClass)) {
            // It would run on the replica's connection and make it read-write: refused, nothing runs (decision 110).
            int sequenceId = Packets.sequenceId(frame, frame.readerIndex()) + 1;
            frame.release();
            router.refuseAccessModeOnReplica(sequenceId, group.name(), held.dataSourceName());
            return null;
        }
        boolean mayRunAgain = false;
        if ((command == Command.COM_QUERY || command == Command.COM_STMT_EXECUTE) && waitsToBeRouted(command, frame,
                held, queryClass) || command == Command.COM_STMT_PREPARE && preparesOnPrimary(held, frame)) {
            router.holdToRoute(); // routeHeld routes it once the commands before it are answered
        } else if (held == null && port.isQuiet() && port.visiting()) {
            // A query rule sent it to another group (decision 194): not routed here; its effect is still followed.
            dropRunAgain();
            int statementClass = queryClass != NOT_SCANNED ? queryClass : statementClass(command, frame);
            if (statementClass >= 0) {
                transaction.route(statementClass);
            }
        } else if (held == null && port.isQuiet()) {
            dropRunAgain();
            RouteReason wanted = wantedRoute(command, frame, queryClass);
            String target = route(wanted, frame);
            router.routeTo(target.equals(group.primary()) ? null : target);
            mayRunAgain = mayRunAgain(command, wanted, target, frame);
        } else if (command == Command.COM_QUERY) {
            // On the connection held (a transaction, a pin), or behind a statement that waits for one: it runs there;
            // its effect on the transaction is still followed.
            transaction.route(queryClass);
        }
        if (queryClass != NOT_SCANNED) {
            inner.queryScanned(frame);
        }
        ByteBuf forwarded = inner.onCommand(command, frame);
        if (mayRunAgain && forwarded != null) {
            keepToRunAgain(command, forwarded);
        }
        if (command == Command.COM_RESET_CONNECTION && forwarded != null) {
            resetForwarded = true;
        }
        return forwarded;
    }

    /**
     * Whether a statement on {@code held}, a connection the session holds now, runs on a replica whatever it is: a
     * replica's connection in a read-only transaction, or one the session cannot let go (a pin) while nothing else
     * is outstanding.
     */
    private boolean staysOnReplica(BackendConnection held) {
        if (!isReplica(held)) {
            return false;
        }
        return transaction.transactionRoute() == Route.REPLICA
                || port.isQuiet() && !held.runsOwnCommand() && !inner.mayGiveBack(held);
    }

    /**
     * Whether a statement routed to {@code target} may run again on the primary if that replica refuses it as a write
     * (1792, 1290; decision 110): a single-packet read (a COM_QUERY, or a COM_STMT_EXECUTE without a cursor) outside
     * any transaction, with autocommit on, that nothing else is outstanding with. Then the replica refused it before it
     * did anything, and running it on the primary is what the client would have got there.
     */
    private boolean mayRunAgain(int command, RouteReason wanted, String target, ByteBuf frame) {
        if (command == Command.COM_STMT_EXECUTE) {
            int base = frame.readerIndex() + Packets.HEADER_SIZE;
            if (frame.readableBytes() < Packets.HEADER_SIZE + 6 || frame.getByte(base + 5) != 0) {
                return false; // a cursor: its rows come by COM_STMT_FETCH on the replica's connection
            }
        } else if (command != Command.COM_QUERY) {
            return false;
        }
        boolean alone = !transaction.inTransaction() && transaction.autocommit()
                && Packets.payloadLength(frame, frame.readerIndex()) < Packets.MAX_PAYLOAD;
        if (target.equals(group.primary())) {
            // A primary that just turned read-only refuses a plain autocommit write before doing anything: it runs
            // again on the next primary (decision 178). Only where the primary may change.
            runAgainOnPrimary = alone && group.dynamic() && wanted == RouteReason.WRITE
                    && command == Command.COM_QUERY && PlainWrite.startsWith(frame);
            return runAgainOnPrimary;
        }
        runAgainOnPrimary = false;
        return (wanted == RouteReason.REPLICA || wanted == RouteReason.REPLICA_HINT) && alone;
    }

    /** Keeps the statement about to go to a replica (retained: no copy) until its response says how it went. */
    private void keepToRunAgain(int command, ByteBuf frame) {
        dropRunAgain();
        runAgainFrom = frame.readerIndex();
        runAgainTo = frame.writerIndex();
        runAgainCommand = command;
        // an execute's statement id is the connection's once sent: the session's is put back to run it again
        runAgainStatement = command == Command.COM_STMT_EXECUTE
                ? frame.getIntLE(frame.readerIndex() + Packets.HEADER_SIZE + 1) : 0;
        runAgain = frame.retain();
    }

    private void dropRunAgain() {
        if (runAgain != null) {
            runAgain.release();
            runAgain = null;
        }
    }

    /**
     * The route a statement wants, its effect on the transaction followed: call it once per statement, in order. A
     * prepared statement's executions go where its SQL would go as a query (prepared again on the replica's
     * connection on first use, as on any connection the session takes).
     */
    private RouteReason wantedRoute(int command, ByteBuf frame, int queryClass) {
        int statementClass = queryClass != NOT_SCANNED ? queryClass : statementClass(command, frame);
        RouteReason wanted = statementClass < 0 ? RouteReason.OTHER : transaction.route(statementClass);
        Route ruled = router.ruleRoute(command, frame);
        if (ruled == null) {
            return wanted;
        }
        // A query rule's route acts as the hints do (decision 167): a plain read goes where it says, anything else
        // runs where it must (a replica is never written through Sluice, a transaction stays where it began).
        boolean plainRead = wanted == RouteReason.REPLICA || wanted == RouteReason.REPLICA_HINT;
        router.ruleRouted(plainRead || ruled == Route.PRIMARY && wanted.route() == Route.PRIMARY);
        return !plainRead ? wanted : ruled == Route.PRIMARY ? RouteReason.HINT : RouteReason.REPLICA_HINT;
    }

    /**
     * The {@link StatementClassifier} class of a query, or of the SQL an execute runs; -1 for any other command, or
     * an execute of a statement the session does not have.
     */
    private int statementClass(int command, ByteBuf frame) {
        if (command == Command.COM_QUERY) {
            return inner.classifyQuery(frame);
        }
        if (command != Command.COM_STMT_EXECUTE || frame.readableBytes() < Packets.HEADER_SIZE + 5) {
            return -1;
        }
        PreparedStatement statement = inner.statement(frame.getIntLE(frame.readerIndex() + Packets.HEADER_SIZE + 1));
        if (statement == null) {
            return -1;
        }
        if (statement.statementClass() == -2) { // not prepared by this session's own prepare (moved, or a guess)
            statement.statementClass(StatementClassifier.classify(statement.sql()));
        }
        return statement.statementClass();
    }

    /**
     * Whether a statement must wait until the commands before it are answered and then be routed, rather than run on
     * the connection the session holds (or is taking) now. It waits when it arrives
     * <ul>
     *   <li>with nothing outstanding, while the connection is held only for one of Sluice's own commands after the
     *       previous statement (a read-back of the collation a {@code SET NAMES} changed, decision 098): else a read
     *       would run on the primary where the SET ran;</li>
     *   <li>while the session's connection is a replica's (a read still answered, for a client that pipelines) and it
     *       is not a read: else a write would run on the replica;</li>
     *   <li>behind another statement that waits: statements are routed in order.</li>
     * </ul>
     * A statement of a transaction begun on a replica stays with it (the server refuses a write there).
     */
    private boolean waitsToBeRouted(int command, ByteBuf frame, BackendConnection held, int queryClass) {
        if (router.holdsToRoute()) {
            return true;
        }
        if (held != null && held.runsOwnCommand() && port.isQuiet()) {
            return true;
        }
        String on = held != null ? held.dataSourceName() : port.isQuiet() ? null : previous;
        return on != null && !on.equals(group.primary()) && transaction.transactionRoute() != Route.REPLICA
                && leavesReplica(queryClass != NOT_SCANNED ? queryClass : statementClass(command, frame));
    }

    /** A write prepared while a replica's connection is held only for its warnings: on the primary (#38, seed 335). */
    private boolean preparesOnPrimary(BackendConnection held, ByteBuf frame) {
        return held != null && isReplica(held) && port.isQuiet() && transaction.transactionRoute() != Route.REPLICA
                && inner.mayGiveBackButForDiagnostics(held) && leavesReplica(StatementClassifier.classify(frame,
                frame.readerIndex() + Packets.HEADER_SIZE + 1, frame.writerIndex()));
    }

    /** Whether the statement, on its own, goes elsewhere than a replica (a write, a SET, a locking read...). */
    private static boolean leavesReplica(int statementClass) {
        if (statementClass < 0) {
            return false; // an execute of a statement the session does not have: answered with an error anywhere
        }
        Route route = StatementClassifier.route(statementClass);
        return route != Route.REPLICA && route != Route.PREVIOUS;
    }

    /**
     * A statement that waited to be routed ({@link #waitsToBeRouted}) is first among the session's commands, and the
     * connection is between commands: routes it. A session that may not let its connection go (a transaction, a
     * pin) runs it there, as any statement in a transaction.
     */
    @Override
    public boolean routeHeld(int command, ByteBuf frame, BackendConnection connection) {
        if (refusedByReplica) {
            // A replica refused it as a write: the primary runs it, the client sees only the primary's answer.
            refusedByReplica = false;
            if (connection != null && !inner.mayGiveBack(connection)) {
                return false;
            }
            group.routed(runAgainOnPrimary ? RouteReason.PRIMARY_REFUSED : RouteReason.REPLICA_REFUSED);
            previous = group.primary();
            waitSkipped = false;
            router.routeTo(null);
            // The primary that refused it is still named so until the next round: never run it there again.
            return connection == null || runAgainOnPrimary || !connection.dataSourceName().equals(group.primary());
        }
        dropRunAgain();
        transaction.sessionReadOnly(sessionReadOnly());
        RouteReason wanted = wantedRoute(command, frame, NOT_SCANNED);
        if (connection != null && !(command == Command.COM_STMT_PREPARE ? inner.mayGiveBackButForDiagnostics(connection)
                : inner.mayGiveBackBeforeStatement(connection))) {
            return false;
        }
        String target = route(wanted, frame);
        if (connection != null && target.equals(connection.dataSourceName())) {
            return false;
        }
        router.routeTo(target.equals(group.primary()) ? null : target);
        if (mayRunAgain(command, wanted, target, frame)) {
            keepToRunAgain(command, frame);
        }
        return true;
    }

    /**
     * Whether the session's transaction access mode is READ ONLY, as the server's tracker last reported it (MariaDB's
     * {@code tx_read_only}, MySQL's and MariaDB 11.1's {@code transaction_read_only}): two map lookups, no
     * allocation.
     */
    private boolean sessionReadOnly() {
        SessionVariables variables = inner.variables();
        return isOn(variables.get("tx_read_only")) || isOn(variables.get("transaction_read_only"));
    }

    private static boolean isOn(String value) {
        return value != null && (value.equalsIgnoreCase("ON") || value.equals("1") || value.equalsIgnoreCase("TRUE"));
    }

    /** Chooses the data source the session's next connection comes from, and counts the route. */
    private String route(RouteReason wanted, ByteBuf frame) {
        RouteReason reason = wanted;
        String target = group.primary();
        waitSkipped = wanted == RouteReason.REPLICA_HINT;
        if (wanted.route() == Route.REPLICA) {
            String replica = group.pickReplica();
            if (replica == null) {
                reason = RouteReason.NO_REPLICA;
            } else {
                target = replica;
                if (wanted == RouteReason.REPLICA && group.config().causalReads() == CausalReads.GLOBAL) {
                    reason = RouteReason.CAUSAL_GLOBAL; // a read that waits for the primary's position
                }
            }
        } else if (wanted.route() == Route.PREVIOUS && previous != null) {
            target = previous;
        } else if (wanted == RouteReason.SESSION_SET && !group.primaryUp()) { // a server-wide SET is SERVER_STATE
            // SET and USE change only the session: while the primary is down a replica answers them (a driver's
            // connect-time SETs among them), and the follower carries the change to the primary once it is back.
            // Not SET GLOBAL / PERSIST: that would change the replica's server.
            String replica = group.pickReplica();
            if (replica != null) {
                target = replica;
                reason = RouteReason.SET_WHILE_PRIMARY_DOWN;
            }
        }
        group.routed(reason);
        previous = target;
        return target;
    }

    @Override
    public boolean followsSession() {
        return true;
    }

    @Override
    public boolean movesBetweenBackends() {
        return false; // its backends are the group's, chosen per statement
    }

    @Override
    public boolean mustPrepare(BackendConnection connection) {
        if (inner.mustPrepare(connection)) {
            return true; // the session's last-insert id first, for code that waits to run there (issue #38)
        }
        if (port.visiting()) {
            return false; // another group's (decision 194): neither replica nor primary here
        }
        return isReplica(connection) ? !connection.state().readOnly() || runAgain != null || causalWaitNeeded()
                : connection.state().readOnly() // a replica's connection, of a data source now the primary
                        || runAgain != null && runAgainOnPrimary; // a write kept to run again: its answer watched
    }

    private boolean isReplica(BackendConnection connection) {
        return !connection.dataSourceName().equals(group.primary());
    }

    private boolean causalWaitNeeded() {
        return !waitSkipped && causal.needed(inner.lastGtid());
    }

    /**
     * Makes the connection match the session, then, on a replica, waits for the session's last write (causal reads).
     * A replica's connection is read-only before anything else: its pool makes new ones so at login, and one opened
     * before the data source became a replica (a config reload) is made so here, for good (decision 110).
     */
    @Override
    public void prepareConnection(BackendConnection connection, Consumer<BackendException> done) {
        if (port.visiting()) {
            // Another group's, for one statement a rule sent there (decision 194): the session's state only; its
            // access mode is that group's, and no causal wait (the session's writes are in this group). Diagnostics
            // are not kept there: what reads them runs on the primary.
            previous = group.primary();
            inner.prepareConnection(connection, done);
            return;
        }
        // Where the statement runs, which is not always where it was routed: a write routed while a switchover held
        // the primary runs on the next one. SHOW WARNINGS, ROW_COUNT() and the like follow it there (decision 193).
        previous = connection.dataSourceName();
        if (!isReplica(connection) && connection.state().readOnly()) {
            // Opened while its data source was a replica, which is the primary now (issue #40): writable first.
            connection.run(new SetSessionVariables(SetSessionVariables.READ_WRITE, error -> {
                if (error == null) {
                    connection.state().readWrite();
                    connection.state().variables().forgetAccessMode(); // the server's default, as at login
                    prepareMatched(connection, done);
                } else {
                    connection.close();
                    done.accept(error);
                }
            }));
            return;
        }
        if (isReplica(connection) && !connection.state().readOnly()) {
            connection.run(new SetSessionVariables(SetSessionVariables.READ_ONLY, error -> {
                if (error == null) {
                    connection.state().readOnly(true);
                    prepareMatched(connection, done);
                } else {
                    connection.close(); // its access mode is unknown: it is never lent, nor pooled
                    done.accept(error);
                }
            }));
            return;
        }
        prepareMatched(connection, done);
    }

    private void prepareMatched(BackendConnection connection, Consumer<BackendException> done) {
        Consumer<BackendException> ready = runAgain == null || !isReplica(connection) && !runAgainOnPrimary ? done
                : error -> {
            if (error == null) {
                connection.refusals().watch(); // the statement kept to run again is the next one it answers
            }
            done.accept(error);
        };
        inner.prepareConnection(connection, error -> {
            if (error != null || !isReplica(connection) || !causalWaitNeeded()) {
                ready.accept(error);
            } else {
                causal.await(connection, inner.lastGtid(), ready);
            }
        });
    }

    @Override
    public void afterResponses(BackendConnection connection) {
        if (runAgain != null) {
            ByteBuf frame = runAgain;
            runAgain = null;
            if (connection.refusals().take()) {
                // The replica refused it as a write before doing anything (a stored function that writes, behind a
                // view), or the primary did, read-only now: it runs on the primary, first (the next one: writes wait
                // for the group's next round), and the client sees that answer only.
                if (runAgainOnPrimary) {
                    group.topology().refusedWrites(connection.dataSourceName());
                }
                log.debug("read/write group {}: {} refused a statement as a write; it runs on the primary",
                        group.name(), connection.dataSourceName());
                refusedByReplica = true;
                frame.setIndex(runAgainFrom, runAgainTo);
                if (runAgainCommand == Command.COM_STMT_EXECUTE) {
                    frame.setIntLE(runAgainFrom + Packets.HEADER_SIZE + 1, runAgainStatement);
                }
                inner.refusalKept(); // the replica's ERR is not the session's to read with SHOW ERRORS
                router.runAgainFirst(frame, runAgainCommand);
            } else {
                frame.release();
            }
        }
        if (isReplica(connection) && !port.visiting() && connection.isBetweenCommands() && !connection.runsOwnCommand()
                && (resetForwarded || accessModeChanged(connection.state().variables()))) {
            restoreReadOnly(connection, resetForwarded);
            resetForwarded = false;
            return;
        }
        resetForwarded &= !connection.isBetweenCommands(); // answered on the primary's connection: nothing to do
        transaction.onServerStatus(connection.tracker().serverStatus());
        inner.afterResponses(connection);
    }

    /**
     * Whether the server reported that a statement of the session changed the access mode of the replica's
     * connection away from READ ONLY (one that reached it despite the classifier and the refusal above).
     */
    private static boolean accessModeChanged(SessionVariables variables) {
        String tx = variables.get("tx_read_only"); // two map lookups, no allocation: after each response on a replica
        String transaction = variables.get("transaction_read_only");
        return tx != null && !isOn(tx) || transaction != null && !isOn(transaction);
    }

    /**
     * A replica's connection reported a READ WRITE access mode: READ ONLY again before anything else runs on it, or
     * the session ends and the connection closes (decision 110). The session's commands wait meanwhile.
     */
    private void restoreReadOnly(BackendConnection connection, boolean afterReset) {
        if (afterReset) {
            log.debug("read/write group {}: the connection to replica {} is read-only again after the client's reset",
                    group.name(), connection.dataSourceName());
        } else {
            log.warn("read/write group {}: a statement made the connection to replica {} read-write; it is read-only"
                    + " again", group.name(), connection.dataSourceName());
        }
        connection.run(new SetSessionVariables(SetSessionVariables.READ_ONLY, error -> {
            if (error != null) {
                connection.close();
                port.lostBackend(connection, error);
                return;
            }
            connection.state().variables().forgetAccessMode(); // READ ONLY, as at login
            connection.state().readOnly(true); // for good, as one opened for a replica (decision 153)
            transaction.onServerStatus(connection.tracker().serverStatus());
            inner.afterResponses(connection);
            port.resume();
        }));
    }

    @Override
    public boolean sendStatementCommand(BackendConnection connection, int command, ByteBuf frame, ResponseKind kind,
            ResponseObserver captured) {
        return inner.sendStatementCommand(connection, command, frame, kind, captured);
    }

    @Override
    public SessionVariables variables() {
        return inner.variables();
    }

    @Override
    public SessionStateFilter sessionStateShown(BackendConnection connection) {
        return inner.sessionStateShown(connection);
    }

    @Override
    public SessionStateListener stateFollower() {
        return inner.stateFollower();
    }

    @Override
    public boolean mayGiveBack(BackendConnection connection) {
        return inner.mayGiveBack(connection);
    }

    @Override
    public boolean readsBackForNext() {
        return inner.readsBackForNext();
    }

    @Override
    public void forget() {
        transaction.reset();
        refusedByReplica = false;
        resetForwarded = false;
        dropRunAgain();
        inner.forget();
    }

    @Override
    public void sessionEnded() {
        dropRunAgain();
        inner.sessionEnded();
    }

    @Override
    public PinReason pinnedBy() {
        return inner.pinnedBy();
    }
}
