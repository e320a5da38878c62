package io.sluice.frontend;

import io.netty.channel.Channel;

/**
 * Whether a session's client channel is read: reading stops while any reason to stop holds (a connection being
 * awaited, the backend socket full, a move under way) and resumes when none is left. Not per frame: the relay
 * stops or resumes reading only when one of these begins or ends. On the session's loop.
 */
final class ClientReading {
    /** A connection is being acquired for the held commands. */
    static final int ACQUIRING = 1;
    /** The backend connection's socket is over its high-water mark (a large upload). */
    static final int BACKEND_FULL = 2;
    /** Session pooling: a move reads the session's state and swaps its connection. */
    static final int MOVING = 4;
    /** A statement waits for its turn under a query rule's rate ({@code maxPerSecond}). */
    static final int WAITING_FOR_TURN = 8;

    private final CommandRelayHandler relay;
    private final Channel channel;
    private int reasons;

    ClientReading(CommandRelayHandler relay, Channel channel) {
        this.relay = relay;
        this.channel = channel;
    }

    /** Stops reading the client for {@code reason}. */
    void suspend(int reason) {
        reasons |= reason;
        channel.config().setAutoRead(false);
    }

    /** {@code reason} no longer holds: reading resumes if no other does and the session is not closed. */
    void resume(int reason) {
        reasons &= ~reason;
        if (reasons == 0 && !relay.isClosed()) {
            channel.config().setAutoRead(true);
        }
    }
}
