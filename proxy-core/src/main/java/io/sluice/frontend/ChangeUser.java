package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.sluice.backend.SessionKey;
import io.sluice.metrics.LoopCounters;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.ComChangeUser;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ProtocolException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * COM_CHANGE_USER in the command phase: the same authentication exchange as a login ({@link ClientLogin}), over the
 * greeting's nonce, after which the session starts afresh as the new user. It is a password check like a login, so
 * it takes its turn in the login back-off ({@link LoginThrottle}) the same way: without that, one logged-in session
 * could try passwords of other users as fast as it can send. With {@code users: FROM_BACKEND} it reads the server's
 * accounts again exactly as a login does (an unknown user, a password failing against the last reading: within
 * {@code minRefreshIntervalMilliseconds}), so an account created or changed on the server is switched to without a
 * restart. One instance per request, a pipeline stage before the command relay that takes the client's packets until
 * the exchange ends, then removes itself.
 */
final class ChangeUser extends ChannelInboundHandlerAdapter {

    /** How the request ends. Exactly one of these is called, once (the command relay is the outcome). */
    interface Outcome {
        /**
         * The new user is authenticated and counted: the session becomes theirs; OK goes at {@code okSequenceId}
         * once it can work.
         */
        void changed(ComChangeUser request, int okSequenceId);

        /** The request failed: the ERR (taken) goes out and the session closes. */
        void failed(ByteBuf err);
    }

    private final ClientSession session;
    private final ClientSecurity security;
    private final FrontendContext context;
    private final ComChangeUser request;
    private final Outcome outcome;
    /** Made when the request's turn comes, from the users as read then; {@code null} before. */
    private ClientLogin login;
    /** The request waits for its turn in the login back-off. */
    private boolean waitingForTurn;
    /** The request waits for the server's accounts to be read again ({@code users: FROM_BACKEND}). */
    private boolean waitingForAccounts;
    /** The accounts were read again for this request once already: never twice. */
    private boolean readAccountsAgain;

    private ChangeUser(ClientSession session, ClientSecurity security, FrontendContext context,
            ComChangeUser request, Outcome outcome) {
        this.session = session;
        this.security = security;
        this.context = context;
        this.request = request;
        this.outcome = outcome;
    }

    /**
     * Starts the exchange for a COM_CHANGE_USER frame (borrowed).
     *
     * @return the exchange, or {@code null} when it already ended (the outcome was told)
     */
    static ChangeUser start(ByteBuf frame, ClientSession session, ClientSecurity security, FrontendContext context,
            Outcome outcome) {
        Channel channel = session.channel();
        int sequenceId = Packets.sequenceId(frame, frame.readerIndex());
        ComChangeUser request;
        try {
            request = ComChangeUser.parse(Packets.payload(frame), session.handshake().capabilities());
        } catch (ProtocolException e) {
            outcome.failed(ClientErrors.badChangeUser(channel.alloc(), sequenceId + 1, e.getMessage()));
            return null;
        }
        // The same exchange as a login, over the greeting's nonce: a switch, a full authentication may follow.
        String plugin = request.authPluginName() != null ? request.authPluginName() : session.authPlugin();
        ChangeUser exchange = new ChangeUser(session, security, context, request, outcome);
        // As at login, the wait for a turn is bounded by the handshake timeout: the request is a login.
        long maxWait = security.handshakeTimeoutMillis() > 0 ? security.handshakeTimeoutMillis() : Long.MAX_VALUE;
        long delay = security.throttle().reserve(request.user(), session.clientAddress(), maxWait);
        if (delay == LoginThrottle.REFUSED) {
            outcome.failed(ClientErrors.loginThrottled(channel.alloc(), sequenceId + 1, session.clientAddress()));
            return null;
        }
        if (delay > 0) {
            exchange.waitForTurn(plugin, sequenceId, delay);
            return exchange;
        }
        return exchange.begin(plugin, sequenceId) ? exchange : null;
    }

    /** Checks the request once its turn comes; a failure checked meanwhile may move the turn further. */
    private void waitForTurn(String plugin, int sequenceId, long delay) {
        waitingForTurn = true;
        Channel channel = session.channel();
        channel.eventLoop().schedule(() -> {
            if (!waitingForTurn || !channel.isActive()) {
                return; // discarded meanwhile
            }
            long more = security.throttle().admit(request.user(), session.clientAddress());
            if (more > 0) {
                waitForTurn(plugin, sequenceId, more);
                return;
            }
            waitingForTurn = false;
            endedUnlessGoingOn(begin(plugin, sequenceId));
        }, delay, TimeUnit.MILLISECONDS);
    }

    /** After an asynchronous step: an exchange that ended gives the client's packets back to the relay. */
    private void endedUnlessGoingOn(boolean goesOn) {
        Channel channel = session.channel();
        if (!goesOn && channel.pipeline().context(this) != null) {
            channel.pipeline().remove(this); // ended at once: the relay takes the client's packets again
        }
    }

    /** @return whether the exchange goes on */
    private boolean begin(String plugin, int sequenceId) {
        ProxyUsers.Account account = context.users().find(request.user(), session.clientAddress());
        ServerAccounts server = context.serverAccounts();
        if (account == null && server != null && !readAccountsAgain) {
            // users: FROM_BACKEND and a user Sluice has not read (yet): read again (rate limited), then check, as a
            // login does.
            afterReading(server, () -> begin(plugin, sequenceId));
            return true;
        }
        login = new ClientLogin(account, session.nonce(), session.isSecure(), security.rsa(),
                Capabilities.has(session.handshake().capabilities(), Capabilities.CLIENT_PLUGIN_AUTH));
        return on(login.start(plugin, request.authResponse(), sequenceId, session.channel().alloc()));
    }

    /**
     * Reads the server's accounts again (within the rate limit), then goes on with {@code next} on the event loop,
     * unless the connection closed meanwhile.
     */
    private void afterReading(ServerAccounts server, BooleanSupplier next) {
        readAccountsAgain = true;
        waitingForAccounts = true;
        Channel channel = session.channel();
        server.refreshSoon().whenComplete((done, error) -> channel.eventLoop().execute(() -> {
            if (!waitingForAccounts || !channel.isActive()) {
                return; // discarded meanwhile
            }
            waitingForAccounts = false;
            endedUnlessGoingOn(next.getAsBoolean());
        }));
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        LoopCounters counters = session.commands().counters();
        if (counters != null) {
            counters.bytesIn(frame.readableBytes());
        }
        try {
            if (!onPacket(frame)) {
                ctx.pipeline().remove(this);
            }
        } finally {
            frame.release();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        discard();
        ctx.fireChannelInactive();
    }

    /**
     * A further packet of the exchange (borrowed).
     *
     * @return whether the exchange goes on
     */
    private boolean onPacket(ByteBuf frame) {
        int sequenceId = Packets.sequenceId(frame, frame.readerIndex());
        if (waitingForTurn || waitingForAccounts) {
            // The client has nothing to say before it has an answer.
            discard();
            outcome.failed(ClientErrors.packetsOutOfOrder(session.channel().alloc(), sequenceId + 1));
            return false;
        }
        return on(login.onPacket(Packets.payload(frame), sequenceId, session.channel().alloc()));
    }

    /** The connection closed mid-exchange. */
    private void discard() {
        if (waitingForTurn) {
            waitingForTurn = false;
            security.throttle().abandon(request.user(), session.clientAddress()); // its turn is not used up
        }
        waitingForAccounts = false;
        if (login != null) {
            login.discard();
        }
    }

    private boolean on(ClientLogin.Result result) {
        Channel channel = session.channel();
        ByteBuf reply = login.takeReply();
        switch (result) {
            case CONTINUE:
                channel.writeAndFlush(reply, channel.voidPromise());
                return true;
            case FAILURE:
                if (reply != null) {
                    reply.release();
                }
                if (login.mayRecheck() && !readAccountsAgain) {
                    // A server account's password may have changed since the last reading: the same scramble is
                    // checked again against the account as read now, as a login's is.
                    afterReading(context.serverAccounts(), () -> on(login.recheck(
                            context.users().find(request.user(), session.clientAddress()))));
                    return true;
                }
                login.discard(); // a password kept for the re-check is zeroed
                security.throttle().failed(request.user(), session.clientAddress());
                if (login.failure() == io.sluice.protocol.ErrorCode.ER_ACCESS_DENIED_ERROR) {
                    context.registry().authenticationFailed(); // metrics
                }
                outcome.failed(ClientErrors.loginFailed(channel.alloc(), login, request.user(),
                        session.clientAddress()));
                return false;
            default:
                if (reply != null) {
                    channel.write(reply, channel.voidPromise()); // fast_auth_success: the OK follows
                }
                security.throttle().succeeded(request.user(), session.clientAddress());
                if (!session.switchAccount(login.account())) {
                    outcome.failed(ClientErrors.userLimitReached(channel.alloc(), login.resultSequenceId(),
                            login.account()));
                    return false;
                }
                session.loggedIn(request.user(), login.plugin());
                // The new user's connections are its own account's: the old connection goes back (UserChange), and
                // the next is taken with this key, never one of the previous account. The request's character set
                // is the new session's, as a server takes it (libmysqlclient sends the one mysql_set_character_set
                // chose); one a handshake cannot name (above 255) leaves the handshake's.
                SessionKey key = session.key();
                int collation = request.collationId() > 0 && request.collationId() <= 0xFF ? request.collationId()
                        : key.collationId();
                session.key(new SessionKey(key.capabilities(), collation, key.mariaDbCapabilities(),
                        login.backendAccount()));
                outcome.changed(request, login.resultSequenceId());
                return false;
        }
    }
}
