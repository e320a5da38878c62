package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendAccount;
import io.sluice.backend.SessionKey;
import io.sluice.codec.PacketFrameDecoder;
import io.sluice.metrics.DirectMemory;
import io.sluice.pooling.CommandPolicy;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.ErrorCode;
import io.sluice.protocol.HandshakeResponse41;
import io.sluice.protocol.HandshakeV10;
import io.sluice.protocol.PacketTooLargeException;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ProtocolException;
import io.sluice.protocol.Scramble;
import io.sluice.protocol.ServerStatus;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The connection phase of a client: admission, the greeting, the HandshakeResponse41, the login back-off and the
 * authentication exchange against Sluice's own users ({@link ClientLogin}). Once the client is who it says, the
 * balancer assigns it a backend and this handler replaces itself in the pipeline with the
 * {@link CommandRelayHandler}, as {@link io.sluice.tls.SslRequestHandler} removes itself after the first packet.
 */
final class ClientHandshakeHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(ClientHandshakeHandler.class);

    /**
     * The largest packet read from a client before it is authenticated, 16 KiB; {@code server.maxPacketSize} (1 GiB
     * by default) applies only once it is. Without it, every unauthenticated connection could make Sluice buffer a
     * frame of 16 MiB. The packets of a login are small: an SSLRequest is 32 bytes; a HandshakeResponse41 is 32 bytes
     * plus a user name (MariaDB: at most 128 characters, 512 bytes), an auth response (at most 512 bytes, an RSA
     * 4096 ciphertext), a schema name (256 bytes), a plugin name and the connection attributes, which drivers fill
     * with some 0.3 to 1 KiB (MySQL keeps 512 bytes of them by default); an auth switch response or an RSA-encrypted
     * password is at most 512 bytes. 16 KiB leaves room for ten times the usual attributes.
     */
    static final int MAX_LOGIN_PACKET = 16 * 1024;
    /** What limits a packet before login, named in the error. */
    static final String LOGIN_LIMIT = "the limit before login";

    private enum Phase {
        /** The greeting went out; the HandshakeResponse41 is due. */
        GREETING_SENT,
        /** The client's address is backing off after failed logins: its login waits for its time slot. */
        THROTTLED,
        /** The login's authentication exchange goes on (auth switch, full authentication, RSA key). */
        AUTHENTICATING,
        /** Logged in, waiting for a backend connection with the requested schema before saying OK. */
        AWAIT_BACKEND,
        /** Handed over to the command relay, or refused. */
        DONE
    }

    private final FrontendContext context;
    private final ClientSecurity security;
    private Channel channel;
    private Phase phase = Phase.GREETING_SENT;
    private ClientSession session;
    private ClientLogin login;
    private ScheduledFuture<?> handshakeTimer;
    /** The command stage, made at login; installed once the OK goes out. */
    private CommandRelayHandler relay;
    private BackendLease lease;
    /** Frames a pipelining client sent before the OK, for the command stage to take in order. */
    private ArrayDeque<ByteBuf> sentBeforeOk;
    /** The sequence id of the client's last packet; -1 before its first. */
    private int lastSequenceId = -1;
    /** The login waits for its turn in the back-off ({@link LoginThrottle#reserve}) and holds its place there. */
    private boolean waitingForTurn;
    /** Bytes the client sent behind its login while that waited for its turn. */
    private int bytesSentWhileThrottled;
    /** users: FROM_BACKEND: this login had the server's accounts read again once (an unknown user, a failure). */
    private boolean readAccountsAgain;

    ClientHandshakeHandler(FrontendContext context, ClientSecurity security) {
        this.context = context;
        this.security = security;
    }

    /** The frame limit a client pipeline starts with: the login's, or {@code maxPacketSize} if that is smaller. */
    static int loginPacketLimit(int maxPacketSize) {
        return Math.min(MAX_LOGIN_PACKET, maxPacketSize);
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        SessionRegistry registry = context.registry();
        if (registry.isClosing()) { // graceful shutdown: a clear refusal rather than a connection that will be cut
            registry.turnedAwayWhileClosing();
            refuse(ClientErrors.shuttingDown(ctx.alloc(), 0));
            return;
        }
        DirectMemoryHeadroom headroom = context.headroom();
        if (!headroom.admitsNewSession()) {
            // Before the registry counts it: a refusal for memory is not a session, and costs the others nothing.
            context.directMemoryWarning().warn("direct memory nearly exhausted ({}): new clients get ERR 1040,"
                    + " the sessions already open keep what is left", headroom.describe());
            refuse(ClientErrors.outOfDirectMemory(ctx.alloc(), headroom.describe()));
            return;
        }
        if (!registry.admit()) {
            refuse(ClientErrors.tooManyConnections(ctx.alloc()));
            return;
        }
        byte[] nonce = Scramble.nonce();
        session = new ClientSession(channel, registry.nextConnectionId(), nonce,
                context.commandObserver(channel.eventLoop()));
        registry.opened(session);
        // CLIENT_SSL is offered in the greeting only: no backend connection carries the client's TLS.
        int capabilities = security.tls() != null
                ? context.capabilities() | Capabilities.CLIENT_SSL : context.capabilities();
        HandshakeV10 greeting = new HandshakeV10(context.serverVersion(), session.connectionId(), nonce, capabilities,
                context.serverInfo().collationId(), ServerStatus.SERVER_STATUS_AUTOCOMMIT,
                Scramble.MYSQL_NATIVE_PASSWORD, context.mariaDbCapabilities());
        ctx.writeAndFlush(greeting.write(ctx.alloc()), ctx.voidPromise());
        scheduleHandshakeTimeout();
        log.debug("client {} connected as #{}", session.remoteAddress(), session.connectionId());
    }

    private void refuse(ByteBuf err) {
        phase = Phase.DONE;
        channel.writeAndFlush(err).addListener(ChannelFutureListener.CLOSE);
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
        if (phase == Phase.GREETING_SENT || phase == Phase.THROTTLED || phase == Phase.AUTHENTICATING) {
            log.debug("client {} #{}: not logged in after {} ms: closing", session.remoteAddress(),
                    session.connectionId(), security.handshakeTimeoutMillis());
            phase = Phase.DONE;
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
        if (phase == Phase.THROTTLED && (bytesSentWhileThrottled += frame.readableBytes()) > MAX_LOGIN_PACKET) {
            // More than a pipelining client sends behind its login: held, it would be memory for nothing.
            frame.release();
            failAndClose(ClientErrors.loginPacketTooLarge(channel.alloc(), nextReplySequenceId(),
                    "packets: " + bytesSentWhileThrottled + " bytes sent while the login waits for its turn"
                    + " (expected: <= " + MAX_LOGIN_PACKET + ")"));
            return;
        }
        if (phase == Phase.AWAIT_BACKEND || phase == Phase.THROTTLED) {
            if (sentBeforeOk == null) {
                sentBeforeOk = new ArrayDeque<>(4);
            }
            sentBeforeOk.add(frame); // a pipelining client: its commands wait for the OK
            return;
        }
        try {
            if (session != null && session.commands().counters() != null) {
                session.commands().counters().bytesIn(frame.readableBytes());
            }
            lastSequenceId = Packets.sequenceId(frame, frame.readerIndex());
            if (phase == Phase.GREETING_SENT) {
                onHandshakeResponse(frame);
            } else if (phase == Phase.AUTHENTICATING) {
                onLoginResult(login.onPacket(Packets.payload(frame), lastSequenceId, channel.alloc()));
            }
        } finally {
            frame.release();
        }
    }

    private void onHandshakeResponse(ByteBuf frame) {
        int sequenceId = Packets.sequenceId(frame, frame.readerIndex());
        // The greeting is packet 0; the response is 1, or 2 behind an SSLRequest. MySQL and MariaDB refuse any other.
        int expected = session.isSecure() ? 2 : 1;
        if (sequenceId != expected) {
            log.debug("client {}: handshake response with sequence id {} (expected: {})", session.remoteAddress(),
                    sequenceId, expected);
            failAndClose(ClientErrors.packetsOutOfOrder(channel.alloc(), expected + 1));
            return;
        }
        HandshakeResponse41 handshake;
        try {
            handshake = HandshakeResponse41.parse(Packets.payload(frame));
        } catch (ProtocolException e) {
            log.debug("client {}: bad handshake response: {}", session.remoteAddress(), e.getMessage());
            failAndClose(ClientErrors.badHandshake(channel.alloc(), sequenceId + 1, e.getMessage()));
            return;
        }
        session.handshake(handshake);
        if (security.requireSecureTransport() && !session.isSecure()) {
            failAndClose(ClientErrors.secureTransportRequired(channel.alloc(), sequenceId + 1));
            return;
        }
        // The handshake timer keeps running while the login waits: a throttled connection holds its slot in
        // server.maxConnections no longer than any other, and one that would time out before its turn is refused now.
        long maxWait = handshakeTimer != null ? handshakeTimer.getDelay(TimeUnit.MILLISECONDS) : Long.MAX_VALUE;
        long delay = security.throttle().reserve(session.handshake().user(), session.clientAddress(), maxWait);
        if (delay == LoginThrottle.REFUSED) {
            log.debug("client {}: login refused, its address backs off after failed logins", session.remoteAddress());
            failAndClose(ClientErrors.loginThrottled(channel.alloc(), sequenceId + 1, session.clientAddress()));
            return;
        }
        if (delay > 0) {
            log.debug("client {}: login delayed {} ms after failed logins from its address", session.remoteAddress(),
                    delay);
            phase = Phase.THROTTLED;
            waitForTurn(sequenceId, delay);
            return;
        }
        startLogin(sequenceId);
    }

    /** Checks the login once its turn comes; a failure checked meanwhile may move the turn further. */
    private void waitForTurn(int sequenceId, long delay) {
        waitingForTurn = true;
        channel.eventLoop().schedule(() -> {
            if (phase != Phase.THROTTLED || !channel.isActive()) {
                return; // closed meanwhile: channelInactive gave up its place
            }
            long more = security.throttle().admit(session.handshake().user(), session.clientAddress());
            if (more > 0) {
                waitForTurn(sequenceId, more);
                return;
            }
            waitingForTurn = false;
            // What a pipelining client sent behind its login waits in sentBeforeOk for the OK, as in AWAIT_BACKEND: it
            // can only be commands, since no client answers an auth switch before it has seen it.
            startLogin(sequenceId);
        }, delay, TimeUnit.MILLISECONDS);
    }

    private void startLogin(int sequenceId) {
        HandshakeResponse41 handshake = session.handshake();
        ProxyUsers.Account account = context.users().find(handshake.user(), session.clientAddress());
        ServerAccounts server = context.serverAccounts();
        if (account == null && server != null && !readAccountsAgain) {
            // users: FROM_BACKEND and a user Sluice has not read (yet): read again (rate limited), then check.
            readAccountsAgain = true;
            phase = Phase.THROTTLED; // what a pipelining client sends meanwhile waits, as behind the back-off
            server.refreshSoon().whenComplete((done, error) -> channel.eventLoop().execute(() -> {
                if (phase == Phase.THROTTLED && channel.isActive()) {
                    startLogin(sequenceId);
                }
            }));
            return;
        }
        login = new ClientLogin(account, session.nonce(),
                session.isSecure(), security.rsa(),
                Capabilities.has(handshake.capabilities(), Capabilities.CLIENT_PLUGIN_AUTH));
        phase = Phase.AUTHENTICATING;
        onLoginResult(login.start(handshake.authPluginName(), handshake.authResponse(), sequenceId, channel.alloc()));
    }

    private void onLoginResult(ClientLogin.Result result) {
        ByteBuf reply = login.takeReply();
        switch (result) {
            case CONTINUE:
                channel.writeAndFlush(reply, channel.voidPromise());
                return;
            case FAILURE:
                if (reply != null) {
                    reply.release();
                }
                if (login.mayRecheck() && !readAccountsAgain) {
                    recheckAfterReading();
                    return;
                }
                security.throttle().failed(session.handshake().user(), session.clientAddress());
                log.debug("client {}: access denied for '{}'", session.remoteAddress(), session.user());
                if (login.failure() == ErrorCode.ER_ACCESS_DENIED_ERROR) {
                    context.registry().authenticationFailed(); // metrics
                }
                failAndClose(ClientErrors.loginFailed(channel.alloc(), login, session.user(),
                        session.clientAddress()));
                return;
            default:
                if (reply != null) {
                    channel.write(reply, channel.voidPromise()); // fast_auth_success: the OK follows
                }
                security.throttle().succeeded(session.handshake().user(), session.clientAddress());
                loggedIn();
        }
    }

    /**
     * A server account's password did not check: it may have changed on the server since the last reading. The
     * accounts are read again (rate limited) and the same scramble checked against the account as read now, as the
     * server would check it.
     */
    private void recheckAfterReading() {
        readAccountsAgain = true;
        phase = Phase.THROTTLED;
        context.serverAccounts().refreshSoon().whenComplete((done, error) -> channel.eventLoop().execute(() -> {
            if (phase == Phase.THROTTLED && channel.isActive() && login != null) {
                phase = Phase.AUTHENTICATING;
                onLoginResult(login.recheck(context.users().find(session.handshake().user(),
                        session.clientAddress())));
            }
        }));
    }

    /** The password checked out: count the session for its account, then go on as the account's session. */
    private void loggedIn() {
        cancelHandshakeTimer();
        // Authenticated: from the next header on, the client's packets may be as large as server.maxPacketSize, and
        // the frames of its commands must each arrive within the net read timeout (the handshake timer is gone).
        PacketFrameDecoder frames = channel.pipeline().get(PacketFrameDecoder.class);
        frames.limit(context.config().server().maxPacketSize(), "server.maxPacketSize");
        frames.readTimeout(security.netReadTimeoutMillis());
        int okSequenceId = login.resultSequenceId();
        if (!session.switchAccount(login.account())) {
            failAndClose(ClientErrors.userLimitReached(channel.alloc(), okSequenceId, login.account()));
            return;
        }
        session.loggedIn(session.user(), login.plugin());
        BackendAccount backendAccount = login.backendAccount();
        login = null;
        if (context.registry().isClosing()) {
            failAndClose(ClientErrors.shuttingDown(channel.alloc(), okSequenceId));
            return;
        }
        HandshakeResponse41 handshake = session.handshake();
        int capabilities = handshake.capabilities() & context.capabilities();
        // A read/write split session runs on transaction pooling whatever the mode (decision 101).
        boolean multiplexed = context.pooling().transactionPooling()
                || context.readWriteGroup(handshake.database()) != null;
        if (multiplexed) {
            // Transaction pooling follows session state through the server's trackers, so every backend connection
            // negotiates them whatever the client did; the client is shown OK packets in its own format
            // (OkRewriter), and its sessions share one pool.
            capabilities |= context.capabilities() & Capabilities.CLIENT_SESSION_TRACK;
        }
        // The account is part of the key: the session's connections are its account's, chosen here once (decision 145).
        session.key(new SessionKey(capabilities, handshake.collationId(),
                handshake.mariaDbCapabilities() & context.mariaDbCapabilities(), backendAccount));
        session.schema(handshake.database(), handshake.database());
        BackendLease lease = new BackendLease(context, session);
        if (!lease.assign()) {
            failAndClose(ClientErrors.noBackend(channel.alloc(), okSequenceId, context.group().describeUnavailable()));
            return;
        }
        // The schema is checked by the server at login (so that 1049 comes then), unless there is none, or an earlier
        // login found it (transaction pooling: the first statement then takes a connection, and a schema dropped in
        // between is reported on that statement instead).
        String schema = session.schema();
        boolean followsState = CommandPolicy.followsState(multiplexed, session.key());
        boolean checkSchema = schema != null
                && !(followsState && lease.backendPool().knownSchemas().contains(schema));
        relay = new CommandRelayHandler(context, security, session, lease);
        this.lease = lease;
        if (!checkSchema) {
            enterCommandPhase(okSequenceId);
            return;
        }
        phase = Phase.AWAIT_BACKEND;
        lease.acquire(connection -> {
            if (phase == Phase.AWAIT_BACKEND) {
                if (followsState) {
                    lease.backendPool().knownSchemas().seen(schema);
                }
                enterCommandPhase(okSequenceId);
            }
        }, cause -> {
            log.debug("client {}: no backend connection: {}", session.remoteAddress(), cause.toString());
            failAndClose(lease.acquireFailed(channel.alloc(), okSequenceId, cause));
        }, () -> channel.config().setAutoRead(false)); // the relay reads again once it starts
    }

    /** The login is complete: the command stage takes this stage's place, and says OK. */
    private void enterCommandPhase(int okSequenceId) {
        phase = Phase.DONE;
        session.relay(relay);
        channel.pipeline().replace(this, "commands", relay);
        channel.pipeline().addAfter("commands", "closing", relay.closing());
        ArrayDeque<ByteBuf> pipelined = sentBeforeOk;
        sentBeforeOk = null;
        relay.start(okSequenceId, pipelined);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        phase = Phase.DONE;
        cancelHandshakeTimer();
        if (waitingForTurn) {
            waitingForTurn = false;
            // its turn is not used up: the next login's wait
            security.throttle().abandon(session.handshake().user(), session.clientAddress());
        }
        if (login != null) {
            login.discard();
            login = null;
        }
        if (sentBeforeOk != null) {
            sentBeforeOk.forEach(ByteBuf::release);
            sentBeforeOk = null;
        }
        if (lease != null) {
            lease.end(); // left while its schema was being checked
        }
        if (session != null) { // admitted
            session.releaseAccount();
            context.registry().closed(session);
            log.debug("client {} #{} disconnected during login", session.remoteAddress(), session.connectionId());
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof ProxyProtocolHandler.ProxiedAddress proxied) {
            if (session != null) {
                log.debug("client {} #{} is {}, by its PROXY protocol header", channel.remoteAddress(),
                        session.connectionId(), proxied.address());
                session.proxiedAddress(proxied.address());
            }
            return;
        }
        if (!(event instanceof io.netty.handler.timeout.IdleStateEvent)) { // idle during login: the timer's business
            ctx.fireUserEventTriggered(event);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof PacketTooLargeException) {
            log.debug("client {}: {}", clientForLog(), root.getMessage());
            failAndClose(phase == Phase.AWAIT_BACKEND // logged in: a command over server.maxPacketSize
                    ? ClientErrors.packetTooLarge(channel.alloc(), nextReplySequenceId(), root.getMessage())
                    : ClientErrors.loginPacketTooLarge(channel.alloc(), nextReplySequenceId(), root.getMessage()));
            return;
        }
        if (DirectMemory.ranOut(root)) {
            context.directMemoryWarning().warn("direct memory exhausted, closing client {} in its login: {}",
                    clientForLog(), root.toString());
        } else {
            log.debug("client {}: closing after error: {}", clientForLog(), root.toString());
        }
        ctx.close();
    }

    /**
     * The sequence id of an ERR answering the packet the client is sending. Before its first, that is the
     * HandshakeResponse41 (1, or 2 behind an SSLRequest); later in the exchange, the packet after Sluice's answer to
     * its last one. The connection closes after the ERR, so the client needs it only to read the error.
     */
    private int nextReplySequenceId() {
        if (lastSequenceId >= 0) {
            return lastSequenceId + 2;
        }
        return session != null && session.isSecure() ? 3 : 2;
    }

    private void failAndClose(ByteBuf err) {
        phase = Phase.DONE;
        channel.writeAndFlush(err).addListener(ChannelFutureListener.CLOSE);
    }

    /** The client's address for a log line, also before the session exists. */
    private Object clientForLog() {
        return session != null ? session.remoteAddress() : channel != null ? channel.remoteAddress() : null;
    }
}
