package io.sluice.relay;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Replaces, in a relayed response stream, the OK packets that carry session state with what the client is to see of
 * them ({@link SessionStateFilter}), and passes every other byte through as slices of the buffers read, without a
 * copy.
 *
 * <p>Transaction pooling needs the server to report every change of session state, so its backend connections
 * always negotiate CLIENT_SESSION_TRACK and turn every tracker on. A client that did not negotiate it must still get
 * OK packets in its own format, and one that did must see only the trackers it would see on its own connection. Only
 * OK packets flagged {@code SERVER_SESSION_STATE_CHANGED} differ: the server writes every other OK packet the same
 * way in both formats. Such packets answer SET, USE and the like, not the statements of a busy workload.
 *
 * <p>The {@link ResponseTracker} reports, while it scans one read, where such packets start ({@link #cutFrom}) and
 * end ({@link #cutTo}); the relay then {@link #write writes} the read. A packet may start in one read and end in a
 * later one. When a read ends before a packet's first bytes say whether it is such an OK, the bytes from its start
 * are held back (retained slices) until the next read tells. One per backend connection, on its event loop.
 */
public final class OkRewriter {
    /** {@link #endRead}: nothing to hold back. */
    static final int NO_HOLD = Integer.MIN_VALUE;

    private SessionStateFilter filter;

    // This read's cuts: start (-1: before the read), end (-1: after it), and the replaced packet's payload.
    private int cuts;
    private int[] cutStarts = new int[2];
    private int[] cutEnds = new int[2];
    private byte[][] payloads = new byte[2][];
    private int[] sequenceIds = new int[2];
    /** Which cuts are a row limit's (decision 191): replaced by the ERR in their payload, not filtered. */
    private boolean[] rowCuts = new boolean[2];
    /** A row limit's cut is open: OK packets inside it go with it, nothing of them is replaced. */
    private boolean rowsOpen;
    /**
     * Where a row limit holds back a packet not classified yet, which may be the first row over the limit
     * ({@link #holdRowsFrom}): an index of this read, -1 for the whole read, or {@link #NO_HOLD}.
     */
    private int rowHold = NO_HOLD;

    /** A cut began and has not ended yet. */
    private boolean cutOpen;
    /** This read began inside a cut. */
    private boolean openAtStart;
    private int holdFrom = NO_HOLD;
    /** Bytes of a packet not yet known to be a plain one or a cut, from earlier reads. */
    private final List<ByteBuf> held = new ArrayList<>(2);

    /** Rewrites with {@code filter} from now on (a connection lent to another session may get another). */
    public void use(SessionStateFilter sessionStateFilter) {
        filter = sessionStateFilter;
    }

    void beginRead() {
        openAtStart = cutOpen;
    }

    /** An OK packet to replace starts at {@code packetStart} of this read ({@code -1}: in an earlier read). */
    void cutFrom(int packetStart) {
        if (rowsOpen) {
            return;
        }
        grow();
        cutStarts[cuts] = packetStart;
        cutEnds[cuts] = -1;
        cuts++;
        cutOpen = true;
    }

    /** The OK packet being cut ended just before {@code end} of this read; its whole payload and sequence id. */
    void cutTo(int end, byte[] payload, int sequenceId) {
        if (rowsOpen) {
            return;
        }
        if (cuts == 0 || cutEnds[cuts - 1] >= 0) {
            grow(); // it started in an earlier read
            cutStarts[cuts] = -1;
            cuts++;
        }
        cutEnds[cuts - 1] = end;
        payloads[cuts - 1] = payload;
        sequenceIds[cuts - 1] = sequenceId & 0xFF;
        cutOpen = false;
    }

    /**
     * A row limit cuts from {@code rowStart} of this read ({@code -1}: in an earlier read, its bytes held back here) to
     * the response's end ({@link #cutRowsTo}): the rows over the limit and the rest of the response never reach the
     * client.
     */
    public void cutRowsFrom(int rowStart) {
        rowHold = NO_HOLD;
        cutFrom(rowStart);
        rowsOpen = true;
    }

    /**
     * The packet from {@code end} of this read on may be the first row over a row limit: its bytes are held back until
     * it is classified, so that its cut can start before its first byte reaches the client.
     */
    public void holdRowsFrom(int end) {
        rowHold = end;
    }

    /** The packet {@link #holdRowsFrom} held back is classified, and not a row to cut: it goes on as read. */
    public void releaseRowHold() {
        rowHold = NO_HOLD;
    }

    /** The response the row cut is in ended just before {@code end}: the cut is replaced by {@code errPayload}. */
    public void cutRowsTo(int end, byte[] errPayload, int sequenceId) {
        rowsOpen = false;
        cutTo(end, errPayload, sequenceId);
        rowCuts[cuts - 1] = true;
    }

    /** Whether bytes of a packet not yet classified are held back from earlier reads. */
    public boolean holdsBytes() {
        return !held.isEmpty();
    }

    /** The read is scanned; {@code undecidedStart} is where a packet to hold back starts, or {@link #NO_HOLD}. */
    void endRead(int undecidedStart) {
        holdFrom = undecidedStart;
    }

    /**
     * Writes the read just scanned to the client (taken): its bytes as slices, with each cut OK replaced, and any
     * bytes held back from earlier reads first when they turned out to be a plain packet.
     */
    public void write(ByteBuf buf, Channel client) {
        if (rowHold != NO_HOLD && holdFrom == NO_HOLD) {
            holdFrom = rowHold;
        }
        if (cuts == 0 && held.isEmpty() && holdFrom == NO_HOLD && !openAtStart) {
            client.write(buf, client.voidPromise()); // nothing to rewrite in this read: the common case
            return;
        }
        int pos = buf.readerIndex();
        int end = buf.writerIndex();
        if (!held.isEmpty()) {
            if (holdFrom == -1) {
                held.add(buf); // still not enough of the packet to tell what it is
                resetRead();
                return;
            }
            boolean heldWasCut = cuts > 0 && cutStarts[0] == -1 && !openAtStart;
            for (ByteBuf bytes : held) {
                if (heldWasCut) {
                    bytes.release();
                } else {
                    client.write(bytes, client.voidPromise());
                }
            }
            held.clear();
        }
        if (openAtStart && cuts == 0) {
            pos = end; // the whole read is inside an OK packet that began earlier and goes on
        }
        for (int k = 0; k < cuts; k++) {
            int start = cutStarts[k] < 0 ? pos : cutStarts[k];
            writeSlice(buf, pos, start, client);
            if (cutEnds[k] < 0) {
                pos = end;
            } else {
                client.write(replacement(k, client), client.voidPromise());
                pos = cutEnds[k];
            }
        }
        if (holdFrom >= pos) {
            writeSlice(buf, pos, holdFrom, client);
            held.add(buf.retainedSlice(holdFrom, end - holdFrom));
        } else {
            writeSlice(buf, pos, end, client);
        }
        buf.release();
        resetRead();
    }

    /** The read went to one of Sluice's own commands, not to the client: forget what was noted of it. */
    public void discard() {
        cutOpen = false;
        rowsOpen = false;
        resetRead();
        rowHold = NO_HOLD;
    }

    /** The connection is taken back or closed: drops anything held back. */
    public void release() {
        discard();
        for (ByteBuf bytes : held) {
            bytes.release();
        }
        held.clear();
    }

    private ByteBuf replacement(int k, Channel client) {
        byte[] payload = rowCuts[k] ? payloads[k] : filter.filter(payloads[k]);
        payloads[k] = null;
        ByteBuf packet = client.alloc().buffer(4 + payload.length);
        packet.writeMediumLE(payload.length);
        packet.writeByte(sequenceIds[k]);
        packet.writeBytes(payload);
        return packet;
    }

    private static void writeSlice(ByteBuf buf, int from, int to, Channel client) {
        if (to > from) {
            client.write(buf.retainedSlice(from, to - from), client.voidPromise());
        }
    }

    private void resetRead() {
        for (int k = 0; k < cuts; k++) {
            payloads[k] = null;
            rowCuts[k] = false;
        }
        cuts = 0;
        holdFrom = NO_HOLD;
        rowHold = rowHold == NO_HOLD ? NO_HOLD : -1; // still not classified: the next read is held back whole
        openAtStart = cutOpen; // where the next read begins, for a rewriter whose reads are not announced (row cuts)
    }

    private void grow() {
        if (cuts == cutStarts.length) {
            int n = cuts * 2;
            cutStarts = Arrays.copyOf(cutStarts, n);
            cutEnds = Arrays.copyOf(cutEnds, n);
            payloads = Arrays.copyOf(payloads, n);
            sequenceIds = Arrays.copyOf(sequenceIds, n);
            rowCuts = Arrays.copyOf(rowCuts, n);
        }
    }
}
