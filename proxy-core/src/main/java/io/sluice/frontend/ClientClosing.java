package io.sluice.frontend;

import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.timeout.IdleStateEvent;
import io.sluice.backend.BackendConnection;
import io.sluice.codec.NetReadTimeoutException;
import io.sluice.metrics.DirectMemory;
import io.sluice.metrics.RateLimitedWarning;
import io.sluice.pooling.PinReason;
import io.sluice.protocol.Command;
import io.sluice.protocol.PacketTooLargeException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the command phase ends other than by the client's COM_QUIT or its hang-up: a frame over
 * {@code server.maxPacketSize}, a half-sent packet that stalls ({@code netReadTimeout}), a client idle past
 * {@code idleTimeout}, a command frame out of order, direct memory running out, any other error, and Sluice's
 * graceful shutdown. Each fault gets the ERR a MySQL server would send when it can reach the client in order, then
 * a close; a shutdown closes the session at its first idle moment outside a transaction. It sits right after the {@link CommandRelayHandler} in the
 * pipeline (the relay lets these events pass), so the relay's file holds the path commands take.
 */
final class ClientClosing extends ChannelInboundHandlerAdapter {

    private static final Logger log = LoggerFactory.getLogger(CommandRelayHandler.class);
    /**
     * A lost backend connection: a server's death, or a client's doing (a command that makes the server hang up).
     * A fuzzing client can cause one a connection, so they are rate-limited.
     */
    private static final RateLimitedWarning lostBackendWarning = new RateLimitedWarning(log);

    private final CommandRelayHandler relay;
    private final ClientSession session;
    private final FrontendContext context;
    private final long idleTimeoutMillis;

    ClientClosing(CommandRelayHandler relay, ClientSession session, FrontendContext context,
            long idleTimeoutMillis) {
        this.relay = relay;
        this.session = session;
        this.context = context;
        this.idleTimeoutMillis = idleTimeoutMillis;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
        if (event instanceof IdleStateEvent) {
            // Only a session waiting for its client's next command is idle; one whose query runs is not.
            if (relay.isWaitingForCommand()) {
                log.debug("client {} #{}: idle for {} ms: closing", session.remoteAddress(), session.connectionId(),
                        idleTimeoutMillis);
                relay.failAndClose(ClientErrors.idleTimeout(ctx.alloc()));
            }
            return;
        }
        ctx.fireUserEventTriggered(event);
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        Throwable root = cause instanceof DecoderException && cause.getCause() != null ? cause.getCause() : cause;
        if (root instanceof PacketTooLargeException) {
            relay.failAndClose(ClientErrors.packetTooLarge(ctx.alloc(), relay.replySequenceId(), root.getMessage()));
            return;
        }
        if (root instanceof NetReadTimeoutException) {
            log.debug("client {} #{}: {}: closing", session.remoteAddress(), session.connectionId(),
                    root.getMessage());
            if (relay.isBetweenResponses()) {
                relay.failAndClose(ClientErrors.netReadTimeout(ctx.alloc(), relay.replySequenceId()));
            } else {
                ctx.close(); // an earlier command's response is being relayed: an ERR would land inside it
            }
            return;
        }
        if (DirectMemory.ranOut(root)) {
            context.directMemoryWarning().warn("direct memory exhausted, closing client {} #{}: {}",
                    session.remoteAddress(), session.connectionId(), root.toString());
        } else {
            log.debug("client {}: closing after error: {}", session.remoteAddress(), root.toString());
        }
        ctx.close();
    }

    /** A command frame whose sequence id is not 0: the server's answer to it, then the connection closes. */
    void outOfOrder(int sequenceId) {
        log.debug("client {}: command frame with sequence id {}: closing", session.remoteAddress(), sequenceId);
        if (relay.held().isEmpty() && relay.isBetweenResponses()) {
            relay.failAndClose(ClientErrors.packetsOutOfOrder(session.channel().alloc(), sequenceId + 1));
        } else {
            relay.closeNow(); // an ERR now would land inside a response still being relayed
        }
    }

    /** Graceful shutdown asked for the session to close: closes it now if it is idle outside a transaction. */
    void closeIfIdle() {
        if (!relay.isCommandPhase() || !session.channel().isActive() || !isIdleOutsideTransaction()) {
            return;
        }
        log.debug("client {} #{}: closed for shutdown, idle outside a transaction", session.remoteAddress(),
                session.connectionId());
        // Behind whatever the relay has written: the last response reaches the client before the close.
        relay.failAndClose(Unpooled.EMPTY_BUFFER);
    }

    /**
     * Why a session-pooling session was still on the backend it lost, when it had been asked to move and refused
     * (decision 104; {@code metadata_differs}, issue #31): the client's error says so. Empty otherwise.
     */
    private String stayedFor() {
        SessionHandover handover = relay.lease().moves().handover();
        PinReason pin = handover == null ? null : handover.refusedFor();
        return pin == null ? "" : "; the session had stayed on it when asked to move (" + pin.label() + ")";
    }

    /** No command outstanding, nothing half sent, and the server reports no open transaction. */
    private boolean isIdleOutsideTransaction() {
        if (!relay.isQuiet()) {
            return false;
        }
        BackendConnection connection = relay.lease().connection();
        return connection == null || (connection.isBetweenCommands() && !connection.tracker().inTransaction());
    }

    /**
     * The session's backend connection was lost. A client that already has part of a response is closed (only a
     * close is honest then); one whose command is unanswered gets an ERR and a close; an idle one hears of it at its
     * next command, as it would of a server's death.
     *
     * @param lastCommand the command byte of the client's last command, -1 for none
     * @return the message for the client's next command, or {@code null} when the session is closing already
     */
    String backendLost(BackendConnection lost, boolean responseStarted, int lastCommand) {
        String message = ClientErrors.lostBackendMessage(lost) + stayedFor();
        boolean answered = lost.tracker().isIdle();
        // What the client did last goes with it: a server that hangs up right after a client's command may have
        // been answering that command, not dying.
        lostBackendWarning.warn("client {}: {}, its last command {} {}", session.remoteAddress(), message,
                lastCommand < 0 ? "none" : Command.name(lastCommand), answered ? "answered" : "unanswered");
        if (responseStarted) {
            session.channel().close();
            return null;
        }
        if (!answered) {
            relay.failAndClose(ClientErrors.lostBackend(session.channel().alloc(), relay.replySequenceId(), message,
                    true));
            return null;
        }
        return message;
    }
}
