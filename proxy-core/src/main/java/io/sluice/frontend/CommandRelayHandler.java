package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BorrowingSession;
import io.sluice.metrics.LoopCounters;
import io.sluice.pooling.CommandPolicy;
import io.sluice.pooling.GtidNotReached;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ServerStatus;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import java.util.ArrayDeque;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The command phase of a client connection, and the hot path: every client frame is looked at once, handed to the
 * session's {@link CommandPolicy}, and written to the session's backend connection, which relays the responses
 * straight back to the client channel. Frames wait here, in order, only while no connection is bound or while one
 * of Sluice's own commands runs on it. Reads are flushed to the backend once per read batch; reading the client
 * stops while a connection is awaited or the backend socket is full.
 *
 * <p>It replaces {@link ClientHandshakeHandler} in the pipeline at login, with {@link ClientClosing} after it
 * for errors, timeouts and shutdown. Ownership: frames arrive as whole frames
 * from {@link io.sluice.codec.PacketFrameDecoder}; each is forwarded (the backend channel releases it once written),
 * held until a connection is ready, or released here.
 */
final class CommandRelayHandler extends ChannelInboundHandlerAdapter implements BorrowingSession {

    private static final Logger log = LoggerFactory.getLogger(CommandRelayHandler.class);
    private enum State {
        /** Installed by the login, whose OK has not gone out yet. */
        STARTING,
        /** Commands flow. */
        COMMAND,
        /** A COM_CHANGE_USER's authentication exchange goes on. */
        CHANGING_USER,
        CLOSED
    }

    /** Reasons to stop reading the client; reading resumes when none is left. */
    private static final int SUSPEND_ACQUIRING = 1;
    private static final int SUSPEND_BACKEND_FULL = 2;
    private static final int SUSPEND_MOVING = 4;

    private final FrontendContext context;
    private final ClientSecurity security;
    private final ClientSession session;
    private final Channel channel;
    private final BackendLease lease;
    private final CommandPolicy policy;
    /** Whether the policy follows the session (transaction pooling): read once, so session pooling pays nothing. */
    private final boolean followsSession;
    /** Whether prepared-statement commands go through the policy: it follows the session or records statements. */
    private final boolean statementsByPolicy;
    private final CaptureHook capture;
    private final LoopCounters counters;
    private final ClientClosing closing;
    private final UserChange userChange;
    private final FirstStatement first;

    private State state = State.STARTING;
    /** Frames waiting for a connection, or for Sluice's own command on it, in order. */
    private final HeldCommands held = new HeldCommands();
    private boolean continuation;
    private boolean infileUpload;
    private int lastSequenceId;
    /** The command byte of the client's last command, for the log line of a backend connection lost under it. */
    private int lastCommand = -1;
    /** Why the backend connection was lost, told at the next command; {@code null} while it is fine. */
    private String lostBackend;
    private int suspendReasons;
    private boolean forwardedSinceFlush;
    /** The connection frames were forwarded to since the last flush. */
    private BackendConnection flushTarget;
    /** The policy asked for the command it is looking at to wait and be routed once first (read/write splitting). */
    private boolean holdNextToRoute;
    /** Graceful shutdown asked for this session to close at its first idle moment outside a transaction. */
    private boolean closeWhenIdle;

    CommandRelayHandler(FrontendContext context, ClientSecurity security, ClientSession session, BackendLease lease) {
        this.context = context;
        this.security = security;
        this.session = session;
        this.channel = session.channel();
        this.lease = lease;
        this.counters = session.commands().counters();
        this.capture = new CaptureHook(context.capture(), session);
        this.policy = CommandPolicy.of(context.pooling().transactionPooling(), session.key(),
                session.tracksSessionState(), context.serverInfo().hasMariaDbCapabilities(),
                context.readWriteGroup(session.requestedSchema()), new PolicyPort(this, lease, session, context));
        this.followsSession = policy.followsSession();
        this.statementsByPolicy = policy.takesStatementCommands();
        this.closing = new ClientClosing(this, session, context, security.idleTimeoutMillis());
        this.userChange = new UserChange(this, session, security, context, lease, capture, policy);
        this.first = new FirstStatement(context, this, lease);
        lease.attach(this, policy);
    }

    /**
     * Starts the command phase: the login is done (and its backend check, if any, with the connection bound), so the
     * OK goes out, then the commands a pipelining client sent before it (taken), in order.
     */
    void start(int okSequenceId, ArrayDeque<ByteBuf> sentBeforeOk) {
        state = State.COMMAND;
        BackendConnection connection = lease.connection();
        capture.loggedIn(sentBeforeOk == null, connection);
        if (connection != null) {
            capture.bound(connection);
            first.bound();
        }
        channel.writeAndFlush(Packets.ok(channel.alloc(), okSequenceId, ServerStatus.SERVER_STATUS_AUTOCOMMIT),
                channel.voidPromise());
        ConnectionLog.loggedIn(session, lease.dataSource());
        if (sentBeforeOk != null) {
            for (ByteBuf frame; (frame = sentBeforeOk.poll()) != null; ) {
                if (state == State.COMMAND) {
                    onCommandFrame(frame);
                } else {
                    frame.release();
                }
            }
            flushForwarded();
        }
        sendHeld();
        resumeReading(SUSPEND_ACQUIRING);
    }

    // ---- client to backend ----------------------------------------------------------------------------------

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        if (counters != null) {
            counters.bytesIn(frame.readableBytes());
        }
        if (state == State.COMMAND) {
            onCommandFrame(frame);
        } else {
            frame.release(); // closing (a COM_CHANGE_USER's exchange takes its packets before they reach here)
        }
    }

    private void onCommandFrame(ByteBuf frame) {
        int length = Packets.payloadLength(frame, frame.readerIndex());
        lastSequenceId = Packets.sequenceId(frame, frame.readerIndex());
        if (continuation || infileUpload) {
            // The rest of a 16 MiB+ command, or LOCAL INFILE data: bytes to pass on, not commands.
            continuation = length == Packets.MAX_PAYLOAD;
            if (infileUpload && length == 0) {
                infileUpload = false; // the empty packet ends the upload
            }
            forward(frame, null, -1, null);
            return;
        }
        continuation = length == Packets.MAX_PAYLOAD;
        if (lastSequenceId != 0) {
            // Every command starts at sequence id 0, and MySQL hangs up on any other. Sent on, the frame would cost
            // the server connection, and for a command with no response (COM_STMT_CLOSE) the server's ERR would read
            // as a backend breaking the protocol: WARN lines a client could cause at will (issue #42).
            frame.release();
            refuseOutOfOrder();
            return;
        }
        if (length == 0) {
            frame.release();
            answer(ClientErrors.emptyPacket(channel.alloc(), lastSequenceId + 1));
            return;
        }
        int command = frame.getUnsignedByte(frame.readerIndex() + Packets.HEADER_SIZE);
        lastCommand = command;
        if (counters != null) {
            counters.command(command);
        }
        if (lostBackend != null) {
            frame.release();
            failAndClose(ClientErrors.lostBackend(channel.alloc(), lastSequenceId + 1, lostBackend, false));
            return;
        }
        if (command == Command.COM_QUIT) {
            frame.release();
            channel.close();
            return;
        }
        if (command == Command.COM_CHANGE_USER) {
            userChange.requested(frame);
            return;
        }
        ResponseKind kind = ResponseKind.of(command);
        if (kind == null) {
            frame.release();
            answer(ClientErrors.unknownCommand(channel.alloc(), lastSequenceId + 1, command));
            return;
        }
        ResponseObserver captured = capture.onCommand(command, frame, lease.connection(), isQuietForCapture());
        frame = policy.onCommand(command, frame);
        if (frame == null) { // answered by Sluice itself
            holdNextToRoute = false;
            if (captured != null) {
                captured.onNoResponse();
            }
            return;
        }
        if (holdNextToRoute) {
            holdToBeRouted(frame, kind, command, captured);
            return;
        }
        forward(frame, kind, command, captured);
    }

    /** Holds a command the policy routes once it is first and the connection is idle (read/write splitting). */
    private void holdToBeRouted(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        holdNextToRoute = false;
        held.addToRoute(frame, kind, command, captured);
        if (held.peek().frame() != frame) {
            return; // routed once the commands before it went
        }
        BackendConnection connection = lease.connection();
        if (connection == null && !lease.isAcquiring()) {
            routedHere(held.peek(), null); // nothing before it, no connection: routed now
        } else if (connection != null && connection.isBetweenCommands() && !connection.runsOwnCommand()) {
            sendHeld(); // a connection kept idle (a pin: the last statement's warnings), which no answer will wake
        }
    }

    /** Sends a frame on the connection, or holds it until there is one (and starts taking one). */
    private void forward(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        BackendConnection connection = lease.connection();
        if (connection == null || connection.runsOwnCommand() || !held.isEmpty()) {
            hold(frame, kind, command, captured);
            if (connection == null && !lease.isAcquiring()) {
                lease.acquire(onBound, onAcquireFailed, onWaiting); // reused callbacks: nothing to allocate
            }
            return;
        }
        if (!send(connection, frame, kind, command, captured)) {
            hold(frame, kind, command, captured); // waits for Sluice's own command (a prepare) to end
            return;
        }
        BackendConnection now = lease.connection();
        if (now != null && !now.channel().isWritable()) {
            suspendReading(SUSPEND_BACKEND_FULL);
        }
    }

    /**
     * Writes one frame to the connection (not flushed). In transaction pooling (and session pooling after a move),
     * prepared-statement commands get the statement ids of the connection in use.
     *
     * @return false when the frame must wait (not consumed)
     */
    private boolean send(BackendConnection connection, ByteBuf frame, ResponseKind kind, int command,
            ResponseObserver captured) {
        first.sending(connection, frame, command);
        if (kind == null) {
            connection.forwardData(frame);
        } else if (statementsByPolicy && command >= Command.COM_STMT_PREPARE && command <= Command.COM_STMT_FETCH
                && command != Command.COM_STMT_CLOSE) {
            if (!policy.sendStatementCommand(connection, command, frame, kind, captured)) {
                return false;
            }
        } else {
            connection.forward(frame, kind, captured, null, 0);
            if (command == Command.COM_SET_OPTION) {
                connection.state().taint(); // the server-side multi-statement option outlives COM_RESET_CONNECTION
            }
        }
        flushTarget = connection;
        forwardedSinceFlush = true;
        return true;
    }

    private void hold(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        held.add(frame, kind, command, captured);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        flushForwarded(); // one flush per read batch, not per frame
    }

    private void flushForwarded() {
        if (forwardedSinceFlush) {
            forwardedSinceFlush = false;
            BackendConnection target = flushTarget;
            flushTarget = null;
            target.flush();
        }
    }

    /**
     * Sends the frames that waited, in order, unless Sluice's own command holds them again; then, in transaction
     * pooling, gives the connection back if nothing holds it (a login that only checked the schema, a prepare in
     * autocommit).
     */
    void sendHeld() {
        if (state != State.COMMAND) {
            return;
        }
        BackendConnection connection = lease.connection();
        boolean answered = false;
        while (!held.isEmpty()) {
            HeldCommands.Held next = held.peek();
            if (next.isChangeUser()) {
                if (connection != null && !connection.isBetweenCommands()) {
                    break; // the responses to the commands before it go first
                }
                held.poll();
                if (answered) {
                    answered = false;
                    channel.flush();
                }
                if (!userChange.resumed(next.frame())) {
                    return; // the exchange goes on; what waits behind it is sent once it has ended
                }
                connection = lease.connection();
                if (connection == null && !held.isEmpty() && !lease.isAcquiring()) {
                    lease.acquire(onBound, onAcquireFailed, onWaiting); // the new user's commands need one
                }
                continue;
            }
            if (next.isOwnAnswer()) {
                if (connection != null && !connection.isBetweenCommands()) {
                    break; // the responses to the commands before it go first
                }
                held.poll();
                channel.write(next.frame(), channel.voidPromise());
                answered = true;
                continue;
            }
            // One that waits to be routed waits for the connection to be idle, or for one of its route (bound()
            // sends it then).
            if (connection == null || connection.runsOwnCommand() || next.toRoute() && !routedHere(next, connection)
                    || !send(connection, next.frame(), next.kind(), next.command(), next.captured())) {
                break;
            }
            held.poll();
            connection = lease.connection();
        }
        if (answered) {
            channel.flush();
        }
        flushForwarded();
        giveBackIfDone();
    }

    /**
     * Transaction pooling: gives the connection back if nothing holds it. It is read again here: a held statement
     * routed elsewhere gave back the one sendHeld began with.
     */
    private void giveBackIfDone() {
        BackendConnection connection = lease.connection();
        if (followsSession && connection != null && isQuiet() && policy.mayGiveBack(connection)) {
            lease.giveBack();
        }
    }

    /**
     * The first held command waits to be routed (read/write splitting, {@link HeldCommands#addToRoute}): whether it
     * runs on {@code connection}, now. If not, it waits until the connection is between commands, or the policy
     * routed it elsewhere and a connection of its route is being taken (the one held given back).
     */
    private boolean routedHere(HeldCommands.Held first, BackendConnection connection) {
        if (connection != null ? connection.runsOwnCommand() || !connection.isBetweenCommands()
                : lease.isAcquiring()) {
            return false;
        }
        held.firstRouted();
        boolean elsewhere = policy.routeHeld(first.command(), first.frame(), connection);
        if (connection != null) {
            if (!elsewhere) {
                return true;
            }
            lease.giveBack();
        }
        lease.acquire(onBound, onAcquireFailed, onWaiting);
        return false;
    }

    // ---- acquiring a connection -----------------------------------------------------------------------------

    // A command's acquire (the one per transaction in transaction pooling) reuses these.
    private final Consumer<BackendConnection> onBound = this::bound;
    private final Consumer<Throwable> onAcquireFailed = cause -> acquireFailed(cause, -1);
    private final Runnable onWaiting = () -> suspendReading(SUSPEND_ACQUIRING);

    private void bound(BackendConnection connection) {
        if (state != State.CLOSED) {
            capture.bound(connection);
            first.bound();
            sendHeld();
            resumeReading(SUSPEND_ACQUIRING);
        }
    }

    /** No connection: the held commands, or the request waiting for OK, get the error; the session goes on. */
    private void acquireFailed(Throwable cause, int replySequenceId) {
        log.debug("client {}: no backend connection: {}", session.remoteAddress(), cause.toString());
        int sequenceId = replySequenceId >= 0 ? replySequenceId
                : held.isEmpty() ? lastSequenceId + 1 : held.peek().replySequenceId();
        if (cause instanceof GtidNotReached) { // moved off a server that is gone to one that lacks its last write
            held.dropAll();
            failAndClose(lease.acquireFailed(channel.alloc(), sequenceId, cause));
            return;
        }
        continuation = false;
        if (replySequenceId >= 0 || held.isEmpty()) {
            held.dropAll();
            reply(lease.acquireFailed(channel.alloc(), sequenceId, cause));
        } else {
            failHeld(cause);
        }
        resumeReading(SUSPEND_ACQUIRING);
    }

    /**
     * No connection for the held commands: each gets the error (a pipelining client waits for an answer to every
     * command it sent). A statement that waits to be routed (read/write splitting) ends it: it gets a route, and a
     * connection, of its own.
     */
    private void failHeld(Throwable cause) {
        if (held.failUpToRouted(channel, sequenceId -> lease.acquireFailed(channel.alloc(), sequenceId, cause))) {
            routedHere(held.peek(), null);
        }
    }

    /** Takes a connection for the held commands (a first statement run again elsewhere, {@link FirstStatement}). */
    void takeConnectionForHeld() {
        lease.acquire(onBound, onAcquireFailed, onWaiting);
    }

    /** COM_CHANGE_USER succeeded: takes a connection for the new user, then runs {@code onReady} (its OK). */
    void acquireThen(int replySequenceId, Runnable onReady) {
        lease.acquire(connection -> {
            if (state != State.CLOSED) {
                onReady.run();
            }
            bound(connection);
        }, cause -> acquireFailed(cause, replySequenceId), onWaiting);
    }

    /** COM_CHANGE_USER's exchange began; its client packets go to its own stage. */
    void changingUser() {
        state = State.CHANGING_USER;
    }

    /** COM_CHANGE_USER's exchange ended: commands flow again. */
    void commandPhase() {
        state = State.COMMAND;
    }

    boolean isChangingUser() {
        return state == State.CHANGING_USER;
    }

    // ---- backend to client ----------------------------------------------------------------------------------

    @Override
    public Channel clientChannel() {
        return channel;
    }

    @Override
    public void onLocalInfileRequest() {
        infileUpload = true;
    }

    @Override
    public void onResponsesRelayed() {
        first.answered();
        BackendConnection connection = lease.connection();
        if (followsSession && connection != null) {
            policy.afterResponses(connection); // may read state back, or give the connection back
        }
        if (!held.isEmpty()) {
            sendHeld();
        }
        if (closeWhenIdle) {
            closing.closeIfIdle();
        }
        if (!followsSession && lease.moves().movePending()) {
            lease.moves().handover().atIdleMoment(); // session pooling: a move waits for this session's idle moment
        }
    }

    @Override
    public void onBackendLost(BackendConnection lost, boolean responseStarted) {
        if (lost == lease.connection()) {
            if (first.runsElsewhere(lost, responseStarted)) {
                return;
            }
            lease.lost(lost);
            lostBackend = closing.backendLost(lost, responseStarted, lastCommand);
        }
    }

    @Override
    public void onBackendWritable() {
        resumeReading(SUSPEND_BACKEND_FULL);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        BackendConnection connection = lease.connection();
        if (ctx.channel().isWritable() && connection != null) {
            connection.resumeReading(); // the client drained what was relayed: read the server again
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public String describeForLog() {
        return session.describeForLog();
    }

    // ---- what the pooling policy's port uses -----------------------------------------------------------------

    /** The sequence id a reply to the command being handled carries. */
    int replySequenceId() {
        return lastSequenceId + 1;
    }

    /** Nothing outstanding: no connection being acquired, no command held back or half sent. */
    boolean isQuiet() {
        return state == State.COMMAND && !lease.isAcquiring() && !continuation && !infileUpload && held.isEmpty();
    }

    /** Whether a capture may begin with the next command: nothing outstanding, nothing held. */
    private boolean isQuietForCapture() {
        return lease.connection() == null ? !lease.isAcquiring() && held.isEmpty() : isBetweenResponses();
    }

    /** The command being looked at waits until it is first and the connection idle, then the policy routes it. */
    void holdToRoute() {
        holdNextToRoute = true;
    }

    /** The frames held back, for the policy's port. */
    HeldCommands held() {
        return held;
    }

    boolean isClosed() {
        return state == State.CLOSED;
    }

    // ---- closing --------------------------------------------------------------------------------------------

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        state = State.CLOSED;
        session.releaseAccount();
        capture.end(lease.connection());
        held.dropAll();
        first.drop();
        lease.end();
        policy.sessionEnded();
        context.registry().closed(session);
        ConnectionLog.disconnected(session);
        ctx.fireChannelInactive();
    }

    /** Waiting for the client's next command: logged in, no connection being acquired, no response outstanding. */
    boolean isWaitingForCommand() {
        return state == State.COMMAND && !lease.isAcquiring() && isBetweenResponses();
    }

    /** No response is being relayed: an ERR of Sluice's own would not land inside one. */
    boolean isBetweenResponses() {
        BackendConnection connection = lease.connection();
        return connection == null || connection.isBetweenCommands();
    }

    void reply(ByteBuf packet) {
        channel.writeAndFlush(packet, channel.voidPromise());
    }

    /**
     * Sluice's own answer to the command being handled (taken): at once, unless the responses to earlier commands
     * of a pipelining client are still to come or commands wait before it; then after them, in order.
     */
    void answer(ByteBuf packet) {
        if (held.isEmpty() && isBetweenResponses()) {
            reply(packet);
        } else {
            held.addOwnAnswer(packet);
        }
    }

    /** A command frame whose sequence id is not 0: the server's answer to it, then the connection closes. */
    private void refuseOutOfOrder() {
        if (log.isDebugEnabled()) {
            log.debug("client {}: command frame with sequence id {}: closing", session.remoteAddress(),
                    lastSequenceId);
        }
        if (held.isEmpty() && isBetweenResponses()) {
            failAndClose(ClientErrors.packetsOutOfOrder(channel.alloc(), lastSequenceId + 1));
        } else {
            state = State.CLOSED; // an ERR now would land inside a response still being relayed
            channel.close();
        }
    }

    void failAndClose(ByteBuf err) {
        state = State.CLOSED;
        channel.writeAndFlush(err).addListener(ChannelFutureListener.CLOSE);
    }

    /** Graceful shutdown: close at the first idle moment outside a transaction. On the loop. */
    void closeWhenIdle() {
        closeWhenIdle = true;
        closing.closeIfIdle();
    }

    /** What ends the session other than the client: the pipeline stage right after this one. */
    ClientClosing closing() {
        return closing;
    }

    /** The lease and policy, for the session's snapshot. */
    BackendLease lease() {
        return lease;
    }

    CommandPolicy policy() {
        return policy;
    }

    /** Whether commands flow (the login is done and no COM_CHANGE_USER exchange goes on). */
    boolean isCommandPhase() {
        return state == State.COMMAND;
    }

    /** Session pooling: no command may come while a move reads the session's state and swaps its connection. */
    void moving(boolean underWay) {
        if (underWay) {
            suspendReading(SUSPEND_MOVING);
        } else {
            resumeReading(SUSPEND_MOVING);
            sendHeld(); // those held first
        }
    }

    private void suspendReading(int reason) {
        suspendReasons |= reason;
        channel.config().setAutoRead(false);
    }

    private void resumeReading(int reason) {
        suspendReasons &= ~reason;
        if (suspendReasons == 0 && state != State.CLOSED) {
            channel.config().setAutoRead(true);
        }
    }
}
