package io.sluice.relay;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.ServerStatus;

/**
 * What a {@link ResponseTracker} reads of the session state the server reports, for transaction pooling: the OK
 * packets that answer statements, the payloads of those that carry session state (copied as they stream past), the
 * warning counts, and where an {@link OkRewriter} must cut such packets out of the relayed stream. The tracker
 * follows the shape of responses; this follows what they say about the session, only while
 * {@link #follow(boolean) asked to}. One per tracker ({@link ResponseTracker#sessionState()}), on its event loop.
 */
public final class StateReading {

    private final SessionStateListener listener;
    /** Off in SESSION pooling: the tracker then pays one flag test per OK packet. */
    boolean following;
    /** While following state: the warning count of the last OK or EOF that ended a response. */
    private int lastWarnings;
    /** The OK packet being read carries session state: its payload, filled as it streams past. */
    private byte[] payload;
    private int fill;
    /** Shows the client its own format of OK packets that carry session state; {@code null}: relayed as they are. */
    OkRewriter rewriter;

    StateReading(SessionStateListener listener) {
        this.listener = listener;
    }

    /** Starts or stops reporting session state changes and last-insert ids to the listener (transaction pooling). */
    public void follow(boolean on) {
        following = on;
    }

    /**
     * Starts or stops rewriting, in the relayed stream, the OK packets that carry session state (see
     * {@link OkRewriter}). Change it only between responses.
     */
    public void rewriteOks(OkRewriter okRewriter) {
        rewriter = okRewriter;
    }

    /**
     * While following state (transaction pooling): whether the last statement left warnings, which a query of
     * Sluice's own on the connection would replace before the client's {@code SHOW WARNINGS} could read them.
     */
    public boolean lastStatementLeftWarnings() {
        return lastWarnings > 0;
    }

    /**
     * An OK packet in the head: reports one that answers a statement (not the one that ends a result set, whose
     * counts MariaDB fills with the connection's earlier values), and starts copying its payload when it carries
     * session state. The head holds the bytes read so far; the rest are copied as the tracker passes them.
     *
     * @param packetStart where the packet starts in the buffer being scanned, -1 when it began in an earlier one
     */
    void ok(PacketHead head, int serverStatus, int payloadLength, int packetStart, boolean statementOk) {
        lastWarnings = head.okWarnings();
        if (statementOk) {
            listener.onOk(head.lenencOrZero(1), head.okLastInsertId());
        }
        if ((head.okStatus(serverStatus) & ServerStatus.SERVER_SESSION_STATE_CHANGED) != 0) {
            payload = new byte[payloadLength];
            System.arraycopy(head.bytes, 0, payload, 0, head.fill);
            fill = head.fill;
            if (rewriter != null) {
                rewriter.cutFrom(packetStart);
            }
        }
    }

    /** An EOF packet that ends rows (without CLIENT_DEPRECATE_EOF): it can say the state changed, not how. */
    void eof(PacketHead head, int serverStatus) {
        lastWarnings = head.eofWarnings();
        if ((head.eofStatus(serverStatus) & ServerStatus.SERVER_SESSION_STATE_CHANGED) != 0) {
            listener.onUntrackedStateChange();
        }
    }

    /** A result set ended after {@code rows} rows of its response. */
    void resultSetEnded(long rows) {
        listener.onResultSetEnd(rows);
    }

    /** Whether the payload of an OK that carries session state is being copied. */
    boolean copying() {
        return payload != null;
    }

    /** Copies {@code n} more payload bytes of that OK from {@code buf} at {@code at}. */
    void copy(ByteBuf buf, int at, int n) {
        buf.getBytes(at, payload, fill, n);
        fill += n;
    }

    /** The OK being copied ended just before {@code end}: the rewriter cuts it there, the listener gets it. */
    void copied(int end, int sequenceId) {
        byte[] whole = payload;
        payload = null;
        if (rewriter != null) {
            rewriter.cutTo(end, whole, sequenceId);
        }
        listener.onSessionState(whole);
    }
}
