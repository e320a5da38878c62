package io.sluice.relay;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.ServerStatus;

/**
 * What a {@link ResponseTracker} reads of the session state the server reports, for transaction pooling: the OK
 * packets that answer statements, the payloads of those that carry session state (copied as they stream past), the
 * warning counts, and where an {@link OkRewriter} must cut such packets out of the relayed stream. The tracker
 * follows the shape of responses; this {@link ResponseWatch watch} follows what they say about the session, only
 * while {@link #follow(boolean) asked to}. One per tracker ({@link ResponseTracker#sessionState()}), on its event
 * loop.
 */
public final class StateReading implements ResponseWatch {

    private final SessionStateListener listener;
    private final ResponseWatches watches;
    private final ResponsePacket packet;
    /** Off in SESSION pooling: the tracker then pays nothing for this. */
    private boolean following;
    /** While following state: the warning count of the last OK or EOF that ended a response. */
    private int lastWarnings;
    /** The OK packet being read carries session state: its payload, filled as it streams past. */
    private byte[] payload;
    private int fill;
    /** Shows the client its own format of OK packets that carry session state; {@code null}: relayed as they are. */
    private OkRewriter rewriter;
    /** The rewriter as the buffer being read started: it is told where the read ended, even if replaced since. */
    private OkRewriter readRewriter;

    StateReading(SessionStateListener listener, ResponseWatches watches, ResponsePacket packet) {
        this.listener = listener;
        this.watches = watches;
        this.packet = packet;
    }

    /** Starts or stops reporting session state changes and last-insert ids to the listener (transaction pooling). */
    public void follow(boolean on) {
        following = on;
        watchOrNot();
    }

    /**
     * Starts or stops rewriting, in the relayed stream, the OK packets that carry session state (see
     * {@link OkRewriter}). Change it only between responses.
     */
    public void rewriteOks(OkRewriter okRewriter) {
        rewriter = okRewriter;
        watchOrNot();
    }

    private void watchOrNot() {
        if (following || rewriter != null) {
            watches.add(this);
        } else {
            watches.remove(this);
            payload = null;
        }
    }

    /**
     * While following state (transaction pooling): whether the last statement left warnings, which a query of
     * Sluice's own on the connection would replace before the client's {@code SHOW WARNINGS} could read them.
     */
    public boolean lastStatementLeftWarnings() {
        return lastWarnings > 0;
    }

    @Override
    public boolean packet(ResponsePacket p) {
        if (!following) {
            return false;
        }
        if (p.role == ResponsePacket.Role.STATEMENT_OK) {
            return ok(p, true);
        }
        if (p.role == ResponsePacket.Role.END_OF_ROWS) {
            listener.onResultSetEnd(p.rows);
            if (p.deprecateEof) {
                return ok(p, false); // its counts are about the result, not an insert
            }
            eof(p);
        }
        return false;
    }

    /**
     * An OK packet: reports one that answers a statement (not the one that ends a result set, whose counts MariaDB
     * fills with the connection's earlier values), and starts copying its payload when it carries session state. The
     * head holds the bytes read so far; the rest come through {@link #payload}.
     *
     * @return whether its payload is copied
     */
    private boolean ok(ResponsePacket p, boolean statementOk) {
        PacketHead head = p.head;
        lastWarnings = head.okWarnings();
        if (statementOk) {
            listener.onOk(head.lenencOrZero(1), head.okLastInsertId());
        }
        if ((head.okStatus(p.serverStatus) & ServerStatus.SERVER_SESSION_STATE_CHANGED) == 0) {
            return false;
        }
        payload = new byte[p.payloadLength];
        System.arraycopy(head.bytes, 0, payload, 0, head.fill);
        fill = head.fill;
        if (rewriter != null) {
            rewriter.cutFrom(p.start);
        }
        return true;
    }

    /** An EOF packet that ends rows (without CLIENT_DEPRECATE_EOF): it can say the state changed, not how. */
    private void eof(ResponsePacket p) {
        lastWarnings = p.head.eofWarnings();
        if ((p.head.eofStatus(p.serverStatus) & ServerStatus.SERVER_SESSION_STATE_CHANGED) != 0) {
            listener.onUntrackedStateChange();
        }
    }

    @Override
    public void payload(ByteBuf buf, int index, int length) {
        if (payload != null) {
            buf.getBytes(index, payload, fill, length);
            fill += length;
        }
    }

    /** The OK being copied ended just before {@code end}: the rewriter cuts it there, the listener gets it. */
    @Override
    public void packetEnded(int end, int sequenceId) {
        byte[] whole = payload;
        if (whole == null) {
            return;
        }
        payload = null;
        if (rewriter != null) {
            rewriter.cutTo(end, whole, sequenceId);
        }
        listener.onSessionState(whole);
    }

    @Override
    public void responseEnded(ResponseOutcome outcome) {
        if (following) {
            outcome.rows = packet.rows; // transaction pooling answers FOUND_ROWS() with it
        }
    }

    @Override
    public void readStarted() {
        readRewriter = rewriter;
        if (readRewriter != null) {
            readRewriter.beginRead();
        }
    }

    @Override
    public void readEnded(ResponseTracker tracker) {
        if (readRewriter != null) {
            readRewriter.endRead(tracker.undecidedOkStart());
            readRewriter = null;
        }
    }
}
