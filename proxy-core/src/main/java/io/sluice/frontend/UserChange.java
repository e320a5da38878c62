package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.pooling.CommandPolicy;
import io.sluice.protocol.ComChangeUser;
import io.sluice.protocol.Packets;
import io.sluice.protocol.ServerStatus;

/**
 * COM_CHANGE_USER's place in a session's command stream. It starts once the commands before it are answered (a
 * pipelining client's frames wait in the held commands meanwhile, as a server answers in order); its exchange
 * ({@link ChangeUser}) runs in a pipeline stage of its own; when it succeeds the session starts afresh as the new
 * user: the old backend connection goes back to be reset, the policy forgets, and the OK goes out once a connection
 * for the new schema is ready. One per command relay, on its event loop.
 */
final class UserChange implements ChangeUser.Outcome {
    private final CommandRelayHandler relay;
    private final ClientSession session;
    private final ClientSecurity security;
    private final FrontendContext context;
    private final BackendLease lease;
    private final CaptureHook capture;
    private final CommandPolicy policy;
    private final Channel channel;

    UserChange(CommandRelayHandler relay, ClientSession session, ClientSecurity security, FrontendContext context,
            BackendLease lease, CaptureHook capture, CommandPolicy policy) {
        this.relay = relay;
        this.session = session;
        this.security = security;
        this.context = context;
        this.lease = lease;
        this.capture = capture;
        this.policy = policy;
        this.channel = session.channel();
    }

    /** A COM_CHANGE_USER frame (taken) arrived: it starts now, or waits behind the commands before it. */
    void requested(ByteBuf frame) {
        if (!relay.isQuiet() || !relay.isBetweenResponses()) {
            // A pipelining client: the commands before it are answered first, on the old user's connection, as a
            // server does. Started now, it would let that connection go (or start a second acquire beside the one
            // under way, leaving the first connection bound to nobody).
            relay.held().addChangeUser(frame);
            return;
        }
        start(frame);
    }

    /**
     * A held COM_CHANGE_USER's turn came (frame taken).
     *
     * @param answered whether Sluice's own answers to earlier commands were written, to be flushed before it
     * @return whether the relay goes on sending what was held behind it (the exchange ended at once; the new user's
     *     commands then have a connection coming)
     */
    boolean resumed(ByteBuf frame, boolean answered) {
        if (answered) {
            channel.flush();
        }
        start(frame);
        if (relay.isCommandPhase()) {
            if (lease.connection() == null && !relay.held().isEmpty() && !lease.isAcquiring()) {
                relay.acquire(); // the new user's commands need one
            }
            return true;
        }
        if (relay.isChangingUser() && !relay.held().isEmpty()) {
            // Frames sent before the exchange's first answer: not the client's part of it. The exchange's stage lets
            // go of its login when the channel closes.
            relay.failAndClose(ClientErrors.packetsOutOfOrder(channel.alloc(), relay.held().peek().replySequenceId()));
        }
        return false;
    }

    /** The exchange takes the client's packets, in a pipeline stage of its own, until it ends. */
    private void start(ByteBuf frame) {
        try {
            relay.changingUser();
            ChangeUser exchange = ChangeUser.start(frame, session, security, context, this);
            if (exchange != null && relay.isChangingUser()) {
                channel.pipeline().addBefore("commands", "changeUser", exchange);
            }
        } finally {
            frame.release();
        }
    }

    @Override
    public void failed(ByteBuf err) {
        relay.failAndClose(err);
    }

    /** The new user starts with a fresh session: the old backend connection goes back to be reset. */
    @Override
    public void changed(ComChangeUser request, int okSequenceId) {
        relay.commandPhase();
        session.schema(request.database(), context.resolveSchema(request.database(), lease.dataSource()));
        capture.changedUser(lease.connection(), session.user(), session.requestedSchema());
        policy.forget();
        lease.release();
        if (session.schema() == null) {
            relay.reply(Packets.ok(channel.alloc(), okSequenceId, ServerStatus.SERVER_STATUS_AUTOCOMMIT));
            return;
        }
        // The OK waits until the new user's session can work.
        lease.acquire(connection -> {
            if (!relay.isClosed()) {
                relay.reply(Packets.ok(channel.alloc(), okSequenceId, ServerStatus.SERVER_STATUS_AUTOCOMMIT));
            }
            relay.bound(connection);
        }, cause -> relay.acquireFailed(cause, okSequenceId), relay.onWaiting);
    }
}
