package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.BackendPool;
import io.sluice.backend.EventLoopPool;
import io.sluice.backend.PoolExhaustedException;
import io.sluice.backend.SessionKey;
import io.sluice.balancer.Backend;
import io.sluice.balancer.BackendGroup;
import io.sluice.capture.CaptureRun;
import io.sluice.capture.SessionCapture;
import io.sluice.metrics.LoopCounters;
import io.sluice.multiplexing.PreparedStatement;
import io.sluice.multiplexing.QuerySniffer;
import io.sluice.multiplexing.SessionTrackers;
import io.sluice.multiplexing.SessionVariables;
import io.sluice.multiplexing.StatementCache;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.ComChangeUser;
import io.sluice.protocol.Command;
import io.sluice.protocol.ErrorCode;
import io.sluice.protocol.HandshakeResponse41;
import io.sluice.protocol.HandshakeV10;
import io.sluice.protocol.PacketTooLargeException;
import io.sluice.protocol.Packets.BackendError;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ProtocolException;
import io.sluice.protocol.Scramble;
import io.sluice.protocol.ServerStatus;
import io.sluice.relay.ResponseTracker;
import io.sluice.slowlog.SlowQueryLog;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection: the greeting and login against Sluice's own users, then the command phase, in which every
 * frame goes to the session's backend connection and every response comes back through
 * {@link BackendConnection}'s relay.
 *
 * <p>Ownership: frames arrive as retained slices from {@link io.sluice.codec.PacketFrameDecoder}; each is either
 * forwarded (the backend channel releases it once written), queued until a backend connection is ready, or released
 * here.
 */
public final class FrontendSession extends ChannelInboundHandlerAdapter
        implements BackendConnection.Session, BackendConnection.WritabilityListener, ResponseTracker.StateListener,
        SessionTrackers.Visitor {

    private static final Logger log = LoggerFactory.getLogger(FrontendSession.class);

    private enum Phase {
        /** The greeting went out; the HandshakeResponse41 is due. */
        GREETING_SENT,
        /** The client's address is backing off after failed logins: its login waits for its time slot. */
        THROTTLED,
        /** The login's authentication exchange goes on (auth switch, full authentication, RSA key). */
        AUTHENTICATING,
        /** Logged in, waiting for a backend connection with the requested schema before saying OK. */
        AWAIT_BACKEND,
        /** Commands flow. */
        COMMAND,
        /** A COM_CHANGE_USER's authentication exchange goes on. */
        CHANGING_USER,
        CLOSED
    }

    /** Reasons to stop reading the client; reading resumes when none is left. */
    private static final int SUSPEND_ACQUIRING = 1;
    private static final int SUSPEND_BACKEND_FULL = 2;

    private final FrontendContext context;
    private final ClientSecurity security;
    private Channel channel;
    private Phase phase = Phase.GREETING_SENT;
    private int connectionId;
    private byte[] nonce;

    private HandshakeResponse41 handshake;
    private String user;
    private String authPlugin;
    /** The authentication exchange under way, at login or for COM_CHANGE_USER. */
    private ClientLogin login;
    private ComChangeUser changeUserRequest;
    /** The account whose session count this session holds, once logged in. */
    private ProxyUsers.Account account;
    private ScheduledFuture<?> handshakeTimer;
    private SessionKey key;
    /** The schema the client asked for; {@link #schema} is what it resolves to on the assigned backend. */
    private String requestedSchema;
    private String schema;
    /** The backend the balancer assigned this session to, and its name and pool on this event loop. */
    private Backend assigned;
    private String dataSource;
    private EventLoopPool pool;
    private BackendConnection backend;
    /** Whether a backend connection was ever bound: from then on the session has server state and cannot move. */
    private boolean everBound;
    /** Backends this session could not connect to, left out when it fails over; null until it first fails. */
    private List<String> failedBackends;
    private long failoverDeadlineNanos;
    /** Pooled connections found broken while restoring this session's variables, in the acquire under way. */
    private int brokenOnSync;

    private boolean acquiring;
    private ArrayDeque<Queued> queued;
    private boolean continuation;
    private boolean infileUpload;
    private boolean forwardedSinceFlush;
    private int lastSequenceId;
    private String lostBackend;
    private int suspendReasons;
    /** This session's traffic capture, while one runs and has seen the session; see {@link #capture}. */
    private SessionCapture captured;

    // ---- operations (issue #5) ----
    /** This loop's command and byte counters; {@code null} with metrics off. */
    private LoopCounters counters;
    /** Graceful shutdown asked for this session to close at its first idle moment outside a transaction. */
    private boolean closeWhenIdle;
    private final long connectedAtMillis = System.currentTimeMillis();

    // ---- transaction pooling (issue #8); see docs/design/2026-11-22-transaction-pooling.md ----
    /** The server's "Unknown database": a schema a login had found is gone. */
    private static final int SERVER_ER_BAD_DB_ERROR = 1049;
    /**
     * Transaction pooling: how many pooled connections one acquire may find broken when it restores the session's
     * variables, before the client gets the error. Each one is closed, so this bounds the new connections a server that
     * breaks every connection at once can cost per command.
     */
    private static final int MAX_BROKEN_ON_SYNC = 3;
    /** MariaDB's "Connection was killed", sent to a connection killed while it waited for a command. */
    private static final int SERVER_ER_CONNECTION_KILLED = 1927;
    /**
     * The session gives its backend connection back between transactions: {@code pooling: TRANSACTION}, and the
     * client negotiated CLIENT_SESSION_TRACK, without which its state could not be followed.
     */
    private boolean multiplexing;
    /** The session variables this session has set, to be re-applied on each connection it takes. */
    private final SessionVariables variables = new SessionVariables();
    /** Reasons, as bits of {@link PinReason} ordinals, why the session keeps its connection between transactions. */
    private int pins;
    private int namedLocks;
    private Set<Integer> cursors;
    /** The flags {@link QuerySniffer} found in the COM_QUERY last forwarded. */
    private int sniffed;
    /** The last-insert-id of the session's last statement that generated one: answers SELECT LAST_INSERT_ID(). */
    private long lastInsertId;
    /** The session's prepared statements, by the ids Sluice gave them; {@code null} until the first prepare. */
    private IntObjectHashMap<PreparedStatement> statements;
    private int nextStatementId;
    private PreparedStatement lastPrepared;
    /** A character set changed without its collation being reported: read it once the response is relayed. */
    private boolean readCollation;
    /** Sluice runs an exchange of its own on the session's connection (a prepare): frames wait in the queue. */
    private boolean stalled;
    /** The connection frames were forwarded to since the last flush. */
    private BackendConnection flushTarget;

    /** A frame held while the backend connection is being prepared. */
    private record Queued(ByteBuf frame, int expect, boolean command) {
    }

    FrontendSession(FrontendContext context, ClientSecurity security) {
        this.context = context;
        this.security = security;
    }

    @Override
    public Channel clientChannel() {
        return channel;
    }

    // ---- connection phase -----------------------------------------------------------------------------------

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        if (context.isClosing()) { // graceful shutdown: a clear refusal rather than a connection that will be cut
            phase = Phase.CLOSED;
            context.refusedClosing();
            ctx.writeAndFlush(Packets.err(ctx.alloc(), 0, ErrorCode.ER_SERVER_SHUTDOWN,
                    "Server shutdown in progress: Sluice is draining, connect to another instance"))
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        if (!context.admitClient()) {
            phase = Phase.CLOSED;
            ctx.writeAndFlush(Packets.err(ctx.alloc(), 0, ErrorCode.ER_CON_COUNT_ERROR, "Too many connections"))
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        connectionId = context.nextConnectionId();
        counters = context.loopCounters(ctx.channel().eventLoop());
        context.sessionOpened(this);
        nonce = Scramble.nonce();
        // CLIENT_SSL is offered in the greeting only: no backend connection carries the client's TLS.
        int capabilities = security.tls() != null
                ? context.capabilities() | Capabilities.CLIENT_SSL : context.capabilities();
        HandshakeV10 greeting = new HandshakeV10(context.serverVersion(), connectionId, nonce, capabilities,
                context.serverInfo().collationId(), ServerStatus.SERVER_STATUS_AUTOCOMMIT,
                Scramble.MYSQL_NATIVE_PASSWORD, context.mariaDbCapabilities());
        ctx.writeAndFlush(greeting.write(ctx.alloc()), ctx.voidPromise());
        scheduleHandshakeTimeout();
        log.debug("client {} connected as #{}", channel.remoteAddress(), connectionId);
    }

    /**
     * One task per connection, cancelled at login: a client that connects and stays silent (or stalls its TLS
     * handshake, or its authentication exchange) holds a connection slot no longer than the handshake timeout.
     */
    private void scheduleHandshakeTimeout() {
        long timeout = security.handshakeTimeoutMillis();
        if (timeout > 0) {
            handshakeTimer = channel.eventLoop().schedule(this::onHandshakeTimeout, timeout, TimeUnit.MILLISECONDS);
        }
    }

    private void onHandshakeTimeout() {
        if (phase == Phase.GREETING_SENT || phase == Phase.AUTHENTICATING) {
            log.debug("client {} #{}: not logged in after {} ms: closing", channel.remoteAddress(), connectionId,
                    security.handshakeTimeoutMillis());
            phase = Phase.CLOSED;
            channel.close();
        }
    }

    private void cancelHandshakeTimer() {
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
            handshakeTimer = null;
        }
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        if (counters != null) {
            counters.bytesIn(frame.readableBytes());
        }
        switch (phase) {
            case COMMAND:
                onCommandFrame(frame);
                break;
            case GREETING_SENT:
                try {
                    onHandshakeResponse(frame);
                } finally {
                    frame.release();
                }
                break;
            case AUTHENTICATING:
            case CHANGING_USER:
                try {
                    onLoginPacket(frame);
                } finally {
                    frame.release();
                }
                break;
            case AWAIT_BACKEND:
                queue(frame, expectedResponse(frame), true); // a pipelining client: hold until OK is sent
                break;
            default:
                frame.release();
        }
    }

    private void onHandshakeResponse(ByteBuf frame) {
        int sequenceId = Packets.sequenceId(frame, frame.readerIndex());
        try {
            handshake = HandshakeResponse41.parse(Packets.payload(frame));
        } catch (ProtocolException e) {
            log.debug("client {}: bad handshake response: {}", channel.remoteAddress(), e.getMessage());
            failAndClose(sequenceId + 1, ErrorCode.ER_HANDSHAKE_ERROR, "Bad handshake: " + e.getMessage());
            return;
        }
        user = handshake.user();
        if (security.requireSecureTransport() && !isSecure()) {
            failAndClose(sequenceId + 1, ErrorCode.ER_SECURE_TRANSPORT_REQUIRED,
                    "Connections using insecure transport are prohibited while --require_secure_transport=ON.");
            return;
        }
        long delay = security.throttle().reserve(clientAddress());
        if (delay > 0) {
            // Checked later, not refused: the client cannot tell a slow check from a throttled one, and waits.
            log.debug("client {}: login delayed {} ms after failed logins from its address", channel.remoteAddress(),
                    delay);
            phase = Phase.THROTTLED;
            cancelHandshakeTimer(); // Sluice's own delay must not count against the client
            channel.eventLoop().schedule(() -> {
                if (phase == Phase.THROTTLED) {
                    scheduleHandshakeTimeout(); // the rest of the exchange is the client's to keep short again
                    startLogin(sequenceId);
                }
            }, delay, TimeUnit.MILLISECONDS);
            return;
        }
        startLogin(sequenceId);
    }

    private void startLogin(int sequenceId) {
        login = new ClientLogin(context.users().find(user, clientAddress()), nonce, isSecure(), security.rsa(),
                Capabilities.has(handshake.capabilities(), Capabilities.CLIENT_PLUGIN_AUTH));
        phase = Phase.AUTHENTICATING;
        onLoginResult(login.start(handshake.authPluginName(), handshake.authResponse(), sequenceId, channel.alloc()));
    }

    /** A further packet of an authentication exchange, at login or for COM_CHANGE_USER. */
    private void onLoginPacket(ByteBuf frame) {
        int sequenceId = Packets.sequenceId(frame, frame.readerIndex());
        onLoginResult(login.onPacket(Packets.payload(frame), sequenceId, channel.alloc()));
    }

    private void onLoginResult(ClientLogin.Result result) {
        ByteBuf reply = login.takeReply();
        String name = phase == Phase.CHANGING_USER ? changeUserRequest.user() : user;
        switch (result) {
            case CONTINUE:
                channel.writeAndFlush(reply, channel.voidPromise());
                return;
            case FAILURE:
                if (reply != null) {
                    reply.release();
                }
                security.throttle().failed(clientAddress());
                log.debug("client {}: access denied for '{}'", channel.remoteAddress(), name);
                failAndClose(login.resultSequenceId(), login.failure(), login.failure()
                        == ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE
                        ? "Client does not support authentication protocol requested by server"
                        : accessDenied(name, login.usedPassword()));
                return;
            default:
                if (reply != null) {
                    channel.write(reply, channel.voidPromise()); // fast_auth_success: the OK follows
                }
                security.throttle().succeeded(clientAddress());
                if (phase == Phase.CHANGING_USER) {
                    changedUser();
                } else {
                    loggedIn();
                }
        }
    }

    /** The password checked out: count the session for its account, then go on as the account's session. */
    private void loggedIn() {
        cancelHandshakeTimer();
        if (!admitSession(login.account())) {
            return;
        }
        authPlugin = login.plugin();
        int okSequenceId = login.resultSequenceId();
        login = null;
        authenticate(okSequenceId);
    }

    /** Counts a session for {@code next}, giving up the current account's; false after ERR 1226 went out. */
    private boolean admitSession(ProxyUsers.Account next) {
        if (next == account) {
            return true;
        }
        if (!next.admitSession()) {
            failAndClose(login.resultSequenceId(), ErrorCode.ER_USER_LIMIT_REACHED, "User '" + next.user()
                    + "' has exceeded the 'max_user_connections' resource (current value: " + next.maxConnections()
                    + ")");
            return false;
        }
        if (account != null) {
            account.sessionClosed();
        }
        account = next;
        return true;
    }

    /** The client is who it says: pick its backend, and answer OK (at {@code okSequenceId}) once it can work. */
    private void authenticate(int okSequenceId) {
        if (context.isClosing()) {
            failAndClose(okSequenceId, ErrorCode.ER_SERVER_SHUTDOWN,
                    "Server shutdown in progress: Sluice is draining, connect to another instance");
            return;
        }
        key = new SessionKey(handshake.capabilities() & context.capabilities(), handshake.collationId(),
                handshake.mariaDbCapabilities() & context.mariaDbCapabilities());
        if (context.pooling().multiplexing()) {
            multiplexing = Capabilities.has(key.capabilities(), Capabilities.CLIENT_SESSION_TRACK);
            if (!multiplexing) {
                pin(PinReason.NO_SESSION_TRACK);
            }
        }
        Backend picked = context.group().pick();
        if (picked == null) {
            failAndClose(okSequenceId, ErrorCode.CR_CONN_HOST_ERROR,
                    "No backend is available: " + context.group().describeUnavailable());
            return;
        }
        assign(picked);
        requestedSchema = handshake.database();
        schema = context.resolveSchema(requestedSchema, dataSource);
        if (schema == null) {
            enterCommandPhase(okSequenceId);
            return;
        }
        BackendPool backendPool = context.pool(dataSource);
        if (multiplexing && backendPool.knowsSchema(schema)) {
            // An earlier login found this schema: the first statement takes a connection and selects it. A schema
            // dropped in between is then reported (1049) on that statement instead of at login.
            enterCommandPhase(okSequenceId);
            return;
        }
        // The schema is checked by the server: take the backend connection now so that 1049 comes at login.
        phase = Phase.AWAIT_BACKEND;
        int sequenceId = okSequenceId;
        acquireBackend(sequenceId, () -> {
            if (multiplexing) {
                backendPool.schemaSeen(schema);
            }
            enterCommandPhase(sequenceId);
        }, true);
    }

    /** Makes {@code chosen} this session's backend; the balancer has already counted the session on it. */
    private void assign(Backend chosen) {
        assigned = chosen;
        dataSource = chosen.name();
        pool = context.pool(dataSource).forLoop(channel.eventLoop());
    }

    /**
     * Moves a session that holds no server state yet to another backend. The balancer picks again, leaving out
     * {@code excluding}; the schema alias is resolved again for the new backend.
     *
     * @return false, and no change, when no other backend takes sessions
     */
    private boolean reassign(List<String> excluding) {
        BackendGroup group = context.group();
        Backend next = excluding == null ? group.pick() : group.pick(excluding);
        if (next == null) {
            return false;
        }
        group.sessionEnded(assigned);
        log.debug("client {}: moving from backend {} to {}", channel.remoteAddress(), dataSource, next.name());
        assign(next);
        schema = context.resolveSchema(requestedSchema, dataSource);
        return true;
    }

    private void enterCommandPhase(int okSequenceId) {
        phase = Phase.COMMAND;
        CaptureRun capture = context.capture().run();
        if (capture != null && (queued == null || queued.isEmpty())) { // pipelined commands: join at the next idle one
            captured = beginCapture(capture, false);
        }
        channel.writeAndFlush(Packets.ok(channel.alloc(), okSequenceId, ServerStatus.SERVER_STATUS_AUTOCOMMIT),
                channel.voidPromise());
        log.debug("client {} logged in as '{}' (schema {})", channel.remoteAddress(), user, schema);
    }

    // ---- command phase --------------------------------------------------------------------------------------

    private void onCommandFrame(ByteBuf frame) {
        int length = Packets.payloadLength(frame, frame.readerIndex());
        lastSequenceId = Packets.sequenceId(frame, frame.readerIndex());
        if (continuation || infileUpload) {
            // The rest of a 16 MiB+ command, or LOCAL INFILE data: bytes to pass on, not commands.
            continuation = length == Packets.MAX_PAYLOAD;
            if (infileUpload && length == 0) {
                infileUpload = false; // the empty packet ends the upload
            }
            forward(frame, 0, false);
            return;
        }
        continuation = length == Packets.MAX_PAYLOAD;
        if (length == 0) {
            frame.release();
            replyError(ErrorCode.ER_UNKNOWN_COM_ERROR, "Unknown command: empty packet");
            return;
        }
        int command = frame.getUnsignedByte(frame.readerIndex() + Packets.HEADER_SIZE);
        if (counters != null) {
            counters.command(command);
        }
        if (lostBackend != null) {
            frame.release();
            failAndClose(lastSequenceId + 1, ErrorCode.CR_SERVER_LOST, lostBackend);
            return;
        }
        switch (command) {
            case Command.COM_QUIT:
                frame.release();
                channel.close();
                return;
            case Command.COM_CHANGE_USER:
                try {
                    changeUser(frame);
                } finally {
                    frame.release();
                }
                if (captured != null && phase == Phase.COMMAND) {
                    captured.onChangeUser(user, requestedSchema);
                }
                return;
            default:
                int expect = expectedResponse(command);
                if (expect < 0) {
                    frame.release();
                    replyError(ErrorCode.ER_UNKNOWN_COM_ERROR,
                            "Unknown command: " + Command.name(command) + " is not relayed by Sluice");
                    return;
                }
                CaptureRun capture = context.capture().run(); // the one volatile read capture costs when off
                if (capture != null || captured != null) {
                    capture(capture, command, frame, expect != 0);
                }
                if (multiplexing) {
                    frame = beforeForward(command, frame);
                    if (frame == null) {
                        return; // answered by Sluice itself
                    }
                }
                forward(frame, expect, true);
                if (command == Command.COM_SET_OPTION) {
                    if (backend != null) {
                        backend.taint(); // the server-side multi-statement option outlives COM_RESET_CONNECTION
                    }
                    if (multiplexing) {
                        pin(PinReason.SET_OPTION);
                    }
                }
        }
    }

    /** Which response a command gets, 0 for none, -1 for a command Sluice does not relay. */
    private static int expectedResponse(int command) {
        switch (command) {
            case Command.COM_QUERY:
            case Command.COM_PROCESS_INFO:
                return ResponseTracker.EXPECT_RESULT;
            case Command.COM_STMT_EXECUTE:
                return ResponseTracker.EXPECT_BINARY_RESULT;
            case Command.COM_STMT_FETCH:
                return ResponseTracker.EXPECT_ROWS;
            case Command.COM_STMT_PREPARE:
                return ResponseTracker.EXPECT_PREPARE;
            case Command.COM_FIELD_LIST:
                return ResponseTracker.EXPECT_FIELD_LIST;
            case Command.COM_STMT_CLOSE:
            case Command.COM_STMT_SEND_LONG_DATA:
                return 0;
            case Command.COM_INIT_DB:
            case Command.COM_PING:
            case Command.COM_STATISTICS:
            case Command.COM_SET_OPTION:
            case Command.COM_RESET_CONNECTION:
            case Command.COM_STMT_RESET:
            case Command.COM_PROCESS_KILL:
            case Command.COM_DEBUG:
            case Command.COM_REFRESH:
            case Command.COM_CREATE_DB:
            case Command.COM_DROP_DB:
                return ResponseTracker.EXPECT_SINGLE;
            default:
                return -1;
        }
    }

    private int expectedResponse(ByteBuf frame) {
        int length = Packets.payloadLength(frame, frame.readerIndex());
        return length == 0 ? -1 : expectedResponse(frame.getUnsignedByte(frame.readerIndex() + Packets.HEADER_SIZE));
    }

    // ---- traffic capture ------------------------------------------------------------------------------------

    /**
     * Records a command for the running capture ({@code run}, may be null), and begins or ends this session's capture
     * when a capture has started or stopped since its last command. A session with a command still unanswered (or
     * queued) when a capture starts joins it at its next command that finds nothing outstanding, so every recorded
     * command gets its own response.
     */
    private void capture(CaptureRun run, int command, ByteBuf frame, boolean expectsResponse) {
        if (captured != null && captured.run() != run) {
            captured.end(backend == null ? null : backend.tracker());
            captured = null;
        }
        if (run != null && captured == null && (backend == null ? !acquiring : backend.tracker().isIdle())) {
            captured = beginCapture(run, true);
        }
        if (captured != null) {
            captured.onCommand(command, frame, expectsResponse);
        }
    }

    private SessionCapture beginCapture(CaptureRun run, boolean openBefore) {
        SessionCapture session = run.beginSession(connectionId, user, schema, key.capabilities(),
                key.collationId(), String.valueOf(channel.remoteAddress()), openBefore);
        if (backend != null) {
            session.attach(backend.tracker());
        }
        return session;
    }

    private void forward(ByteBuf frame, int expect, boolean command) {
        if (backend == null || stalled || (queued != null && !queued.isEmpty())) {
            queue(frame, expect, command);
            if (backend == null && !acquiring) {
                if ((!everBound || multiplexing) && !assigned.acceptsSessions()) {
                    // assigned at login (or, multiplexing, between transactions), and the backend left rotation
                    reassign(null);
                }
                acquireBackend(-1, null, false);
            }
            return;
        }
        if (!send(frame, expect, command)) {
            queue(frame, expect, command); // waits for Sluice's own exchange (a prepare) to finish
            return;
        }
        if (backend != null && !backend.channel().isWritable()) {
            suspendReading(SUSPEND_BACKEND_FULL);
        }
    }

    /**
     * Writes one frame to the bound connection (not flushed). In transaction pooling, prepared-statement commands get
     * the statement id of the connection in use.
     *
     * @return false when the frame must wait (not consumed): the statement is being prepared on this connection
     */
    private boolean send(ByteBuf frame, int expect, boolean command) {
        if (multiplexing && command) {
            int code = frame.getUnsignedByte(frame.readerIndex() + Packets.HEADER_SIZE);
            if (code >= Command.COM_STMT_PREPARE && code <= Command.COM_STMT_FETCH && code != Command.COM_STMT_CLOSE) {
                return sendStatementCommand(code, frame, expect);
            }
        }
        backend.forward(frame, expect);
        flushTarget = backend;
        forwardedSinceFlush = true;
        return true;
    }

    private void queue(ByteBuf frame, int expect, boolean command) {
        if (queued == null) {
            queued = new ArrayDeque<>(4);
        }
        queued.add(new Queued(frame, expect, command));
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        if (forwardedSinceFlush) {
            forwardedSinceFlush = false;
            BackendConnection target = flushTarget;
            flushTarget = null;
            target.flush(); // one flush per read batch, not per frame
        }
    }

    /**
     * Takes a backend connection for this session.
     *
     * @param replySequenceId where an error goes when no command is queued (login), else -1
     * @param onReady run once the connection is bound, or {@code null}
     * @param closeOnFailure whether a failure ends the session (at login) or only fails the queued command
     */
    private void acquireBackend(int replySequenceId, Runnable onReady, boolean closeOnFailure) {
        failedBackends = null;
        brokenOnSync = 0;
        failoverDeadlineNanos = System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(context.pool(dataSource).dataSource().connectionTimeoutMilliseconds());
        tryAcquire(replySequenceId, onReady, closeOnFailure);
    }

    private void tryAcquire(int replySequenceId, Runnable onReady, boolean closeOnFailure) {
        if (multiplexing) {
            BackendConnection idle = pool.pollIdle(key, schema, variables);
            if (idle != null) {
                bound(idle, onReady); // the usual case, once per transaction: nothing to wait for, nothing to sync
                return;
            }
        }
        acquiring = true;
        EventLoopPool from = pool;
        Future<BackendConnection> acquired = from.acquire(key, schema);
        if (!acquired.isDone()) {
            // Reading stops only while a connection is really awaited: an idle one (the usual case in transaction
            // pooling, once per transaction) is bound at once, without two epoll_ctl calls to stop and resume.
            suspendReading(SUSPEND_ACQUIRING);
        }
        acquired.addListener(f -> {
            acquiring = false;
            if (phase == Phase.CLOSED) {
                if (f.isSuccess()) {
                    from.release((BackendConnection) f.getNow());
                }
                return;
            }
            if (!f.isSuccess()) {
                if (failOver(f.cause())) {
                    tryAcquire(replySequenceId, onReady, closeOnFailure);
                } else {
                    onAcquireFailed(f.cause(), replySequenceId, closeOnFailure);
                }
                return;
            }
            BackendConnection connection = (BackendConnection) f.getNow();
            if (multiplexing) {
                acquiring = true;
                connection.syncVariables(variables, error -> {
                    acquiring = false;
                    if (phase == Phase.CLOSED) {
                        from.release(connection);
                    } else if (error != null && connectionGone(error) && ++brokenOnSync <= MAX_BROKEN_ON_SYNC) {
                        // The server ended the connection while it was idle in the pool (killed, timed out, shutting
                        // down) and its close was not yet seen. Nothing of the client's reached it, and it is closed
                        // now: take another one.
                        log.debug("client {}: {}; taking another connection", channel.remoteAddress(),
                                error.getMessage());
                        tryAcquire(replySequenceId, onReady, closeOnFailure);
                    } else if (error != null) {
                        onAcquireFailed(error, replySequenceId, closeOnFailure);
                    } else {
                        bound(connection, onReady);
                    }
                });
                return;
            }
            bound(connection, onReady);
        });
    }

    /** The connection is this session's: send what waited for it. */
    private void bound(BackendConnection connection, Runnable onReady) {
        backend = connection;
        everBound = true;
        backend.bind(this);
        if (captured != null) {
            captured.attach(backend.tracker());
        }
        if (onReady != null) {
            onReady.run();
        }
        pump();
        resumeReading(SUSPEND_ACQUIRING);
    }

    /**
     * Sends the frames that waited for the connection, in order, unless Sluice's own exchange stalls them again;
     * then, in transaction pooling, gives the connection back if nothing holds it (a login that only checked the
     * schema, a prepare in autocommit).
     */
    private void pump() {
        if (phase != Phase.COMMAND || backend == null) {
            return;
        }
        boolean wrote = false;
        while (queued != null && !queued.isEmpty() && !stalled && backend != null) {
            Queued next = queued.peek();
            if (next.expect() < 0) {
                queued.poll().frame().release();
                replyError(ErrorCode.ER_UNKNOWN_COM_ERROR, "Unknown command: not relayed by Sluice");
                continue;
            }
            if (!send(next.frame(), next.expect(), next.command())) {
                break;
            }
            queued.poll();
            wrote = true;
        }
        if (wrote && backend != null) {
            forwardedSinceFlush = false;
            flushTarget = null;
            backend.flush();
        }
        giveBackIfFree();
    }

    /**
     * After a failed connect: tells the balancer (passive health), and moves the session to another backend when one
     * takes sessions and the first backend's {@code connectionTimeoutMilliseconds} has not run out. A refusal by the
     * server itself (wrong schema, access denied) or a full pool is not a connect failure and is not retried.
     *
     * @return whether the session now has another backend to try
     */
    private boolean failOver(Throwable cause) {
        if (!(cause instanceof BackendException be) || be.serverError() != null) {
            return false;
        }
        context.group().reportConnectFailure(dataSource, cause.getMessage());
        if (System.nanoTime() - failoverDeadlineNanos >= 0) {
            return false;
        }
        if (failedBackends == null) {
            failedBackends = new ArrayList<>(2);
        }
        failedBackends.add(dataSource);
        String from = dataSource;
        if (!reassign(failedBackends)) {
            return false;
        }
        log.info("client {}: cannot connect to backend {} ({}); failing over to {}", channel.remoteAddress(), from,
                cause.getMessage(), dataSource);
        return true;
    }

    /**
     * Whether a failure on a pooled connection means the server had already ended it: it broke without an answer, or
     * its answer is one a server sends just before it closes a connection.
     */
    private static boolean connectionGone(BackendException error) {
        BackendError serverError = error.serverError();
        if (serverError == null) {
            return true;
        }
        int code = serverError.code();
        // A server shutting down, and MySQL 8.0.24+ closing a connection idle past its wait_timeout, send the same
        // errors Sluice sends in those cases.
        return code == SERVER_ER_CONNECTION_KILLED || code == ErrorCode.ER_SERVER_SHUTDOWN.code()
                || code == ErrorCode.ER_CLIENT_INTERACTION_TIMEOUT.code();
    }

    private void onAcquireFailed(Throwable cause, int replySequenceId, boolean closeOnFailure) {
        log.debug("client {}: no backend connection: {}", channel.remoteAddress(), cause.toString());
        int sequenceId = replySequenceId;
        if (queued != null && !queued.isEmpty()) {
            Queued first = queued.peek();
            sequenceId = Packets.sequenceId(first.frame(), first.frame().readerIndex()) + 1;
            while (!queued.isEmpty()) {
                queued.poll().frame().release();
            }
        }
        if (sequenceId < 0) {
            sequenceId = lastSequenceId + 1;
        }
        if (cause instanceof BackendException be && be.serverError() != null
                && be.serverError().code() == SERVER_ER_BAD_DB_ERROR) {
            context.pool(dataSource).schemaMissing(schema);
        }
        ByteBuf err = errorFor(cause, sequenceId);
        if (closeOnFailure) {
            phase = Phase.CLOSED;
            channel.writeAndFlush(err).addListener(ChannelFutureListener.CLOSE);
        } else {
            channel.writeAndFlush(err, channel.voidPromise());
            continuation = false;
            resumeReading(SUSPEND_ACQUIRING);
        }
    }

    private ByteBuf errorFor(Throwable cause, int sequenceId) {
        if (cause instanceof BackendException be && be.serverError() != null) {
            BackendError error = be.serverError();
            return Packets.err(channel.alloc(), sequenceId, error.code(), error.sqlState(), error.message());
        }
        if (cause instanceof PoolExhaustedException) {
            return Packets.err(channel.alloc(), sequenceId, ErrorCode.ER_CON_COUNT_ERROR,
                    "Too many connections: " + cause.getMessage());
        }
        BackendPool backendPool = context.pool(dataSource);
        List<String> tried = failedBackends == null ? new ArrayList<>() : new ArrayList<>(failedBackends);
        if (!tried.contains(dataSource)) {
            tried.add(dataSource);
        }
        String triedNote = tried.size() > 1 ? " (tried backends " + String.join(", ", tried) + ")" : "";
        return Packets.err(channel.alloc(), sequenceId, ErrorCode.CR_CONN_HOST_ERROR,
                "Can't connect to backend '" + dataSource + "' (" + backendPool.address() + "): " + cause.getMessage()
                        + triedNote);
    }

    private void changeUser(ByteBuf frame) {
        int replySequenceId = lastSequenceId + 1;
        ComChangeUser request;
        try {
            request = ComChangeUser.parse(Packets.payload(frame), handshake.capabilities());
        } catch (ProtocolException e) {
            failAndClose(replySequenceId, ErrorCode.ER_HANDSHAKE_ERROR, "Bad COM_CHANGE_USER: " + e.getMessage());
            return;
        }
        // The same exchange as a login, over the greeting's nonce: a switch, a full authentication may follow.
        String plugin = request.authPluginName() != null ? request.authPluginName() : authPlugin;
        changeUserRequest = request;
        login = new ClientLogin(context.users().find(request.user(), clientAddress()), nonce, isSecure(),
                security.rsa(), Capabilities.has(handshake.capabilities(), Capabilities.CLIENT_PLUGIN_AUTH));
        phase = Phase.CHANGING_USER;
        onLoginResult(login.start(plugin, request.authResponse(), lastSequenceId, channel.alloc()));
    }

    private void changedUser() {
        ComChangeUser request = changeUserRequest;
        changeUserRequest = null;
        if (!admitSession(login.account())) {
            return;
        }
        int replySequenceId = login.resultSequenceId();
        phase = Phase.COMMAND;
        user = request.user();
        authPlugin = login.plugin();
        login = null;
        requestedSchema = request.database();
        schema = context.resolveSchema(requestedSchema, dataSource);
        // The new user starts with a fresh session: the old backend connection goes back to be reset.
        forgetSessionState();
        if (backend != null) {
            BackendConnection old = backend;
            backend = null;
            pool.release(old);
        }
        if (schema == null) {
            channel.writeAndFlush(Packets.ok(channel.alloc(), replySequenceId, ServerStatus.SERVER_STATUS_AUTOCOMMIT),
                    channel.voidPromise());
            return;
        }
        acquireBackend(replySequenceId, () -> channel.writeAndFlush(Packets.ok(channel.alloc(), replySequenceId,
                ServerStatus.SERVER_STATUS_AUTOCOMMIT), channel.voidPromise()), false);
    }

    // ---- transaction pooling (issue #8) ----------------------------------------------------------------------

    /**
     * Looks at a command before it is forwarded, in transaction pooling: pins for state the trackers cannot move,
     * answers what Sluice can answer itself.
     *
     * @return the frame to forward (possibly another one), or {@code null} when the command was answered or dropped
     */
    private ByteBuf beforeForward(int command, ByteBuf frame) {
        int base = frame.readerIndex() + Packets.HEADER_SIZE;
        int replySequenceId = lastSequenceId + 1;
        switch (command) {
            case Command.COM_QUERY:
                return beforeQuery(frame, base);
            case Command.COM_PING:
                if (backend == null && !acquiring && (queued == null || queued.isEmpty())) {
                    frame.release(); // Sluice is up and the session holds nothing: no backend is needed to say so
                    channel.writeAndFlush(Packets.ok(channel.alloc(), replySequenceId, localStatus()),
                            channel.voidPromise());
                    return null;
                }
                return frame;
            case Command.COM_RESET_CONNECTION:
                if (acquiring || stalled || (queued != null && !queued.isEmpty())
                        || (backend != null && !backend.isBetweenCommands())) {
                    return frame; // pipelined behind other commands: let the server do it, on a connection kept
                }
                frame.release();
                forgetSessionState();
                if (backend != null) {
                    BackendConnection reset = backend;
                    backend = null;
                    pool.release(reset); // COM_RESET_CONNECTION there, before any other session gets it
                }
                channel.writeAndFlush(Packets.ok(channel.alloc(), replySequenceId, ServerStatus.SERVER_STATUS_AUTOCOMMIT),
                        channel.voidPromise());
                return null;
            case Command.COM_STMT_CLOSE:
                if (frame.readableBytes() >= Packets.HEADER_SIZE + 5 && statements != null) {
                    int id = frame.getIntLE(base + 1);
                    if (statements.remove(id) != null) {
                        endCursor(id);
                    }
                }
                frame.release(); // the server statement stays in its connection's cache, for other sessions too
                return null;
            case Command.COM_STMT_SEND_LONG_DATA:
                pin(PinReason.LONG_DATA);
                return frame;
            case Command.COM_STMT_RESET:
                if (frame.readableBytes() >= Packets.HEADER_SIZE + 5) {
                    endCursor(frame.getIntLE(base + 1));
                }
                unpin(PinReason.LONG_DATA);
                return frame;
            case Command.COM_STMT_EXECUTE:
                unpin(PinReason.LONG_DATA); // the data sent ahead is this execute's: it runs on the pinned connection
                if (frame.readableBytes() >= Packets.HEADER_SIZE + 6) {
                    PreparedStatement statement = statement(frame.getIntLE(base + 1));
                    if (frame.getByte(base + 5) != 0 && statement != null) { // CURSOR_TYPE_*: rows come by fetch
                        if (cursors == null) {
                            cursors = new HashSet<>(4);
                        }
                        cursors.add(statement.clientId());
                        pin(PinReason.CURSOR);
                    }
                }
                return frame;
            default:
                return frame;
        }
    }

    /** The status flags of an OK Sluice sends itself: autocommit as the session last set it. */
    private int localStatus() {
        return "OFF".equalsIgnoreCase(variables.asMap().get("autocommit")) ? 0 : ServerStatus.SERVER_STATUS_AUTOCOMMIT;
    }

    /** Sniffs a COM_QUERY for pinning state; answers SELECT LAST_INSERT_ID() from the session's last OK packet. */
    private ByteBuf beforeQuery(ByteBuf frame, int base) {
        int end = frame.writerIndex();
        int flags = QuerySniffer.sniff(frame, base + 1, end);
        sniffed = flags;
        // Pins that last until the next statement: that statement runs on the same connection, then they end.
        if ((flags & QuerySniffer.CALC_FOUND_ROWS) == 0) {
            unpin(PinReason.FOUND_ROWS);
        }
        if ((flags & QuerySniffer.SET_TRANSACTION) == 0) {
            unpin(PinReason.SET_TRANSACTION);
        }
        if (flags == 0) {
            return frame;
        }
        pinFor(flags);
        if ((flags & QuerySniffer.TRACKED_VARIABLES) != 0) {
            String sql = frame.toString(base + 1, end - base - 1, StandardCharsets.UTF_8);
            String rewritten = QuerySniffer.trackAllVariables(sql);
            return rewritten == null ? frame : replaceQuery(frame, rewritten);
        }
        if ((flags & QuerySniffer.SELECT_CALLS_LAST_INSERT_ID) != 0) {
            // The server's LAST_INSERT_ID() belongs to whichever connection the session now has: the session's own
            // goes into the statement instead.
            String sql = frame.toString(base + 1, end - base - 1, StandardCharsets.UTF_8);
            return replaceQuery(frame, QuerySniffer.withLastInsertId(sql, lastInsertId));
        }
        return frame;
    }

    /** A COM_QUERY frame with {@code sql} in place of the client's text, same sequence id; {@code frame} is released. */
    private ByteBuf replaceQuery(ByteBuf frame, String sql) {
        int sequenceId = Packets.sequenceId(frame, frame.readerIndex());
        frame.release();
        ByteBuf replaced = Packets.command(channel.alloc(), Command.COM_QUERY, sql);
        replaced.setByte(replaced.readerIndex() + 3, sequenceId);
        return replaced;
    }

    /** Pins (or unpins) the session for what {@link QuerySniffer} found in a statement. */
    private void pinFor(int flags) {
        if ((flags & QuerySniffer.USER_VARIABLE) != 0) {
            pin(PinReason.USER_VARIABLE);
        }
        if ((flags & QuerySniffer.TEMPORARY) != 0) {
            pin(PinReason.TEMPORARY_TABLE);
        }
        if ((flags & QuerySniffer.LOCK_TABLES) != 0) {
            pin(PinReason.TABLE_LOCK);
        }
        if ((flags & QuerySniffer.UNLOCK_TABLES) != 0) {
            unpin(PinReason.TABLE_LOCK);
        }
        if ((flags & QuerySniffer.GET_LOCK) != 0) {
            namedLocks++;
            pin(PinReason.NAMED_LOCK);
        }
        if ((flags & QuerySniffer.RELEASE_ALL_LOCKS) != 0) {
            namedLocks = 0;
        } else if ((flags & QuerySniffer.RELEASE_LOCK) != 0 && namedLocks > 0) {
            namedLocks--;
        }
        if (namedLocks == 0 && (flags & (QuerySniffer.RELEASE_LOCK | QuerySniffer.RELEASE_ALL_LOCKS)) != 0) {
            unpin(PinReason.NAMED_LOCK);
        }
        if ((flags & QuerySniffer.XA_START) != 0) {
            pin(PinReason.XA);
        }
        if ((flags & QuerySniffer.XA_END) != 0) {
            unpin(PinReason.XA);
        }
        if ((flags & QuerySniffer.CALC_FOUND_ROWS) != 0) {
            pin(PinReason.FOUND_ROWS);
        }
        if ((flags & QuerySniffer.SQL_PREPARE) != 0) {
            pin(PinReason.SQL_PREPARE);
        }
        if ((flags & QuerySniffer.SET_TRANSACTION) != 0) {
            pin(PinReason.SET_TRANSACTION);
        }
    }

    private void pin(PinReason reason) {
        int bit = 1 << reason.ordinal();
        if ((pins & bit) == 0) {
            pins |= bit;
            context.pinned(reason);
            log.debug("client {} #{}: pinned to its backend connection: {}", channel.remoteAddress(), connectionId,
                    reason.label());
        }
    }

    private void unpin(PinReason reason) {
        pins &= ~(1 << reason.ordinal());
    }

    /** The first reason the session is pinned for, or {@code null}. */
    PinReason pinnedBy() {
        return pins == 0 ? null : PinReason.values()[Integer.numberOfTrailingZeros(pins)];
    }

    private void endCursor(int clientId) {
        if (cursors != null && cursors.remove(clientId) && cursors.isEmpty()) {
            unpin(PinReason.CURSOR);
        }
    }

    /** COM_RESET_CONNECTION or COM_CHANGE_USER: the session starts afresh. */
    private void forgetSessionState() {
        variables.clear();
        pins &= 1 << PinReason.NO_SESSION_TRACK.ordinal();
        namedLocks = 0;
        cursors = null;
        lastInsertId = 0;
        statements = null;
        lastPrepared = null;
    }

    /**
     * Whether the session can give its connection back now: nothing outstanding or queued, no transaction open, and
     * nothing pins it.
     */
    private boolean canGiveBack() {
        return pins == 0 && backend != null && phase == Phase.COMMAND && !acquiring && !stalled && !continuation
                && !infileUpload && (queued == null || queued.isEmpty()) && backend.tracker().isIdle()
                && !backend.tracker().inTransaction() && !backend.isTainted();
    }

    /** Gives the connection back at once if it is free and nothing is on its way to the client. */
    private void giveBackIfFree() {
        if (multiplexing && canGiveBack() && backend.isBetweenCommands()) {
            BackendConnection done = backend;
            backend = null;
            pool.giveBack(done);
        }
    }

    private PreparedStatement statement(int clientId) {
        if (clientId == -1) {
            return lastPrepared; // MariaDB: "the statement just prepared", for a prepare and execute sent together
        }
        return statements == null ? null : statements.get(clientId);
    }

    /**
     * A prepared-statement command on the bound connection: prepares it there first if this connection has never
     * seen it, and writes the connection's statement id into the frame.
     *
     * @return false when the frame must wait for that prepare
     */
    private boolean sendStatementCommand(int command, ByteBuf frame, int expect) {
        int base = frame.readerIndex() + Packets.HEADER_SIZE;
        int replySequenceId = Packets.sequenceId(frame, frame.readerIndex()) + 1;
        if (command == Command.COM_STMT_PREPARE) {
            prepare(frame);
            return true;
        }
        if (frame.readableBytes() < Packets.HEADER_SIZE + 5) {
            frame.release();
            failAndClose(replySequenceId, ErrorCode.ER_UNKNOWN_COM_ERROR, "Malformed " + Command.name(command));
            return true;
        }
        int clientId = frame.getIntLE(base + 1);
        PreparedStatement statement = statement(clientId);
        if (statement == null) {
            frame.release();
            if (command != Command.COM_STMT_SEND_LONG_DATA) { // which has no response, not even an error
                channel.writeAndFlush(Packets.err(channel.alloc(), replySequenceId, ErrorCode.ER_UNKNOWN_STMT_HANDLER,
                        "Unknown prepared statement handler (" + Integer.toUnsignedString(clientId) + ") given to "
                                + Command.name(command)), channel.voidPromise());
            }
            return true;
        }
        StatementCache.Entry entry = backend.statements().get(statement.sql());
        if (entry == null) {
            if (command == Command.COM_STMT_RESET) {
                frame.release(); // never used on this connection: nothing to reset here
                channel.writeAndFlush(Packets.ok(channel.alloc(), replySequenceId, localStatus()),
                        channel.voidPromise());
                return true;
            }
            prepareAgain(statement);
            return false;
        }
        frame.setIntLE(base + 1, entry.serverId());
        if (command == Command.COM_STMT_EXECUTE && statement.parameters() > 0) {
            frame = withParameterTypes(frame, base, statement, entry);
        }
        backend.forward(frame, expect);
        flushTarget = backend;
        forwardedSinceFlush = true;
        return true;
    }

    /**
     * An execute may leave out the parameter types ("new params bound" 0), meaning "as last time". The server
     * statement on this connection may have last received other types, from another session, or none: then the
     * session's types are put back into the frame.
     */
    private ByteBuf withParameterTypes(ByteBuf frame, int base, PreparedStatement statement,
            StatementCache.Entry entry) {
        int count = statement.parameters();
        int flagAt = base + 10 + (count + 7) / 8;
        if (flagAt >= frame.writerIndex()) {
            return frame;
        }
        if (frame.getByte(flagAt) == 1) {
            int typesAt = flagAt + 1;
            byte[] known = statement.parameterTypes();
            if (known == null || !sameBytes(frame, typesAt, known)) {
                if (typesAt + 2 * count > frame.writerIndex()) {
                    return frame;
                }
                known = new byte[2 * count];
                frame.getBytes(typesAt, known);
                statement.parameterTypes(known);
            }
            entry.boundTypes(known);
            return frame;
        }
        byte[] types = statement.parameterTypes();
        if (types == null || types == entry.boundTypes() || Arrays.equals(types, entry.boundTypes())
                || Packets.payloadLength(frame, frame.readerIndex()) + types.length >= Packets.MAX_PAYLOAD) {
            return frame;
        }
        ByteBuf rebuilt = channel.alloc().ioBuffer(frame.readableBytes() + types.length);
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

    /**
     * The client's COM_STMT_PREPARE: Sluice sends it on the bound connection as its own exchange, records the
     * statement under an id of the session's, and relays the response with that id in place of the server's.
     */
    private void prepare(ByteBuf frame) {
        int base = frame.readerIndex() + Packets.HEADER_SIZE;
        String sql = frame.toString(base + 1, frame.writerIndex() - base - 1, StandardCharsets.ISO_8859_1);
        int statementFlags = QuerySniffer.sniff(frame, base + 1, frame.writerIndex());
        BackendConnection on = backend;
        stalled = true;
        on.exchangeWhileBound(frame, ResponseTracker.EXPECT_PREPARE, (packets, failure) -> {
            stalled = false;
            if (failure != null || phase == Phase.CLOSED) {
                releasePackets(packets);
                exchangeFailed(on, failure);
                return;
            }
            ByteBuf first = packets.get(0);
            int at = first.readerIndex() + Packets.HEADER_SIZE;
            if (first.getUnsignedByte(at) == Packets.OK_HEADER && first.readableBytes() >= Packets.HEADER_SIZE + 9) {
                int serverId = first.getIntLE(at + 1);
                int parameters = first.getUnsignedShortLE(at + 7);
                on.statements().put(sql, serverId, parameters, on::closeStatement);
                PreparedStatement statement = new PreparedStatement(++nextStatementId, sql, parameters);
                if (statements == null) {
                    statements = new IntObjectHashMap<>();
                }
                statements.put(statement.clientId(), statement);
                lastPrepared = statement;
                first.setIntLE(at + 1, statement.clientId());
                if (statementFlags != 0) {
                    pinFor(statementFlags); // a prepared SET @v = ? or GET_LOCK(?) pins like its text would
                }
            }
            for (ByteBuf packet : packets) {
                channel.write(packet, channel.voidPromise());
            }
            channel.flush();
            pump();
        });
    }

    /** Prepares, on the bound connection, a statement the session prepared on another one. */
    private void prepareAgain(PreparedStatement statement) {
        byte[] sql = statement.sql().getBytes(StandardCharsets.ISO_8859_1);
        ByteBuf command = Packets.startFrame(channel.alloc(), 1 + sql.length);
        command.writeByte(Command.COM_STMT_PREPARE);
        command.writeBytes(sql);
        Packets.finishFrame(command, 0);
        BackendConnection on = backend;
        stalled = true;
        on.exchangeWhileBound(command, ResponseTracker.EXPECT_PREPARE, (packets, failure) -> {
            stalled = false;
            if (failure != null || phase == Phase.CLOSED) {
                releasePackets(packets);
                exchangeFailed(on, failure);
                return;
            }
            try {
                ByteBuf first = packets.get(0);
                int at = first.readerIndex() + Packets.HEADER_SIZE;
                if (first.getUnsignedByte(at) == Packets.OK_HEADER
                        && first.readableBytes() >= Packets.HEADER_SIZE + 9) {
                    on.statements().put(statement.sql(), first.getIntLE(at + 1), first.getUnsignedShortLE(at + 7),
                            on::closeStatement);
                } else {
                    // It no longer prepares (a table was dropped since): the waiting command gets the server's error.
                    BackendError error = Packets.parseErr(Packets.payload(first));
                    Queued waiting = queued.poll();
                    int sequenceId = Packets.sequenceId(waiting.frame(), waiting.frame().readerIndex()) + 1;
                    waiting.frame().release();
                    if (waiting.expect() != 0) {
                        channel.writeAndFlush(Packets.err(channel.alloc(), sequenceId, error.code(), error.sqlState(),
                                error.message()), channel.voidPromise());
                    }
                }
            } finally {
                releasePackets(packets);
            }
            pump();
        });
    }

    private static void releasePackets(List<ByteBuf> packets) {
        if (packets != null) {
            packets.forEach(ByteBuf::release);
        }
    }

    /** Sluice's own exchange on the session's connection failed: the connection is gone. */
    private void exchangeFailed(BackendConnection on, Throwable failure) {
        if (phase == Phase.CLOSED) {
            return;
        }
        if (backend == on) {
            backend = null;
        }
        String message = "Lost connection to backend '" + on.dataSourceName() + "' (" + on.address() + ")";
        log.warn("client {}: {}: {}", channel.remoteAddress(), message, failure == null ? "" : failure.toString());
        failAndClose(lastSequenceId + 1, ErrorCode.CR_SERVER_LOST, message + " during query");
    }

    @Override
    public ResponseTracker.StateListener stateListener() {
        return multiplexing ? this : null;
    }

    @Override
    public void onOk(long affectedRows, long insertId) {
        // Only a statement that wrote rows generated the id: MariaDB also reports a connection's earlier value in
        // the OK packets of later statements, which would be another session's here.
        if (insertId != 0 && affectedRows != 0 && !stalled) {
            lastInsertId = insertId;
        }
    }

    @Override
    public void onSessionState(byte[] okPayload) {
        if (!stalled) { // Sluice's own exchanges change nothing the session set
            SessionTrackers.read(okPayload, this);
        }
    }

    @Override
    public void onUntrackedStateChange() {
        if (!stalled && (sniffed & (QuerySniffer.USER_VARIABLE | QuerySniffer.TEMPORARY | QuerySniffer.SQL_PREPARE
                | QuerySniffer.GET_LOCK | QuerySniffer.LOCK_TABLES)) == 0) {
            pin(PinReason.SESSION_STATE);
        }
    }

    @Override
    public void onSystemVariable(String name, String value) {
        if (name.regionMatches(true, 0, "session_track", 0, 13)) {
            if (!trackersStillOn(name.toLowerCase(java.util.Locale.ROOT), value)) {
                pin(PinReason.SESSION_TRACKERS); // the trackers Sluice relies on are off: follow no further
            }
            return; // Sluice's own setting, not replayed
        }
        if (name.equalsIgnoreCase("character_set_connection")) {
            readCollation = true; // MariaDB reports SET NAMES ... COLLATE without the collation
        } else if (name.equalsIgnoreCase("collation_connection")) {
            readCollation = false;
        }
        variables.put(name, value);
        if (backend != null) {
            backend.variables().put(name, value);
        }
    }

    /**
     * Reads back what the trackers and OK packets do not tell exactly, after a statement that changed it: the
     * collation (MariaDB reports {@code SET NAMES x COLLATE y} as the three character sets only, and setting them
     * again on another connection would bring back x's default collation), and the value LAST_INSERT_ID(expr) set.
     * One private query, only after such statements.
     */
    private void readBack(BackendConnection on, boolean collation, boolean insertId) {
        if (phase == Phase.CLOSED || backend != on) {
            stalled = false;
            return;
        }
        ByteBuf query = Packets.command(channel.alloc(), Command.COM_QUERY,
                "SELECT @@session.collation_connection, LAST_INSERT_ID()");
        on.exchangeWhileBound(query, ResponseTracker.EXPECT_RESULT, (packets, failure) -> {
            stalled = false;
            if (failure != null || phase == Phase.CLOSED) {
                releasePackets(packets);
                exchangeFailed(on, failure);
                return;
            }
            try {
                String[] row = BackendConnection.singleRow(packets, key.deprecateEof(), 2);
                if (row != null) {
                    if (collation && row[0] != null) {
                        variables.put("collation_connection", row[0]);
                        on.variables().put("collation_connection", row[0]);
                    }
                    if (insertId && row[1] != null) { // else the connection's value may be another session's
                        lastInsertId = Long.parseUnsignedLong(row[1]);
                    }
                }
            } finally {
                releasePackets(packets);
            }
            pump();
        });
    }

    /** Whether a tracker setting the client changed still reports what Sluice needs. */
    private static boolean trackersStillOn(String name, String value) {
        switch (name) {
            case "session_track_system_variables":
                return value.equals("*"); // Sluice rewrites the client's assignments to '*'
            case "session_track_schema":
            case "session_track_state_change":
                return value.equalsIgnoreCase("ON") || value.equals("1");
            default:
                return true; // transaction info, GTIDs: extra reports Sluice does not need
        }
    }

    @Override
    public void onSchema(String newSchema) {
        schema = newSchema;
        requestedSchema = newSchema;
        if (backend != null) {
            backend.schemaChanged(newSchema);
        }
    }

    @Override
    public void onEnd(boolean stateChanged, boolean described) {
        if (stateChanged && !described && (sniffed & (QuerySniffer.USER_VARIABLE | QuerySniffer.TEMPORARY
                | QuerySniffer.SQL_PREPARE | QuerySniffer.GET_LOCK | QuerySniffer.LOCK_TABLES)) == 0) {
            pin(PinReason.SESSION_STATE);
        }
    }

    // ---- events from the backend ----------------------------------------------------------------------------

    @Override
    public void onLocalInfileRequest() {
        infileUpload = true;
    }

    @Override
    public void onBackendLost(BackendConnection lost, boolean responseStarted) {
        if (lost != backend) {
            return;
        }
        backend = null;
        context.group().reportConnectionLost(lost.dataSourceName());
        String message = "Lost connection to backend '" + lost.dataSourceName() + "' (" + lost.address() + ")";
        log.warn("client {}: {}", channel.remoteAddress(), message);
        if (responseStarted) {
            channel.close(); // part of a response already reached the client: only a close is honest
        } else if (!lost.tracker().isIdle()) {
            failAndClose(lastSequenceId + 1, ErrorCode.CR_SERVER_LOST, message + " during query");
        } else {
            lostBackend = message; // told on the next command, as a server's death would be
        }
    }

    @Override
    public void onBackendWritabilityChanged(boolean writable) {
        if (writable) {
            resumeReading(SUSPEND_BACKEND_FULL);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (ctx.channel().isWritable() && backend != null) {
            backend.resumeReading(); // the client drained what was relayed: read the server again
        }
        ctx.fireChannelWritabilityChanged();
    }

    // ---- closing --------------------------------------------------------------------------------------------

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        boolean admitted = nonce != null;
        phase = Phase.CLOSED;
        cancelHandshakeTimer();
        if (login != null) {
            login.discard();
            login = null;
        }
        if (account != null) {
            account.sessionClosed();
            account = null;
        }
        if (captured != null) {
            captured.end(backend == null ? null : backend.tracker());
            captured = null;
        }
        if (queued != null) {
            while (!queued.isEmpty()) {
                queued.poll().frame().release();
            }
        }
        if (backend != null) {
            BackendConnection lent = backend;
            backend = null;
            if (multiplexing && canGiveBack()) {
                pool.giveBack(lent); // its state is tracked: the next session makes it its own, no reset needed
            } else {
                pool.release(lent);
            }
        }
        if (assigned != null) {
            context.group().sessionEnded(assigned);
            assigned = null;
        }
        if (admitted) {
            context.sessionClosed(this);
            context.clientClosed();
        }
        log.debug("client {} #{} disconnected", channel.remoteAddress(), connectionId);
        ctx.fireChannelInactive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof IdleStateEvent) {
            // Only a session waiting for its client's next command is idle; one whose query runs is not.
            boolean waiting = phase == Phase.COMMAND && !acquiring && (backend == null || backend.isBetweenCommands());
            if (waiting) {
                log.debug("client {} #{}: idle for {} ms: closing", channel.remoteAddress(), connectionId,
                        security.idleTimeoutMillis());
                failAndClose(0, ErrorCode.ER_CLIENT_INTERACTION_TIMEOUT,
                        "The client was disconnected by the server because of inactivity.");
            }
            return;
        }
        ctx.fireUserEventTriggered(event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof PacketTooLargeException) {
            failAndClose(lastSequenceId + 1, ErrorCode.ER_NET_PACKET_TOO_LARGE,
                    "Got a packet bigger than 'max_allowed_packet' bytes (" + root.getMessage() + ")");
            return;
        }
        log.debug("client {}: closing after error: {}", channel == null ? null : channel.remoteAddress(),
                root.toString());
        ctx.close();
    }

    // ---- helpers --------------------------------------------------------------------------------------------

    private void replyError(ErrorCode error, String message) {
        channel.writeAndFlush(Packets.err(channel.alloc(), lastSequenceId + 1, error, message), channel.voidPromise());
    }

    private void failAndClose(int sequenceId, ErrorCode error, String message) {
        if (error == ErrorCode.ER_ACCESS_DENIED_ERROR) {
            context.authenticationFailed(); // metrics
        }
        phase = Phase.CLOSED;
        channel.writeAndFlush(Packets.err(channel.alloc(), sequenceId & 0xFF, error, message))
                .addListener(ChannelFutureListener.CLOSE);
    }

    private String accessDenied(String name, boolean usingPassword) {
        InetAddress address = clientAddress();
        return "Access denied for user '" + name + "'@'" + (address == null ? "" : address.getHostAddress())
                + "' (using password: " + (usingPassword ? "YES" : "NO") + ")";
    }

    /** Whether the client switched to TLS (the SslHandler is only ever in the pipeline once it did). */
    private boolean isSecure() {
        return channel.pipeline().get(SslHandler.class) != null;
    }

    private InetAddress clientAddress() {
        return channel.remoteAddress() instanceof InetSocketAddress isa ? isa.getAddress() : null;
    }

    // ---- operations (issue #5): metrics, slow-query log, graceful shutdown, /api/sessions ---------------------

    @Override
    public LoopCounters loopCounters() {
        return counters;
    }

    @Override
    public SlowQueryLog slowQueryLog() {
        return context.slowQueryLog();
    }

    @Override
    public String describeForLog() {
        return "client=" + (channel == null ? "?" : channel.remoteAddress()) + " id=" + connectionId + " user=" + user;
    }

    @Override
    public void onResponseComplete() {
        if ((readCollation || (multiplexing && (sniffed & QuerySniffer.SETS_LAST_INSERT_ID) != 0))
                && backend != null && backend.tracker().isIdle()) {
            boolean collation = readCollation;
            boolean insertId = (sniffed & QuerySniffer.SETS_LAST_INSERT_ID) != 0;
            readCollation = false;
            sniffed = 0;
            stalled = true; // frames wait until the values are known
            BackendConnection on = backend;
            // after the relay has written this response
            channel.eventLoop().execute(() -> readBack(on, collation, insertId));
        }
        if (multiplexing && canGiveBack()) {
            // The transaction (or autocommit statement) is over: the connection goes back once this response has
            // been written to the client, as it is; the next one this session takes gets its variables.
            BackendConnection done = backend;
            backend = null;
            done.detachWhenRelayed();
        }
        if (closeWhenIdle) {
            // After the relay has written this response's last bytes: this runs inside the tracker's scan.
            channel.eventLoop().execute(this::closeIfIdle);
        }
    }

    /**
     * Closes this session at its first idle moment outside a transaction: now if it is idle, else when a response
     * leaves it so. Safe to call from any thread, and more than once.
     */
    public void closeWhenIdle() {
        Channel ch = channel;
        if (ch != null) {
            ch.eventLoop().execute(() -> {
                closeWhenIdle = true;
                closeIfIdle();
            });
        }
    }

    private void closeIfIdle() {
        if (phase == Phase.CLOSED || !channel.isActive() || !isIdleOutsideTransaction()) {
            return;
        }
        phase = Phase.CLOSED;
        log.debug("client {} #{}: closed for shutdown, idle outside a transaction", channel.remoteAddress(),
                connectionId);
        // Behind whatever the relay has queued: the last response reaches the client before the close.
        channel.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
    }

    /** No command outstanding, nothing half sent, and the server reports no open transaction. */
    private boolean isIdleOutsideTransaction() {
        if (phase == Phase.GREETING_SENT || phase == Phase.THROTTLED || phase == Phase.AUTHENTICATING) {
            // Mid-login: cutting it would look like a network fault. The login ends in ERR 1053 instead (see
            // authenticate), or the handshake timeout closes a client that went silent.
            return false;
        }
        if (phase != Phase.COMMAND || acquiring || continuation || infileUpload
                || (queued != null && !queued.isEmpty())) {
            return false;
        }
        return backend == null || (backend.tracker().isIdle() && !backend.tracker().inTransaction());
    }

    /** This session as {@code /api/sessions?verbose} shows it. Call on the session's event loop. */
    public SessionSnapshot snapshot() {
        String state;
        if (phase == Phase.CLOSED) {
            state = "closing";
        } else if (phase != Phase.COMMAND) {
            state = "login";
        } else if (backend != null && backend.tracker().inTransaction()) {
            state = "in_transaction";
        } else if (acquiring || (backend != null && !backend.tracker().isIdle())) {
            state = "running";
        } else {
            state = "idle";
        }
        PinReason pin = pinnedBy();
        return new SessionSnapshot(connectionId, user, channel == null ? null : String.valueOf(channel.remoteAddress()),
                dataSource, schema, state, connectedAtMillis, pin == null ? null : pin.label());
    }

    /** The event loop this session runs on, where {@link #snapshot()} must be called. */
    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    private void suspendReading(int reason) {
        suspendReasons |= reason;
        channel.config().setAutoRead(false);
    }

    private void resumeReading(int reason) {
        suspendReasons &= ~reason;
        if (suspendReasons == 0 && phase != Phase.CLOSED) {
            channel.config().setAutoRead(true);
        }
    }

}
