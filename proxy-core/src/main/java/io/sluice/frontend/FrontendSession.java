package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.Future;
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
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.ComChangeUser;
import io.sluice.protocol.Command;
import io.sluice.protocol.ErrorCode;
import io.sluice.protocol.HandshakeResponse41;
import io.sluice.protocol.HandshakeV10;
import io.sluice.protocol.PacketTooLargeException;
import io.sluice.protocol.Packets;
import io.sluice.protocol.Packets.BackendError;
import io.sluice.protocol.ProtocolException;
import io.sluice.protocol.Scramble;
import io.sluice.protocol.ServerStatus;
import io.sluice.relay.ResponseTracker;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.shardingsphere.db.protocol.mysql.packet.handshake.MySQLAuthSwitchRequestPacket;
import org.apache.shardingsphere.db.protocol.mysql.packet.handshake.MySQLAuthenticationPluginData;
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
        implements BackendConnection.Session, BackendConnection.WritabilityListener {

    private static final Logger log = LoggerFactory.getLogger(FrontendSession.class);

    private enum Phase {
        /** The greeting went out; the HandshakeResponse41 is due. */
        GREETING_SENT,
        /** An AuthSwitchRequest to mysql_native_password went out; its answer is due. */
        AUTH_SWITCH_SENT,
        /** Logged in, waiting for a backend connection with the requested schema before saying OK. */
        AWAIT_BACKEND,
        /** Commands flow. */
        COMMAND,
        CLOSED
    }

    /** Reasons to stop reading the client; reading resumes when none is left. */
    private static final int SUSPEND_ACQUIRING = 1;
    private static final int SUSPEND_BACKEND_FULL = 2;

    private static final byte[] FAST_AUTH_SUCCESS = {0x01, 0x03};

    private final FrontendContext context;
    private Channel channel;
    private Phase phase = Phase.GREETING_SENT;
    private int connectionId;
    private byte[] nonce;

    private HandshakeResponse41 handshake;
    private String user;
    private String authPlugin;
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

    /** A frame held while the backend connection is being prepared. */
    private record Queued(ByteBuf frame, int expect, boolean command) {
    }

    public FrontendSession(FrontendContext context) {
        this.context = context;
    }

    @Override
    public Channel clientChannel() {
        return channel;
    }

    // ---- connection phase -----------------------------------------------------------------------------------

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        if (!context.admitClient()) {
            phase = Phase.CLOSED;
            ctx.writeAndFlush(Packets.err(ctx.alloc(), 0, ErrorCode.ER_CON_COUNT_ERROR, "Too many connections"))
                    .addListener(ChannelFutureListener.CLOSE);
            return;
        }
        connectionId = context.nextConnectionId();
        nonce = Scramble.nonce();
        HandshakeV10 greeting = new HandshakeV10(context.serverVersion(), connectionId, nonce, context.capabilities(),
                context.serverInfo().collationId(), ServerStatus.SERVER_STATUS_AUTOCOMMIT,
                Scramble.MYSQL_NATIVE_PASSWORD, context.mariaDbCapabilities());
        ctx.writeAndFlush(greeting.write(ctx.alloc()), ctx.voidPromise());
        log.debug("client {} connected as #{}", channel.remoteAddress(), connectionId);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
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
            case AUTH_SWITCH_SENT:
                try {
                    onAuthSwitchResponse(frame);
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
        String plugin = handshake.authPluginName() == null ? Scramble.MYSQL_NATIVE_PASSWORD : handshake.authPluginName();
        if (!Scramble.MYSQL_NATIVE_PASSWORD.equals(plugin) && !Scramble.CACHING_SHA2_PASSWORD.equals(plugin)) {
            if (!Capabilities.has(handshake.capabilities(), Capabilities.CLIENT_PLUGIN_AUTH)) {
                failAndClose(sequenceId + 1, ErrorCode.ER_NOT_SUPPORTED_AUTH_MODE,
                        "Client does not support authentication protocol requested by server");
                return;
            }
            // Ask for the method every client has, over the same nonce.
            phase = Phase.AUTH_SWITCH_SENT;
            lastSequenceId = sequenceId + 1;
            channel.writeAndFlush(Packets.frame(channel.alloc(), lastSequenceId, new MySQLAuthSwitchRequestPacket(
                    Scramble.MYSQL_NATIVE_PASSWORD, new MySQLAuthenticationPluginData(
                            Arrays.copyOf(nonce, 8),
                            Arrays.copyOfRange(nonce, 8, nonce.length)))), channel.voidPromise());
            return;
        }
        authenticate(plugin, handshake.authResponse(), sequenceId + 1);
    }

    private void onAuthSwitchResponse(ByteBuf frame) {
        int sequenceId = Packets.sequenceId(frame, frame.readerIndex());
        ByteBuf payload = Packets.payload(frame);
        byte[] response = new byte[payload.readableBytes()];
        payload.getBytes(payload.readerIndex(), response);
        authenticate(Scramble.MYSQL_NATIVE_PASSWORD, response, sequenceId + 1);
    }

    private void authenticate(String plugin, byte[] response, int replySequenceId) {
        if (!context.users().verify(user, clientAddress(), plugin, nonce, response)) {
            log.debug("client {}: access denied for '{}'", channel.remoteAddress(), user);
            failAndClose(replySequenceId, ErrorCode.ER_ACCESS_DENIED_ERROR, accessDenied(user, response.length > 0));
            return;
        }
        authPlugin = plugin;
        int okSequenceId = replySequenceId;
        if (Scramble.CACHING_SHA2_PASSWORD.equals(plugin) && response.length > 0) {
            ByteBuf fast = Packets.startFrame(channel.alloc(), 2).writeBytes(FAST_AUTH_SUCCESS);
            channel.write(Packets.finishFrame(fast, okSequenceId++), channel.voidPromise());
        }
        key = new SessionKey(handshake.capabilities() & context.capabilities(), handshake.collationId(),
                handshake.mariaDbCapabilities() & context.mariaDbCapabilities());
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
        // The schema is checked by the server: take the backend connection now so that 1049 comes at login.
        phase = Phase.AWAIT_BACKEND;
        int sequenceId = okSequenceId;
        acquireBackend(sequenceId, () -> enterCommandPhase(sequenceId), true);
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
                forward(frame, expect, true);
                if (command == Command.COM_SET_OPTION && backend != null) {
                    backend.taint(); // the server-side multi-statement option outlives COM_RESET_CONNECTION
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
        if (backend == null) {
            queue(frame, expect, command);
            if (!acquiring) {
                if (!everBound && !assigned.acceptsSessions()) {
                    reassign(null); // assigned at login, but the backend left rotation before the first command
                }
                acquireBackend(-1, null, false);
            }
            return;
        }
        backend.forward(frame, expect);
        forwardedSinceFlush = true;
        if (!backend.channel().isWritable()) {
            suspendReading(SUSPEND_BACKEND_FULL);
        }
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
            backend.flush(); // one flush per read batch, not per frame
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
        failoverDeadlineNanos = System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(context.pool(dataSource).dataSource().connectionTimeoutMilliseconds());
        tryAcquire(replySequenceId, onReady, closeOnFailure);
    }

    private void tryAcquire(int replySequenceId, Runnable onReady, boolean closeOnFailure) {
        acquiring = true;
        suspendReading(SUSPEND_ACQUIRING);
        EventLoopPool from = pool;
        Future<BackendConnection> acquired = from.acquire(key, schema);
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
            backend = (BackendConnection) f.getNow();
            everBound = true;
            backend.bind(this);
            if (captured != null) {
                captured.attach(backend.tracker());
            }
            if (onReady != null) {
                onReady.run();
            }
            drainQueue();
            resumeReading(SUSPEND_ACQUIRING);
        });
    }

    private void drainQueue() {
        if (queued == null || queued.isEmpty()) {
            return;
        }
        if (phase != Phase.COMMAND) {
            return;
        }
        while (!queued.isEmpty()) {
            Queued next = queued.poll();
            if (next.expect() < 0) {
                next.frame().release();
                replyError(ErrorCode.ER_UNKNOWN_COM_ERROR, "Unknown command: not relayed by Sluice");
                continue;
            }
            backend.forward(next.frame(), next.expect());
        }
        backend.flush();
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
        String plugin = request.authPluginName() != null ? request.authPluginName() : authPlugin;
        if (!context.users().verify(request.user(), clientAddress(), plugin, nonce, request.authResponse())) {
            failAndClose(replySequenceId, ErrorCode.ER_ACCESS_DENIED_ERROR,
                    accessDenied(request.user(), request.authResponse().length > 0));
            return;
        }
        user = request.user();
        authPlugin = plugin;
        requestedSchema = request.database();
        schema = context.resolveSchema(requestedSchema, dataSource);
        // The new user starts with a fresh session: the old backend connection goes back to be reset.
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
            pool.release(lent);
        }
        if (assigned != null) {
            context.group().sessionEnded(assigned);
            assigned = null;
        }
        if (admitted) {
            context.clientClosed();
        }
        log.debug("client {} #{} disconnected", channel.remoteAddress(), connectionId);
        ctx.fireChannelInactive();
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
        phase = Phase.CLOSED;
        channel.writeAndFlush(Packets.err(channel.alloc(), sequenceId & 0xFF, error, message))
                .addListener(ChannelFutureListener.CLOSE);
    }

    private String accessDenied(String name, boolean usingPassword) {
        InetAddress address = clientAddress();
        return "Access denied for user '" + name + "'@'" + (address == null ? "" : address.getHostAddress())
                + "' (using password: " + (usingPassword ? "YES" : "NO") + ")";
    }

    private InetAddress clientAddress() {
        return channel.remoteAddress() instanceof InetSocketAddress isa ? isa.getAddress() : null;
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
