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
import io.sluice.pooling.StatementMapping;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ServerStatus;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import io.sluice.routing.ReadWriteGroup;
import io.sluice.routing.RoutingPolicy;
import io.sluice.routing.SessionPolicies;
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
 * <p>It replaces {@link ClientHandshakeHandler} in the pipeline at login, with {@link ClientClosing} after it for
 * errors, timeouts and shutdown. Ownership: frames arrive whole from {@link io.sluice.codec.PacketFrameDecoder}; each
 * is forwarded (the backend channel releases it once written), held until a connection is ready, or released here.
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

    private final FrontendContext context;
    private final ClientSecurity security;
    private final ClientSession session;
    private final Channel channel;
    private final BackendLease lease;
    private final CommandPolicy policy;
    /** Whether the policy follows the session (transaction pooling): read once, so session pooling pays nothing. */
    private final boolean followsSession;
    /** What sends prepared-statement commands under the connection's statement ids, or {@code null}: as they came. */
    private final StatementMapping statements;
    /** What routes the statements the policy holds to route, or {@code null}: a session whose policy does not route. */
    private final SessionRouter router;
    private final CaptureHook capture;
    private final RuleHook rules; // statement statistics by digest and query rules, before the policy
    private final LoopCounters counters;
    private final ClientClosing closing;
    private final UserChange userChange;
    private final ClientReading reading;

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
        ReadWriteGroup split = context.readWriteGroup(session.requestedSchema());
        SessionRouter routing = split == null ? null : new SessionRouter(this, lease, session);
        this.policy = SessionPolicies.of(context.pooling().transactionPooling(), session.key(),
                session.tracksSessionState(), context.serverInfo().hasMariaDbCapabilities(), split,
                new PolicyPort(this, lease, session, context), routing);
        this.followsSession = policy.followsSession();
        this.statements = StatementMapping.of(policy);
        if (policy instanceof RoutingPolicy routes) {
            routing.serves(routes);
            this.router = routing;
        } else {
            this.router = null; // a split group's session on a server without session tracking: pinned, not routed
        }
        this.reading = new ClientReading(this, channel);
        this.rules = session.useRules(RuleHook.of(context, session, this, reading,
                session.useDigests(DigestHook.of(context, session, lease))));
        this.onWaiting = () -> reading.suspend(ClientReading.ACQUIRING);
        this.closing = new ClientClosing(this, session, context, security.idleTimeoutMillis());
        this.userChange = new UserChange(this, session, security, context, lease, capture, policy);
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
        capture.bound(connection);
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
        reading.resume(ClientReading.ACQUIRING);
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
            closing.outOfOrder(lastSequenceId);
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
        if (rules.onArrival(command, frame, kind, captured)) { // else refused, or waiting for its turn: taken
            afterRules(frame, kind, command, captured);
        }
    }

    /** A command the query rules let go on, now or when its turn came: the policy's part, then forward. */
    void afterRules(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        frame = policy.onCommand(command, frame);
        if (frame == null) { // answered by Sluice itself
            holdNextToRoute = false;
            if (captured != null) {
                captured.onNoResponse();
            }
            giveBackIfDone(); // a COM_STMT_CLOSE may end a cursor's pin: no response will come to give it back
            return;
        }
        if (holdNextToRoute) {
            holdNextToRoute = false;
            router.hold(frame, kind, command, captured);
            return;
        }
        forward(frame, kind, command, captured);
    }

    /** Sends a frame on the connection, or holds it until there is one (and starts taking one). */
    private void forward(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        BackendConnection connection = lease.connection();
        if (connection == null || connection.runsOwnCommand() || !held.isEmpty()) {
            hold(frame, kind, command, captured);
            if (connection == null && !lease.isAcquiring()) {
                acquire();
            }
            return;
        }
        if (!send(connection, frame, kind, command, captured)) {
            hold(frame, kind, command, captured); // waits for Sluice's own command (a prepare) to end
            return;
        }
        BackendConnection now = lease.connection();
        if (now != null && !now.channel().isWritable()) {
            reading.suspend(ClientReading.BACKEND_FULL);
        }
    }

    /**
     * Writes one frame to the connection (not flushed); in transaction pooling (and session pooling after a move)
     * prepared-statement commands get the connection's statement ids. False: the frame must wait (not consumed).
     */
    private boolean send(BackendConnection connection, ByteBuf frame, ResponseKind kind, int command,
            ResponseObserver captured) {
        lease.first().sending(connection, frame, command);
        if (kind == null) {
            connection.forwardData(frame);
        } else if (statements != null && command >= Command.COM_STMT_PREPARE && command <= Command.COM_STMT_FETCH
                && command != Command.COM_STMT_CLOSE) {
            rules.beforeSend(connection, frame, command); // statistics' record of the outcome; a rule's timeout
            if (!statements.sendStatementCommand(connection, command, frame, kind, captured)) {
                rules.notSent(connection); // prepared there first: told again when it is sent
                return false;
            }
        } else {
            rules.beforeSend(connection, frame, command);
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
            if (next.isOwnAnswer() || next.isChangeUser()) {
                if (connection != null && !connection.isBetweenCommands()) {
                    break; // the responses to the commands before it go first
                }
                held.poll();
                if (next.isOwnAnswer()) {
                    channel.write(next.frame(), channel.voidPromise());
                    answered = true;
                } else if (userChange.resumed(next.frame(), answered)) {
                    answered = false;
                    connection = lease.connection();
                } else {
                    return; // the exchange goes on; what waits behind it is sent once it has ended
                }
                continue;
            }
            // One that waits to be routed waits for the connection to be idle, or for one of its route (bound()
            // sends it then).
            if (connection == null || connection.runsOwnCommand()
                    || next.toRoute() && !router.routedHere(next, connection)
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

    // ---- acquiring a connection -----------------------------------------------------------------------------
    // A command's acquire (the one per transaction in transaction pooling) reuses these.
    private final Consumer<BackendConnection> onBound = this::bound;
    private final Consumer<Throwable> onAcquireFailed = cause -> acquireFailed(cause, -1);
    final Runnable onWaiting;

    /** Takes a connection for the held commands. */
    void acquire() {
        lease.acquire(onBound, onAcquireFailed, onWaiting); // reused callbacks: nothing to allocate
    }

    /** A connection is bound: the held commands go. */
    void bound(BackendConnection connection) {
        if (state != State.CLOSED) {
            capture.bound(connection);
            sendHeld();
            reading.resume(ClientReading.ACQUIRING);
        }
    }

    /** No connection: the held commands, or the request waiting for OK, get the error; the session goes on. */
    void acquireFailed(Throwable cause, int replySequenceId) {
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
        reading.resume(ClientReading.ACQUIRING);
    }

    /**
     * No connection for the held commands: each gets the error (a pipelining client waits for an answer to every
     * command it sent); a statement that waits to be routed (read/write splitting) ends it, with a route of its own.
     */
    private void failHeld(Throwable cause) {
        if (held.failUpToRouted(channel, sequenceId -> lease.acquireFailed(channel.alloc(), sequenceId, cause))) {
            router.routedHere(held.peek(), null);
        }
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
        lease.first().answered();
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
            if (lease.first().runsElsewhere(lost, responseStarted)) {
                return;
            }
            lease.lost(lost);
            lostBackend = closing.backendLost(lost, responseStarted, lastCommand);
        }
    }

    @Override
    public void onBackendWritable() {
        reading.resume(ClientReading.BACKEND_FULL);
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

    /** Closes the session at once, nothing more written. */
    void closeNow() {
        state = State.CLOSED;
        channel.close();
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
            reading.suspend(ClientReading.MOVING);
        } else {
            reading.resume(ClientReading.MOVING);
            sendHeld(); // those held first
        }
    }
}
