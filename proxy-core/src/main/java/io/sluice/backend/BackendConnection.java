package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.metrics.CommandTiming;
import io.sluice.metrics.LoopCounters;
import io.sluice.multiplexing.SessionVariables;
import io.sluice.multiplexing.StatementCache;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.Packets.BackendError;
import io.sluice.protocol.ProtocolException;
import io.sluice.relay.ResponseTracker;
import io.sluice.slowlog.SlowQueryLog;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One authenticated connection to a backend server, and the handler of its channel. It lives on one event loop, the
 * same as the client sessions it serves, so nothing here is locked.
 *
 * <p>Modes: while {@code AUTHENTICATING} or running a {@code PRIVATE} exchange (reset, schema change) it reads whole
 * packets; while lent to a session ({@code RELAY}) it passes each read buffer straight to the client channel, after
 * the {@link ResponseTracker} has looked at it; while {@code IDLE} in the pool any byte from the server means the
 * connection is in an unknown state, so it is closed.
 */
public final class BackendConnection extends ChannelInboundHandlerAdapter
        implements ResponseTracker.Listener, CommandTiming.Source {

    private static final Logger log = LoggerFactory.getLogger(BackendConnection.class);

    /**
     * The session variables that COM_RESET_CONNECTION may leave changed. Read after login and again before the
     * connection goes back to the pool: if the character set differs, the connection no longer matches its
     * {@link SessionKey} and is closed; the schema tells which sessions it can serve without COM_INIT_DB.
     */
    static final String SESSION_CHECK_QUERY = "SELECT DATABASE(), @@character_set_client, "
            + "@@character_set_connection, @@character_set_results, @@collation_connection, @@sql_mode, "
            + "@@wait_timeout";

    /**
     * Transaction pooling: the trackers that report, in OK packets, every session variable set, every schema change
     * and any other state change, so that a session's state can follow it to its next connection. Set after login
     * and after every COM_RESET_CONNECTION, which puts them back to the server's defaults.
     */
    static final String SESSION_TRACKERS = "SET SESSION session_track_system_variables = '*', "
            + "session_track_schema = ON, session_track_state_change = ON";

    /** The frontend session a connection is lent to. */
    public interface Session {
        /** The client channel that relayed bytes are written to. */
        Channel clientChannel();

        /** The server asked for a LOCAL INFILE upload: the client's next packets are file data. */
        void onLocalInfileRequest();

        /**
         * The backend connection closed or broke while lent.
         *
         * @param responseStarted whether bytes of an unfinished response have already reached the client
         */
        void onBackendLost(BackendConnection backend, boolean responseStarted);

        // ---- operations (issue #5) ----

        /** Where this session's loop counts commands and bytes; {@code null} when metrics are off. */
        default LoopCounters loopCounters() {
            return null;
        }

        /** The slow-query log; {@code null} when there is none. */
        default SlowQueryLog slowQueryLog() {
            return null;
        }

        /** The session as a slow-query log line names it (client, id, user). */
        default String describeForLog() {
            return "";
        }

        /** A whole response has been relayed (graceful shutdown closes sessions at such moments). */
        default void onResponseComplete() {
        }

        /** Transaction pooling: who hears the session state the server reports; {@code null} in SESSION pooling. */
        default ResponseTracker.StateListener stateListener() {
            return null;
        }
    }

    /** Completion of a private exchange. Responses are whole packets, owned by the callee, who must release them. */
    interface PrivateCallback {
        void onComplete(List<List<ByteBuf>> responses, Throwable failure);
    }

    private enum Mode {
        AUTHENTICATING,
        PRIVATE,
        IDLE,
        RELAY,
        CLOSED
    }

    private final EventLoopPool pool;
    private final SessionKey key;
    private final ResponseTracker tracker;
    private final long createdNanos = System.nanoTime();
    private final Promise<BackendConnection> ready;
    private final long loginTimeoutMillis;

    private Channel channel;
    private Mode mode = Mode.AUTHENTICATING;
    private BackendAuthentication authentication;
    private ScheduledFuture<?> loginTimeout;
    private String schema;
    private String characterSets;
    private long idleSinceNanos;
    private Session session;
    private ByteBuf cumulation;
    private boolean flushPending;
    private boolean slotReleased;
    private int serverConnectionId;
    /** The session changed something the reset check cannot see (COM_SET_OPTION): never pool again. */
    private boolean tainted;

    // ---- transaction pooling (issue #8) ----
    /** The session trackers are on: the server reports state changes in OK packets. */
    private final boolean trackingState;
    /** What sessions have set on this connection since login (or the last reset), as the trackers reported it. */
    private final SessionVariables variables = new SessionVariables();
    /** The handshake variables' values at login, to return to them. */
    private final Map<String, String> loginValues = new HashMap<>(8);
    /** Prepared statements, by SQL text; {@code null} in SESSION pooling. */
    private final StatementCache statements;
    /** The session gave the connection back at the end of the response being relayed: pool it once written. */
    private boolean detachAfterRelay;

    private List<List<ByteBuf>> privateResponses;
    private List<ByteBuf> privateCurrent;
    private int privateExpected;
    private PrivateCallback privateCallback;
    private boolean responseDone;

    // ---- operations (issue #5): set at bind from the session; timing is null when metrics and slow log are off ----
    private LoopCounters counters;
    private SlowQueryLog slowLog;
    private CommandTiming timing;

    /**
     * @param loginTimeoutMillis how long connecting and logging in may take
     * @param pooled whether the connection holds one of the pool's {@code maxPoolSize} slots; a health check's does
     *     not
     */
    BackendConnection(EventLoopPool pool, SessionKey key, String schema, Promise<BackendConnection> ready,
            long loginTimeoutMillis, boolean pooled) {
        this.pool = pool;
        this.loginTimeoutMillis = loginTimeoutMillis;
        this.slotReleased = !pooled;
        this.key = key;
        this.schema = schema;
        this.ready = ready;
        this.tracker = new ResponseTracker(key.deprecateEof(), key.cacheMetadata(), this);
        boolean multiplexing = pooled && pool.parent().pooling().multiplexing();
        this.trackingState = multiplexing && Capabilities.has(key.capabilities(), Capabilities.CLIENT_SESSION_TRACK);
        this.statements = multiplexing ? new StatementCache(pool.parent().pooling().preparedStatementCacheSize())
                : null;
        this.authentication = new BackendAuthentication(pool.dataSource().username(), pool.dataSource().password(),
                key, schema, pool.dataSource().sslMode());
    }

    /** The data source this connection belongs to. */
    public String dataSourceName() {
        return pool.dataSource().name();
    }

    /** {@code host:port} of the server, for messages. */
    public String address() {
        return pool.address();
    }

    /** The server's id of this connection, as {@code CONNECTION_ID()} returns it. */
    public int serverConnectionId() {
        return serverConnectionId;
    }

    public SessionKey key() {
        return key;
    }

    /** The schema the server has selected, as last known; {@code null} for none. */
    public String schema() {
        return schema;
    }

    public Channel channel() {
        return channel;
    }

    /** The relay's view of the response stream. */
    public ResponseTracker tracker() {
        return tracker;
    }

    long createdNanos() {
        return createdNanos;
    }

    long idleSinceNanos() {
        return idleSinceNanos;
    }

    boolean isOpen() {
        return mode != Mode.CLOSED && channel != null && channel.isActive();
    }

    // ---- lending to a session -------------------------------------------------------------------------------

    /** Lends this idle connection to {@code target}: from now on responses go to its client channel. */
    public void bind(Session target) {
        if (mode != Mode.IDLE) {
            throw new IllegalStateException("bind: " + mode + " (expected: IDLE)");
        }
        this.session = target;
        this.mode = Mode.RELAY;
        if (trackingState) {
            tracker.followState(target.stateListener());
        }
        this.counters = target.loopCounters();
        this.slowLog = target.slowQueryLog();
        // Timing costs two clock reads per command: only when metrics or the slow-query log need it.
        if (timing == null && (counters != null || (slowLog != null && slowLog.enabled()))) {
            timing = new CommandTiming();
        }
        channel.config().setAutoRead(true);
    }

    /**
     * Forwards one client frame (taken: the channel releases it once written). Nothing is flushed: the caller
     * flushes once per read batch.
     *
     * @param expect the response kind to follow, one of {@code ResponseTracker.EXPECT_*}, or 0 when the frame has
     *     no response of its own (continuation frames, LOCAL INFILE data, COM_STMT_CLOSE)
     */
    public void forward(ByteBuf frame, int expect) {
        if (expect != 0) {
            tracker.expect(expect);
            if (timing != null) {
                timing.started(frame, slowLog);
            }
        }
        channel.write(frame, channel.voidPromise());
    }

    public void flush() {
        channel.flush();
    }

    /**
     * Marks a change the release check cannot verify, such as COM_SET_OPTION switching multi-statements: the
     * connection is closed instead of pooled when its session ends.
     */
    public void taint() {
        tainted = true;
    }

    public boolean isTainted() {
        return tainted;
    }

    /** Whether the connection is idle between commands, with no response outstanding. */
    public boolean isBetweenCommands() {
        return mode == Mode.RELAY && tracker.isIdle();
    }

    /** Starts reading again once the client has drained what was relayed. */
    public void resumeReading() {
        if (mode == Mode.RELAY) {
            channel.config().setAutoRead(true);
        }
    }

    /** Takes the connection back from its session: it becomes private until the pool has reset it. */
    void unbind() {
        session = null;
        counters = null;
        slowLog = null;
        if (timing != null) {
            timing.clear();
        }
        tracker.summarize(null); // a traffic capture follows the session, not the connection
        tracker.followState(null);
        if (mode == Mode.RELAY) {
            mode = Mode.IDLE;
        }
    }

    /** Marks the connection idle in the pool. */
    void markIdle() {
        mode = Mode.IDLE;
        idleSinceNanos = System.nanoTime();
        channel.config().setAutoRead(true); // an idle server never writes; reading notices when it closes
    }

    /** Closes the connection; it never returns to the pool. */
    public void close() {
        if (channel == null) {
            releaseSlot();
        } else if (mode == Mode.IDLE && channel.isActive()) {
            // Between commands the server expects one: say goodbye, so that it does not log an aborted connection.
            mode = Mode.CLOSED;
            channel.writeAndFlush(Packets.command(channel.alloc(), Command.COM_QUIT, null))
                    .addListener(ChannelFutureListener.CLOSE);
        } else {
            channel.close();
        }
    }

    // ---- transaction pooling (issue #8) ----------------------------------------------------------------------

    /** Whether the server reports session state changes on this connection (its key has CLIENT_SESSION_TRACK). */
    public boolean tracksState() {
        return trackingState;
    }

    /** What sessions have set here since login; updated by the session bound to it as trackers report changes. */
    public SessionVariables variables() {
        return variables;
    }

    /** This connection's prepared statements; {@code null} in SESSION pooling. */
    public StatementCache statements() {
        return statements;
    }

    /** The bound session changed schema (the schema tracker said so). */
    public void schemaChanged(String newSchema) {
        schema = newSchema;
    }

    /**
     * The bound session is done with this connection once the response now being relayed has reached its client:
     * the connection then goes back to the pool as it is, without a reset, its state known by {@link #variables()}.
     * Call while that response's last packet is being scanned ({@link Session#onResponseComplete()}).
     */
    public void detachWhenRelayed() {
        detachAfterRelay = true;
    }

    /**
     * Makes this connection's session variables those of {@code wanted}, with one {@code SET SESSION} statement, or
     * none when they match. Called on an idle connection about to be lent.
     *
     * @param done receives {@code null} on success, or the failure; the connection is closed after a failure
     */
    public void syncVariables(SessionVariables wanted, Consumer<BackendException> done) {
        String statement = SessionVariables.syncStatement(variables, wanted, loginValues);
        if (statement == null) {
            done.accept(null);
            return;
        }
        runPrivate(List.of(Packets.command(channel.alloc(), Command.COM_QUERY, statement)),
                new int[] {ResponseTracker.EXPECT_RESULT}, (responses, failure) -> {
                    try {
                        if (failure != null) {
                            done.accept(new BackendException("restoring session variables on " + address()
                                    + " failed", failure));
                            return;
                        }
                        ByteBuf answer = Packets.payload(responses.get(0).get(0));
                        if (Packets.isErr(answer)) {
                            BackendError error = Packets.parseErr(answer);
                            log.debug("backend {} refused {}: {}", address(), statement, error.message());
                            channel.close(); // its variables are now half set: unknown state
                            done.accept(new BackendException("restoring session variables refused", error));
                        } else {
                            variables.copyFrom(wanted);
                            mode = Mode.IDLE;
                            done.accept(null);
                        }
                    } finally {
                        releaseAll(responses);
                    }
                });
    }

    /**
     * Sends one command of Sluice's own while lent to a session (a prepare on the session's behalf), collects its
     * whole response, then relays again. The callback owns the response packets.
     */
    public void exchangeWhileBound(ByteBuf command, int kind, PrivateExchange callback) {
        if (mode != Mode.RELAY) {
            command.release();
            callback.onComplete(null, new BackendException("connection to " + address() + " is " + mode));
            return;
        }
        runPrivate(List.of(command), new int[] {kind}, (responses, failure) -> {
            if (mode == Mode.PRIVATE) {
                mode = Mode.RELAY;
            }
            callback.onComplete(responses == null ? null : responses.get(0), failure);
        });
    }

    /** A private exchange's outcome: the response's whole packets (owned by the callee), or a failure. */
    public interface PrivateExchange {
        void onComplete(List<ByteBuf> packets, Throwable failure);
    }

    /** Closes a server-side statement (COM_STMT_CLOSE has no response); written, flushed with what follows. */
    public void closeStatement(int serverId) {
        ByteBuf close = Packets.startFrame(channel.alloc(), 5);
        close.writeByte(Command.COM_STMT_CLOSE);
        close.writeIntLE(serverId);
        channel.write(Packets.finishFrame(close, 0), channel.voidPromise());
    }

    // ---- private exchanges ----------------------------------------------------------------------------------

    /** Sends commands Sluice itself needs answered (not relayed) and collects their whole responses. */
    void runPrivate(List<ByteBuf> commands, int[] kinds, PrivateCallback callback) {
        if (privateCallback != null) {
            // Two of Sluice's own exchanges at once on one connection would mix their answers and drop the first
            // one's packets. It must not happen; if it does, the connection is in an unknown state: close it, and
            // tell both callers.
            log.warn("{}: a second private exchange started before the first ended; closing the connection", this);
            commands.forEach(ByteBuf::release);
            fail(new BackendException("overlapping private exchanges on " + address()));
            callback.onComplete(null, new BackendException("overlapping private exchanges on " + address()));
            return;
        }
        mode = Mode.PRIVATE;
        channel.config().setAutoRead(true); // relay backpressure may have paused reading; the answers must be read
        privateResponses = new ArrayList<>(kinds.length);
        privateCurrent = new ArrayList<>();
        privateExpected = kinds.length;
        privateCallback = callback;
        for (int i = 0; i < kinds.length; i++) {
            tracker.expect(kinds[i]);
            channel.write(commands.get(i), channel.voidPromise());
        }
        channel.flush();
    }

    /** COM_RESET_CONNECTION plus the session check; on success the connection is clean and matches its key. */
    void reset(Runnable onClean, Runnable onDirty) {
        List<ByteBuf> commands = new ArrayList<>(3);
        commands.add(Packets.command(channel.alloc(), Command.COM_RESET_CONNECTION, null));
        if (trackingState) {
            commands.add(Packets.command(channel.alloc(), Command.COM_QUERY, SESSION_TRACKERS));
        }
        commands.add(Packets.command(channel.alloc(), Command.COM_QUERY, SESSION_CHECK_QUERY));
        int[] kinds = trackingState
                ? new int[] {ResponseTracker.EXPECT_SINGLE, ResponseTracker.EXPECT_RESULT, ResponseTracker.EXPECT_RESULT}
                : new int[] {ResponseTracker.EXPECT_SINGLE, ResponseTracker.EXPECT_RESULT};
        runPrivate(commands, kinds,
                (responses, failure) -> {
                    try {
                        if (failure == null && allOk(responses, responses.size() - 1)
                                && readSessionCheck(responses.get(responses.size() - 1), false)) {
                            variables.clear();
                            if (statements != null) {
                                statements.clear();
                            }
                            onClean.run();
                        } else {
                            onDirty.run();
                        }
                    } finally {
                        releaseAll(responses);
                    }
                });
    }

    /** Whether the first {@code count} responses are not ERR packets. */
    private static boolean allOk(List<List<ByteBuf>> responses, int count) {
        for (int i = 0; i < count; i++) {
            if (Packets.isErr(Packets.payload(responses.get(i).get(0)))) {
                return false;
            }
        }
        return true;
    }

    /** COM_INIT_DB; the callback receives {@code null} on success or the server's refusal. */
    void selectSchema(String newSchema, Consumer<BackendException> done) {
        runPrivate(List.of(Packets.command(channel.alloc(), Command.COM_INIT_DB, newSchema)),
                new int[] {ResponseTracker.EXPECT_SINGLE}, (responses, failure) -> {
                    try {
                        if (failure != null) {
                            done.accept(new BackendException("COM_INIT_DB failed on " + address(), failure));
                            return;
                        }
                        ByteBuf answer = Packets.payload(responses.get(0).get(0));
                        if (Packets.isErr(answer)) {
                            mode = Mode.IDLE;
                            done.accept(new BackendException("COM_INIT_DB refused", Packets.parseErr(answer)));
                        } else {
                            schema = newSchema;
                            mode = Mode.IDLE;
                            done.accept(null);
                        }
                    } finally {
                        releaseAll(responses);
                    }
                });
    }

    /**
     * Reads the session check row. At login it records the character sets; later it compares them.
     *
     * @return whether the connection still matches what it had at login
     */
    private boolean readSessionCheck(List<ByteBuf> response, boolean atLogin) {
        String[] row = singleRow(response, key.deprecateEof(), 7);
        if (row == null) {
            return false;
        }
        String charsets = row[1] + "/" + row[2] + "/" + row[3] + "/" + row[4];
        if (atLogin) {
            characterSets = charsets;
            for (int i = 0; i < SessionVariables.HANDSHAKE_VARIABLES.size(); i++) {
                loginValues.put(SessionVariables.HANDSHAKE_VARIABLES.get(i), row[i + 1]);
            }
        } else if (!charsets.equals(characterSets)) {
            log.debug("backend {} changed character sets {} -> {}: closing it", address(), characterSets, charsets);
            return false;
        }
        schema = row[0];
        return true;
    }

    /** The one row of a text result of {@code columns} columns, or {@code null} on ERR or no row. */
    public static String[] singleRow(List<ByteBuf> packets, boolean deprecateEof, int columns) {
        if (packets.isEmpty() || Packets.isErr(Packets.payload(packets.get(0)))) {
            return null;
        }
        int rowIndex = 1 + columns + (deprecateEof ? 0 : 1);
        if (packets.size() <= rowIndex) {
            return null;
        }
        ByteBuf row = Packets.payload(packets.get(rowIndex));
        int first = row.getUnsignedByte(row.readerIndex());
        if (first == Packets.EOF_HEADER || first == Packets.ERR_HEADER) {
            return null;
        }
        String[] values = new String[columns];
        for (int i = 0; i < columns; i++) {
            values[i] = Packets.readLenencString(row);
        }
        return values;
    }


    static void releaseAll(List<List<ByteBuf>> responses) {
        if (responses == null) {
            return;
        }
        for (List<ByteBuf> response : responses) {
            for (ByteBuf frame : response) {
                frame.release();
            }
        }
    }

    // ---- channel events -------------------------------------------------------------------------------------

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        pool.onOpened(this);
        long timeout = loginTimeoutMillis;
        loginTimeout = ctx.executor().schedule(() -> {
            if (mode == Mode.AUTHENTICATING) {
                fail(new BackendException("login to " + address() + " timed out after " + timeout + " ms"));
            }
        }, timeout, TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf buf = (ByteBuf) msg;
        switch (mode) {
            case RELAY:
                relay(buf);
                break;
            case AUTHENTICATING:
            case PRIVATE:
                readPackets(buf);
                break;
            default:
                buf.release();
                if (mode == Mode.IDLE) {
                    // An idle server has nothing to say: a timeout notice or garbage. Unknown state: close.
                    log.debug("backend {} sent data while idle in the pool: closing it", address());
                    channel.close();
                }
        }
    }

    /** The hot path: look at the bytes, hand the same buffer to the client, flush once per read batch. */
    private void relay(ByteBuf buf) {
        try {
            tracker.scan(buf);
        } catch (ProtocolException e) {
            buf.release();
            log.warn("backend {} broke the protocol: {}", address(), e.getMessage());
            channel.close();
            return;
        }
        Channel client = session.clientChannel();
        if (counters != null) {
            counters.bytesOut(buf.readableBytes());
        }
        client.write(buf, client.voidPromise());
        if (detachAfterRelay) {
            // Transaction pooling: the response that ended in this buffer was the transaction's last. The session
            // has already let go; flush its bytes now, then the connection is free for the next session.
            detachAfterRelay = false;
            flushPending = false;
            client.flush();
            pool.giveBack(this);
            return;
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

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (session instanceof WritabilityListener listener) {
            listener.onBackendWritabilityChanged(ctx.channel().isWritable());
        }
        ctx.fireChannelWritabilityChanged();
    }

    /** Told when the backend socket can take more client bytes, so the client is read again. */
    public interface WritabilityListener {
        void onBackendWritabilityChanged(boolean writable);
    }

    private void readPackets(ByteBuf buf) {
        cumulation = ByteToMessageDecoder.MERGE_CUMULATOR.cumulate(channel.alloc(),
                cumulation == null ? Unpooled.EMPTY_BUFFER : cumulation, buf);
        try {
            while (cumulation != null && cumulation.readableBytes() >= Packets.HEADER_SIZE) {
                int length = Packets.payloadLength(cumulation, cumulation.readerIndex());
                if (cumulation.readableBytes() < Packets.HEADER_SIZE + length) {
                    break;
                }
                ByteBuf frame = cumulation.readRetainedSlice(Packets.HEADER_SIZE + length);
                if (mode == Mode.AUTHENTICATING) {
                    onLoginPacket(frame);
                } else if (mode == Mode.PRIVATE) {
                    onPrivatePacket(frame);
                } else {
                    frame.release();
                    log.debug("backend {} sent an unexpected packet: closing it", address());
                    channel.close();
                    break;
                }
            }
        } catch (BackendException e) {
            fail(e);
        } catch (RuntimeException e) {
            fail(new BackendException("protocol error from " + address() + ": " + e.getMessage(), e));
        } finally {
            if (cumulation != null && !cumulation.isReadable()) {
                cumulation.release();
                cumulation = null;
            }
        }
    }

    private void onLoginPacket(ByteBuf frame) throws BackendException {
        BackendAuthentication.Step step;
        try {
            step = authentication.onPacket(frame, channel.alloc());
        } finally {
            frame.release();
        }
        ByteBuf reply = authentication.takeReply();
        if (reply != null) {
            channel.writeAndFlush(reply, channel.voidPromise());
        }
        if (step == BackendAuthentication.Step.START_TLS) {
            startTls();
            return;
        }
        if (step == BackendAuthentication.Step.DONE) {
            serverConnectionId = authentication.serverConnectionId();
            authentication = null;
            loginTimeout.cancel(false);
            List<ByteBuf> commands = new ArrayList<>(2);
            if (trackingState) {
                commands.add(Packets.command(channel.alloc(), Command.COM_QUERY, SESSION_TRACKERS));
            }
            commands.add(Packets.command(channel.alloc(), Command.COM_QUERY, SESSION_CHECK_QUERY));
            int[] kinds = trackingState ? new int[] {ResponseTracker.EXPECT_RESULT, ResponseTracker.EXPECT_RESULT}
                    : new int[] {ResponseTracker.EXPECT_RESULT};
            runPrivate(commands, kinds, (responses, failure) -> {
                        try {
                            if (failure == null && allOk(responses, responses.size() - 1)
                                    && readSessionCheck(responses.get(responses.size() - 1), true)) {
                                mode = Mode.IDLE;
                                idleSinceNanos = System.nanoTime();
                                ready.trySuccess(this);
                            } else {
                                fail(new BackendException("session check failed on " + address(), failure));
                            }
                        } finally {
                            releaseAll(responses);
                        }
                    });
        }
    }

    /**
     * Switches to TLS after the SSLRequest went out: the handler goes first in the pipeline (the SSLRequest has
     * already passed it in plain text) and starts the handshake; the login goes on over TLS once it is done.
     */
    private void startTls() {
        BackendPool parent = pool.parent();
        SslHandler tls = parent.tls().newHandler(channel.alloc(), parent.host(), parent.port());
        channel.pipeline().addFirst("tls", tls);
        tls.handshakeFuture().addListener(f -> {
            if (mode != Mode.AUTHENTICATING || authentication == null) {
                return;
            }
            if (f.isSuccess()) {
                channel.writeAndFlush(authentication.afterTls(channel.alloc()), channel.voidPromise());
            } else {
                fail(new BackendException("TLS handshake with " + address() + " (sslMode "
                        + pool.dataSource().sslMode() + ") failed: " + rootMessage(f.cause()), f.cause()));
            }
        });
    }

    private static String rootMessage(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getMessage() == null ? root.toString() : root.getMessage();
    }

    private void onPrivatePacket(ByteBuf frame) {
        if (privateCallback == null) {
            // The exchange already ended in failure earlier in this read batch (fail() closes the channel, but the
            // close lands after this batch): the rest of the batch belongs to nobody.
            frame.release();
            return;
        }
        privateCurrent.add(frame);
        responseDone = false;
        tracker.scan(frame);
        if (responseDone) {
            privateResponses.add(privateCurrent);
            privateCurrent = new ArrayList<>();
            if (privateResponses.size() == privateExpected) {
                PrivateCallback callback = privateCallback;
                List<List<ByteBuf>> responses = privateResponses;
                privateCallback = null;
                privateResponses = null;
                privateCurrent = null;
                callback.onComplete(responses, null);
            }
        }
    }

    @Override
    public void onResponseComplete() {
        responseDone = true;
        if (mode == Mode.RELAY && session != null) {
            if (timing != null) {
                timing.completed(tracker.lastResponseFailed(), counters, slowLog, this);
            }
            session.onResponseComplete();
        }
    }

    @Override
    public String describeForLog() {
        Session current = session;
        return (current == null ? "" : current.describeForLog() + " ") + "backend=" + dataSourceName() + " schema="
                + schema;
    }

    @Override
    public void onLocalInfileRequest() {
        if (session != null) {
            session.onLocalInfileRequest();
        }
    }

    private void fail(Throwable cause) {
        BackendException error = cause instanceof BackendException be ? be
                : new BackendException("backend " + address() + " failed", cause);
        ready.tryFailure(error);
        if (privateCallback != null) {
            PrivateCallback callback = privateCallback;
            privateCallback = null;
            releaseAll(privateResponses);
            if (privateCurrent != null) {
                privateCurrent.forEach(ByteBuf::release);
            }
            privateResponses = null;
            privateCurrent = null;
            try {
                callback.onComplete(null, error);
            } finally {
                if (channel != null) {
                    channel.close();
                }
            }
        } else if (channel != null) {
            channel.close();
        }
    }

    /** Called when the TCP connect itself failed: the channel never became active. */
    void connectFailed(Throwable cause) {
        releaseSlot();
        ready.tryFailure(new BackendException("cannot connect to " + dataSourceName() + " (" + address() + "): "
                + cause.getMessage(), cause));
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        Mode was = mode;
        log.debug("{} closed", this);
        mode = Mode.CLOSED;
        if (loginTimeout != null) {
            loginTimeout.cancel(false);
        }
        if (cumulation != null) {
            cumulation.release();
            cumulation = null;
        }
        try {
            releaseSlot();
            pool.onClosed(this);
        } finally {
            // Runs even when the pool's bookkeeping throws (a loop already stopping): an unfinished exchange's
            // packets are released here and its caller is told, or they leak.
            if (was == Mode.AUTHENTICATING || was == Mode.PRIVATE) {
                fail(new BackendException("connection to " + address() + " closed"));
            } else if (was == Mode.RELAY && session != null) {
                Session lost = session;
                session = null;
                lost.onBackendLost(this, tracker.isResponseStarted());
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
            pool.slotReleasedHere();
            try {
                pool.parent().slotFreed();
            } catch (RejectedExecutionException e) {
                // Sluice is stopping and another loop has already ended: nobody waits for the slot any more. Not
                // catching this would end channelInactive early and leak the buffers of an unfinished exchange.
            }
        }
    }

    @Override
    public String toString() {
        return "BackendConnection[" + dataSourceName() + " " + address() + " #" + serverConnectionId + " " + mode + "]";
    }
}
