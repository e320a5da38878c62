package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.balancer.replication.CausalWait;
import io.sluice.config.CausalReads;
import io.sluice.config.TransactionalReadQueryStrategy;
import io.sluice.protocol.Command;
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
 */
public final class ReadWriteSplitting implements CommandPolicy {
    private final TransactionPooling inner;
    private final SessionPort port;
    private final ReadWriteGroup group;
    private final TransactionState transaction;
    private final boolean deprecateEof;
    /** Where the session's previous statement ran: {@code SHOW WARNINGS} and the like go there. */
    private String previous;

    public ReadWriteSplitting(SessionPort port, ReadWriteGroup group, boolean deprecateEof, boolean clientTracksState,
            boolean mariaDb) {
        this.inner = new TransactionPooling(port, deprecateEof, clientTracksState, mariaDb);
        this.port = port;
        this.group = group;
        this.deprecateEof = deprecateEof;
        this.transaction = new TransactionState(
                group.config().transactionalReadQueryStrategy() != TransactionalReadQueryStrategy.PRIMARY);
    }

    @Override
    public ByteBuf onCommand(int command, ByteBuf frame) {
        if (port.connection() == null && port.isQuiet()) {
            route(command == Command.COM_QUERY ? transaction.route(StatementClassifier.classify(frame,
                    frame.readerIndex() + Packets.HEADER_SIZE + 1, frame.writerIndex()))
                    : command == Command.COM_STMT_EXECUTE ? executeRoute(frame) : RouteReason.OTHER);
        } else if (command == Command.COM_QUERY) {
            // On the connection held (a transaction, a pin), or behind a statement that waits for one: it runs there;
            // its effect on the transaction is still followed.
            transaction.route(StatementClassifier.classify(frame, frame.readerIndex() + Packets.HEADER_SIZE + 1,
                    frame.writerIndex()));
        }
        return inner.onCommand(command, frame);
    }

    /**
     * A prepared statement runs where its SQL would as a query: a SELECT's executions on a replica, where it is
     * prepared again on first use, as on any connection the session takes.
     */
    private RouteReason executeRoute(ByteBuf frame) {
        if (frame.readableBytes() < Packets.HEADER_SIZE + 5) {
            return RouteReason.OTHER;
        }
        PreparedStatement statement = inner.statement(frame.getIntLE(frame.readerIndex() + Packets.HEADER_SIZE + 1));
        return statement == null ? RouteReason.OTHER
                : transaction.route(StatementClassifier.classify(statement.sql()));
    }

    /** Chooses the data source the session's next connection comes from. */
    private void route(RouteReason wanted) {
        RouteReason reason = wanted;
        String target = group.primary();
        if (wanted.route() == Route.REPLICA) {
            String replica = group.config().causalReads() == CausalReads.GLOBAL ? null : group.pickReplica();
            if (replica == null) {
                reason = RouteReason.NO_REPLICA;
            } else {
                target = replica;
            }
        } else if (wanted.route() == Route.PREVIOUS && previous != null) {
            target = previous;
        }
        group.routed(reason);
        previous = target;
        port.routeTo(target.equals(group.primary()) ? null : target);
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
        return isReplica(connection) && causalWaitNeeded();
    }

    private boolean isReplica(BackendConnection connection) {
        return !connection.dataSourceName().equals(group.primary());
    }

    private boolean causalWaitNeeded() {
        String gtid = inner.lastGtid();
        return group.config().causalReads() != CausalReads.NONE && gtid != null && !gtid.isEmpty();
    }

    @Override
    public void prepareConnection(BackendConnection connection, Consumer<BackendException> done) {
        inner.prepareConnection(connection, error -> {
            if (error != null || !isReplica(connection) || !causalWaitNeeded()) {
                done.accept(error);
                return;
            }
            GtidWait.run(connection, inner.lastGtid(), group.config().causalReadsTimeout(), deprecateEof,
                    new GtidWait.Outcome() {
                        @Override
                        public void reached() {
                            group.causalWait(ReadWriteGroup.CausalOutcome.REACHED);
                            done.accept(null);
                        }

                        @Override
                        public void notReached(CausalWait.Outcome why) {
                            fallBack(why == CausalWait.Outcome.TIMED_OUT ? ReadWriteGroup.CausalOutcome.TIMED_OUT
                                    : ReadWriteGroup.CausalOutcome.FAILED, connection, done);
                        }

                        @Override
                        public void lost(BackendException cause) {
                            done.accept(cause); // the connection broke
                        }
                    });
        });
    }

    private void fallBack(ReadWriteGroup.CausalOutcome outcome, BackendConnection replica,
            Consumer<BackendException> done) {
        group.causalWait(outcome);
        group.routed(RouteReason.CAUSAL_TIMEOUT);
        previous = group.primary();
        port.routeTo(null);
        done.accept(new FallBackToPrimary("causal read: " + replica.dataSourceName() + " had not applied "
                + inner.lastGtid() + " (" + outcome.label() + ")"));
    }

    @Override
    public void afterResponses(BackendConnection connection) {
        transaction.onServerStatus(connection.tracker().serverStatus());
        inner.afterResponses(connection);
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
    public void forget() {
        transaction.reset();
        inner.forget();
    }

    @Override
    public void sessionEnded() {
        inner.sessionEnded();
    }

    @Override
    public PinReason pinnedBy() {
        return inner.pinnedBy();
    }
}
