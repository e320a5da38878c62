package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.ComChangeUser;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ProtocolException;

/**
 * COM_CHANGE_USER in the command phase: the same authentication exchange as a login ({@link ClientLogin}), over the
 * greeting's nonce, after which the session starts afresh as the new user. One instance per request; the command
 * relay hands it the client's packets until it ends.
 */
final class ChangeUser {

    /** How the request ends. Exactly one of these is called, once. */
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
    private final ClientLogin login;
    private final Outcome outcome;

    private ChangeUser(ClientSession session, ClientSecurity security, FrontendContext context,
            ComChangeUser request, ClientLogin login, Outcome outcome) {
        this.session = session;
        this.security = security;
        this.context = context;
        this.request = request;
        this.login = login;
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
        ClientLogin login = new ClientLogin(context.users().find(request.user(), session.clientAddress()),
                session.nonce(),
                session.isSecure(), security.rsa(),
                Capabilities.has(session.handshake().capabilities(), Capabilities.CLIENT_PLUGIN_AUTH));
        ChangeUser exchange = new ChangeUser(session, security, context, request, login, outcome);
        return exchange.on(login.start(plugin, request.authResponse(), sequenceId, channel.alloc())) ? exchange : null;
    }

    /**
     * A further packet of the exchange (borrowed).
     *
     * @return whether the exchange goes on
     */
    boolean onPacket(ByteBuf frame) {
        int sequenceId = Packets.sequenceId(frame, frame.readerIndex());
        return on(login.onPacket(Packets.payload(frame), sequenceId, session.channel().alloc()));
    }

    /** The connection closed mid-exchange. */
    void discard() {
        login.discard();
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
                security.throttle().failed(session.clientAddress());
                if (login.failure() == io.sluice.protocol.ErrorCode.ER_ACCESS_DENIED_ERROR) {
                    context.registry().authenticationFailed(); // metrics
                }
                outcome.failed(ClientErrors.loginFailed(channel.alloc(), login.resultSequenceId(), login.failure(),
                        request.user(), session.clientAddress(), login.usedPassword()));
                return false;
            default:
                if (reply != null) {
                    channel.write(reply, channel.voidPromise()); // fast_auth_success: the OK follows
                }
                security.throttle().succeeded(session.clientAddress());
                if (!session.switchAccount(login.account())) {
                    outcome.failed(ClientErrors.userLimitReached(channel.alloc(), login.resultSequenceId(),
                            login.account()));
                    return false;
                }
                session.loggedIn(request.user(), login.plugin());
                outcome.changed(request, login.resultSequenceId());
                return false;
        }
    }
}
