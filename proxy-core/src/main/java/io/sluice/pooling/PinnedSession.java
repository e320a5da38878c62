package io.sluice.pooling;

/**
 * Transaction pooling on a server that does not offer CLIENT_SESSION_TRACK: it would report nothing of a session's
 * state, so each session keeps its connection for life, as in session pooling, and says why
 * ({@link PinReason#NO_SESSION_TRACK}). Every current MySQL, MariaDB and TiDB server offers it.
 */
public final class PinnedSession implements CommandPolicy {

    private final SessionPort port;

    public PinnedSession(SessionPort port) {
        this.port = port;
        port.pinned(PinReason.NO_SESSION_TRACK);
        port.pinChanged(null, PinReason.NO_SESSION_TRACK);
    }

    @Override
    public void sessionEnded() {
        port.pinChanged(PinReason.NO_SESSION_TRACK, null);
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
