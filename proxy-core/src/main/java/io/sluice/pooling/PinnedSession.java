package io.sluice.pooling;

/**
 * Transaction pooling for a client that did not negotiate CLIENT_SESSION_TRACK: the server would report nothing of its
 * session state, so it keeps its connection for life, as in session pooling, and says why
 * ({@link PinReason#NO_SESSION_TRACK}).
 */
public final class PinnedSession implements CommandPolicy {

    public PinnedSession(SessionPort port) {
        port.pinned(PinReason.NO_SESSION_TRACK);
    }

    @Override
    public io.netty.buffer.ByteBuf onCommand(int command, io.netty.buffer.ByteBuf frame) {
        return frame;
    }

    @Override
    public PinReason pinnedBy() {
        return PinReason.NO_SESSION_TRACK;
    }
}
