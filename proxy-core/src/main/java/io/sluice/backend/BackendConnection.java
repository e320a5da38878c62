package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.util.concurrent.Promise;
import io.sluice.metrics.CommandObserver;
import io.sluice.metrics.LoopCounters;
import io.sluice.metrics.RateLimitedWarning;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ProtocolException;
import io.sluice.protocol.ServerErrors;
import io.sluice.relay.OkRewriter;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseListener;
import io.sluice.relay.ResponseObserver;
import io.sluice.relay.ResponseTracker;
import io.sluice.relay.SessionStateFilter;
import io.sluice.relay.SessionStateListener;
import io.sluice.statistics.StatementRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One authenticated connection to a backend server, and the handler of its channel. It lives on one event loop, the
 * same as the client sessions it serves, so nothing here is locked.
 *
 * <p>Every command written to the server, a client's or Sluice's own, has an entry in the connection's in-flight
 * queue until its response ends; the {@link ResponseTracker} follows the oldest one's response and reports its end
 * here. While the connection is lent to a session, the responses to the client's commands go to the client channel
 * read buffer by read buffer, as they arrive, without copies ({@link #relay}); the responses to Sluice's own commands
 * ({@link OwnCommand}) are read whole and handed to them. The two never interleave: Sluice runs its own commands only
 * when no response of the client's is outstanding, and the session holds the client's commands back while its own
 * run. In the pool's idle list any byte from the server means the connection is in an unknown state, so it is closed.
 */
public final class BackendConnection extends ChannelInboundHandlerAdapter
        implements ResponseListener, CommandObserver.Source {

    private static final Logger log = LoggerFactory.getLogger(BackendConnection.class);
    /** A response the tracker cannot follow: rate-limited, since a client's command can be its cause. */
    private static final RateLimitedWarning protocolWarning = new RateLimitedWarning(log);

    private enum Mode {
        /** Connecting and logging in ({@link BackendLogin}), then the post-login session check. */
        LOGGING_IN,
        /** In the pool's idle list: the server has nothing to say, and any byte from it means trouble. */
        IDLE,
        /** Out of the idle list and not lent: being acquired, handed over or reset. */
        HELD,
        /** Lent to a session: responses to its commands go straight to its client channel. */
        RELAY,
        CLOSED
    }

    private final BackendEndpoint endpoint;
    private final SessionKey key;
    private final ConnectionOwner owner;
    private final Promise<BackendConnection> ready;
    private final ConnectionState state;
    private final ResponseTracker tracker;
    private final InFlightCommands inFlight;
    private final OwnExchanges exchanges;
    private final StateReports stateReports;
    private final long createdNanos = System.nanoTime();

    private Channel channel;
    private Mode mode = Mode.LOGGING_IN;
    /** See {@link #lendings()}. */
    private long lendings;
    private BackendLogin login;
    private int serverConnectionId;
    private long idleSinceNanos;
    private boolean slotReleased;
    /** Reads from the server so far, and at the stall watch's last sweep: a sweep compares them. */
    private long reads;
    private long readsAtLastSweep;
    private int silentSweeps;

    // Set while lent.
    private BorrowingSession session;
    private CommandObserver observer;
    private LoopCounters counters;
    /** Where the next client command forwarded is counted by digest; {@code null}: nowhere. */
    private StatementRecord nextStatement;
    /** A relayed response ended in the read being relayed: the session hears of it once the read is written. */
    private boolean relayedCompleted;
    private boolean flushPending;
    private final RefusalWatch refusals = new RefusalWatch();

    /**
     * @param pooled whether the connection holds one of the pool's {@code maxPoolSize} slots; a health check's does
     *     not
     * @param state what its server session holds; its schema is the one to log in with
     */
    public BackendConnection(BackendEndpoint endpoint, SessionKey key, ConnectionOwner owner,
            Promise<BackendConnection> ready, long loginTimeoutMillis, boolean pooled, ConnectionState state) {
        this.endpoint = endpoint;
        this.key = key;
        this.owner = owner;
        this.ready = ready;
        this.state = state;
        this.slotReleased = !pooled;
        this.stateReports = new StateReports(this);
        this.tracker = new ResponseTracker(key.deprecateEof(), key.cacheMetadata(), this, stateReports);
        this.inFlight = new InFlightCommands(tracker);
        this.exchanges = new OwnExchanges(this, inFlight, tracker);
        this.login = new BackendLogin(this, BackendAuthentication.of(endpoint, key, state.schema()),
                loginTimeoutMillis);
    }

    public BackendEndpoint endpoint() {
        return endpoint;
    }

    /** The data source this connection belongs to. */
    public String dataSourceName() {
        return endpoint.dataSource();
    }

    /** {@code host:port} of the server, for messages. */
    public String address() {
        return endpoint.address();
    }

    /** The server's id of this connection, as {@code CONNECTION_ID()} returns it. */
    public int serverConnectionId() {
        return serverConnectionId;
    }

    public SessionKey key() {
        return key;
    }

    /** What the server session holds: schema, variables, prepared statements. */
    public ConnectionState state() {
        return state;
    }

    public Channel channel() {
        return channel;
    }

    /** The relay's view of the response stream. */
    public ResponseTracker tracker() {
        return tracker;
    }

    public long createdNanos() {
        return createdNanos;
    }

    public long idleSinceNanos() {
        return idleSinceNanos;
    }

    public boolean isOpen() {
        return mode != Mode.CLOSED && channel != null && channel.isActive();
    }

    // ---- lending to a session -------------------------------------------------------------------------------

    /**
     * Lends this connection, taken from the pool, to {@code target}: from now on responses to its commands go to its
     * client channel.
     *
     * @param commands where the commands' counts, times and slow ones are reported
     * @param follower who follows the session state the server reports (transaction pooling), or {@code null}
     * @param shown what the client is to see of OK packets that carry session state, when that is not all the
     *     connection's trackers report; {@code null}: relayed as they are
     */
    public void bind(BorrowingSession target, CommandObserver commands, SessionStateListener follower,
            SessionStateFilter shown) {
        if (mode != Mode.HELD) {
            throw new IllegalStateException("bind: " + mode + " (expected: HELD)");
        }
        session = target;
        observer = commands;
        counters = commands == null ? null : commands.counters();
        stateReports.lend(tracker, follower, state.tracksState(), shown);
        mode = Mode.RELAY;
        lendings++;
        channel.config().setAutoRead(true);
    }

    /**
     * How many times the connection was lent to a session so far: a session that finds the same count as after its
     * last statement has held it since, so whatever the server says of "the previous statement" is its own.
     */
    public long lendings() {
        return lendings;
    }

    /**
     * Takes the connection back from its session. Commands of the session still in flight are forgotten (the pool
     * closes a connection taken back mid-response).
     */
    public void unbind() {
        refusals.clear();
        session = null;
        observer = null;
        counters = null;
        relayedCompleted = false;
        tracker.summarize(false); // a traffic capture follows the session, not the connection
        stateReports.takeBack(tracker);
        if (mode == Mode.RELAY) {
            mode = Mode.HELD;
            inFlight.abandonClientCommands();
        }
    }

    /** The watch for a replica's refusal of a statement that may run again on the primary (decision 110). */
    public RefusalWatch refusals() {
        return refusals;
    }

    /** Marks the connection out of the idle list: taken by the pool for a session or for a reset. */
    public void markHeld() {
        if (mode == Mode.IDLE) {
            mode = Mode.HELD;
        }
    }

    /** Marks the connection idle in the pool. */
    public void markIdle() {
        mode = Mode.IDLE;
        idleSinceNanos = System.nanoTime();
        channel.config().setAutoRead(true); // an idle server never writes; reading notices when it closes
    }

    /**
     * Forwards one client command frame (taken: the channel releases it once written), whose response is relayed to
     * the session's client. Nothing is flushed: the caller flushes once per read batch.
     */
    public void forward(ByteBuf frame, ResponseKind kind) {
        forward(frame, kind, null, null, 0);
    }

    /**
     * Forwards one client command frame (taken), with observers of its response.
     *
     * @param captured a traffic capture's record of the command, or {@code null}
     * @param mapping transaction pooling's mapping of a prepared statement, or {@code null}
     * @param replacementStatementId for a COM_STMT_PREPARE, the id the client is shown in place of the server's; 0
     *     for none
     */
    public void forward(ByteBuf frame, ResponseKind kind, ResponseObserver captured, ResponseObserver mapping,
            int replacementStatementId) {
        if (kind == ResponseKind.NONE && inFlight.isEmpty()) {
            if (captured != null) {
                captured.onNoResponse();
            }
        } else {
            InFlight entry = inFlight.add(kind, null, replacementStatementId, mapping,
                    stateReports.takeRowLimit());
            entry.captured = captured;
            entry.statement = nextStatement;
            entry.onReplica = nextStatement != null && state.readOnly();
            if (kind != ResponseKind.NONE && observer != null && (nextStatement != null || observer.timesCommands())) {
                entry.start(frame, observer);
            }
        }
        nextStatement = null;
        channel.write(frame, channel.voidPromise());
    }

    /** The next client command forwarded counts its outcome in {@code record} (statistics by digest), or nowhere. */
    public void recordNext(StatementRecord record) {
        nextStatement = record;
        if (record != null) {
            tracker.summarize(true); // rows, affected rows and warnings are read only while summing up
        }
    }

    /** The next client command gets at most {@code max} rows, then {@code rule}'s ERR and onCut (decision 191). */
    public void limitRowsNext(long max, String rule, Runnable onCut) {
        stateReports.limitRowsNext(max, rule, onCut, session.clientChannel(), channel);
    }

    /** Forwards bytes that are not a command (the rest of a 16 MiB+ command, LOCAL INFILE data); taken. */
    public void forwardData(ByteBuf frame) {
        channel.write(frame, channel.voidPromise());
    }

    public void flush() {
        channel.flush();
    }

    /**
     * Sends commands of Sluice's own, pipelined, and collects their responses for them. Only when no response to a
     * client's command is outstanding: the two must not interleave. A command that cannot be sent is failed at once.
     */
    public void run(OwnCommand... commands) {
        exchanges.run(commands);
    }

    /**
     * How many times Sluice ran commands of its own here so far: what the server says of "the previous statement"
     * ({@code ROW_COUNT()}) is a session's only if none ran since that session's statement.
     */
    public long ownRuns() {
        return exchanges.runs();
    }

    /** Whether one of Sluice's own commands is in flight: the session's commands wait. */
    public boolean runsOwnCommand() {
        return inFlight.ownCommands() > 0;
    }

    /** Whether the connection is lent and idle between commands, with no response outstanding. */
    public boolean isBetweenCommands() {
        return mode == Mode.RELAY && inFlight.isEmpty() && tracker.isIdle();
    }

    /**
     * The stall watch's look at this connection, once per sweep: how many sweeps in a row have found a command in
     * flight (a client's or Sluice's own), the connection reading, and no byte from the server since the sweep
     * before. 0: nothing awaited, reading paused for a slow client, or the server spoke. The login has a timeout of
     * its own and is not counted.
     */
    public int silentSweeps() {
        if (mode == Mode.LOGGING_IN || mode == Mode.CLOSED || inFlight.isEmpty() || channel == null
                || !channel.config().isAutoRead() || reads != readsAtLastSweep) {
            readsAtLastSweep = reads;
            silentSweeps = 0;
            return 0;
        }
        return ++silentSweeps;
    }

    /** Starts reading again once the client has drained what was relayed. */
    public void resumeReading() {
        if (mode == Mode.RELAY) {
            channel.config().setAutoRead(true);
        }
    }

    /** Starts or stops summing each response up for the session's traffic capture. */
    public void summarizeResponses(boolean on) {
        tracker.summarize(on);
    }

    /**
     * The session's traffic capture ended: the commands in flight will not be recorded. Their records hear
     * {@link ResponseObserver#onAbandoned()} now, in order.
     */
    public void endCapture() {
        inFlight.endCapture();
        tracker.summarize(false);
    }

    /** Closes a server-side statement (COM_STMT_CLOSE has no response); written, flushed with what follows. */
    public void closeStatement(int serverId) {
        ByteBuf close = Packets.startFrame(channel.alloc(), 5);
        close.writeByte(Command.COM_STMT_CLOSE);
        close.writeIntLE(serverId);
        channel.write(Packets.finishFrame(close, 0), channel.voidPromise());
    }

    /** Closes the connection; it never returns to the pool. */
    public void close() {
        if (channel == null) {
            return; // not registered yet: the pool's connect listener closes what it opened
        }
        if (mode == Mode.IDLE && channel.isActive()) {
            // Between commands the server expects one: say goodbye, so that it does not log an aborted connection.
            mode = Mode.CLOSED;
            channel.writeAndFlush(Packets.command(channel.alloc(), Command.COM_QUIT, null))
                    .addListener(ChannelFutureListener.CLOSE);
        } else {
            channel.close();
        }
    }

    // ---- the response stream --------------------------------------------------------------------------------

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        channel = ctx.channel();
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        owner.onOpened(this);
        login.start(ctx.channel());
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf buf = (ByteBuf) msg;
        reads++;
        if (mode == Mode.RELAY && inFlight.ownCommands() == 0) {
            relay(buf);
        } else {
            exchanges.read(buf);
        }
    }

    /** The hot path: look at the bytes, hand the same buffer to the client, flush once per read batch. */
    private void relay(ByteBuf buf) {
        // One flag test per read; the refusal is looked at only for a statement that may be run again.
        boolean mayKeep = refusals.watching && inFlight.size() == 1 && ServerErrors.isWriteRefusal(buf);
        refusals.watching = false;
        try {
            tracker.scan(buf);
        } catch (ProtocolException e) {
            buf.release();
            protocolWarning.warn("backend {} broke the protocol, or the session's last command misled the tracker"
                    + " ({}): {}", address(), session.describeForLog(), e.getMessage());
            channel.close();
            return;
        }
        if (mayKeep && relayedCompleted) {
            buf.release(); // the client never sees it: the statement runs again on the primary
            refusals.refused = true;
            relayedCompleted = false;
            session.onResponsesRelayed();
            return;
        }
        Channel client = session.clientChannel();
        if (counters != null) {
            counters.bytesOut(buf.readableBytes());
        }
        OkRewriter rewriter = stateReports.relayRewriter();
        if (rewriter == null) {
            client.write(buf, client.voidPromise());
        } else {
            rewriter.write(buf, client);
        }
        if (relayedCompleted) {
            relayedCompleted = false;
            session.onResponsesRelayed();
            if (session == null) {
                // Transaction pooling: the session let the connection go with this response, its last: its bytes
                // leave now, since this connection no longer flushes for it.
                flushPending = false;
                client.flush();
                return;
            }
        }
        if (client.isWritable()) {
            flushPending = true; // flushed once at the end of the read batch
            return;
        }
        // Over connBufferSize: hand the bytes to the kernel now rather than at the end of the batch. Only if the
        // client's socket cannot take them (a client reading slower than the server sends) does reading stop until
        // it drains; toggling reads on every large read batch would cost two epoll_ctl calls each time.
        client.flush();
        flushPending = false;
        if (!client.isWritable()) {
            channel.config().setAutoRead(false);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (flushPending) {
            flushPending = false;
            if (session != null) {
                session.clientChannel().flush();
            }
        }
    }

    /** The tracker saw the oldest command's response end: its entry is done, and the next one's response begins. */
    @Override
    public void onResponseComplete() {
        OwnCommand own = inFlight.completeHead(observer, this);
        if (own == null) {
            relayedCompleted = true;
        } else {
            own.complete(); // after the next response began: the command may send more of Sluice's own
        }
    }

    @Override
    public void onLocalInfileRequest() {
        if (session != null) {
            session.onLocalInfileRequest();
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (session != null && ctx.channel().isWritable()) {
            session.onBackendWritable();
        }
        ctx.fireChannelWritabilityChanged();
    }

    // ---- login ----------------------------------------------------------------------------------------------

    /** The login and its session check succeeded: the connection is ready for the pool. */
    void loggedIn(int connectionId) {
        serverConnectionId = connectionId;
        login = null;
        mode = Mode.HELD;
        idleSinceNanos = System.nanoTime();
        owner.onLoggedIn(this);
        ready.trySuccess(this);
    }

    /** Whether the connection still logs in (the login's own commands run); false once ready, failed or closed. */
    boolean isLoggingIn() {
        return mode == Mode.LOGGING_IN;
    }

    /** The login failed or timed out: the connection closes and whoever waits for it hears why. */
    void loginFailed(BackendException cause) {
        if (mode == Mode.LOGGING_IN) {
            failed(cause);
        }
    }

    /** The TCP connect failed, or was not tried (a refused credential): the channel never became active. */
    public void connectFailed(Throwable cause) {
        releaseSlot();
        ready.tryFailure(cause instanceof BackendException refused ? refused : new BackendException("cannot connect to "
                + dataSourceName() + " (" + address() + "): " + cause.getMessage(), cause));
    }

    /** The login under way, {@code null} once it is over. */
    BackendLogin login() {
        return login;
    }

    /** What rewrites OK packets for the session's client, {@code null} when none does. */
    OkRewriter okRewriter() {
        return stateReports.rewriter();
    }

    // ---- failure and close ----------------------------------------------------------------------------------

    /** Something went wrong on the connection: whoever waits hears why, and it closes. */
    void failed(BackendException cause) {
        ready.tryFailure(cause);
        inFlight.fail(cause);
        if (channel != null) {
            channel.close();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        Mode was = mode;
        log.debug("{} closed", this);
        mode = Mode.CLOSED;
        if (login != null) {
            login.finish();
        }
        exchanges.release();
        stateReports.release();
        boolean responseStarted = tracker.isResponseStarted();
        try {
            releaseSlot();
            owner.onClosed(this);
        } finally {
            // Runs even when the pool's bookkeeping throws (a loop already stopping): an unfinished exchange's
            // packets are released here and its caller is told, or they leak.
            BackendException closed = new BackendException("connection to " + address() + " closed");
            ready.tryFailure(closed);
            inFlight.fail(closed);
            if (was == Mode.RELAY && session != null) {
                BorrowingSession lost = session;
                session = null;
                lost.onBackendLost(this, responseStarted);
            }
            ctx.fireChannelInactive();
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("backend {} connection error: {}", address(), cause.toString());
        ctx.close();
    }

    private void releaseSlot() {
        if (!slotReleased) {
            slotReleased = true;
            owner.slotReleased(this);
        }
    }

    @Override
    public String describeForLog() {
        BorrowingSession current = session;
        return (current == null ? "" : current.describeForLog() + " ") + "backend=" + dataSourceName() + " schema="
                + state.schema();
    }

    @Override
    public String toString() {
        return "BackendConnection[" + dataSourceName() + " " + address() + " #" + serverConnectionId + " " + mode + "]";
    }
}
