package io.sluice.relay;

import io.netty.channel.Channel;
import java.nio.charset.StandardCharsets;

/**
 * A {@code maxRows} query rule's limit on one statement's response (decision 191): the client gets the first
 * {@code max} rows, counted over all the statement's result sets, then an ERR 1226 in place of the rest. The rest is
 * still read by the tracker, so the connection stays in step and may be pooled; the bytes from the first row over the
 * limit to the response's end are cut out by an {@link OkRewriter} (the connection's own for session state, or one of
 * row cuts only), which writes the ERR with that row's sequence id when the response ends.
 *
 * <p>From the end of the last row the client gets, each packet is held back until it is classified, so that the
 * first row over the limit is cut before any of its bytes reach the client, wherever the reads split it. When that
 * row's header is split across reads just after a packet the tracker does not tell its watches of (the EOF ending a
 * later result's column definitions, without CLIENT_DEPRECATE_EOF), what is held back is not the row's alone and the
 * stream cannot be cut cleanly: the client's session and the backend connection are then closed, never pooled. One
 * per limited statement, on the backend connection's event loop.
 */
public final class RowLimit implements ResponseWatch {
    /** MySQL's ER_USER_LIMIT_REACHED, as the other limits of query rules answer. */
    static final int ER_USER_LIMIT_REACHED = 1226;

    private final long max;
    private final String rule;
    private final Runnable onCut;
    private final OkRewriter cut;
    private final Channel client;
    private final Channel backend;
    /** The cut began: its row's sequence id is awaited, then the response's end. */
    private boolean cutting;
    private int sequenceId;
    /** Whether the packet being read is one this limit asked to hear the end of (other watches ask for theirs). */
    private boolean asked;
    /**
     * Whether a packet the tracker does not tell of may lie between the last packet told and the next (the EOF after a
     * result's column definitions, without CLIENT_DEPRECATE_EOF): bytes held back then are not all the next row's.
     */
    private boolean untoldBetween;

    /**
     * @param max the rows the client may get
     * @param rule the rule's name, for the ERR's message
     * @param onCut run when the response is cut (the rule's count of statements it acted on)
     * @param cut the rewriter of the connection's relayed bytes
     * @param client the client's channel, closed when the stream cannot be cut cleanly
     * @param backend the backend connection's channel, closed then too
     */
    public RowLimit(long max, String rule, Runnable onCut, OkRewriter cut, Channel client, Channel backend) {
        this.max = max;
        this.rule = rule;
        this.onCut = onCut;
        this.cut = cut;
        this.client = client;
        this.backend = backend;
    }

    @Override
    public boolean watchesRows() {
        return true;
    }

    @Override
    public boolean packet(ResponsePacket packet) {
        asked = wants(packet);
        untoldBetween = !packet.deprecateEof && (packet.role() == ResponsePacket.Role.COLUMN_DEFINITION
                || packet.role() == ResponsePacket.Role.COLUMN_COUNT);
        return asked;
    }

    private boolean wants(ResponsePacket packet) {
        if (cutting || packet.rows() < max - 1 || packet.rows() > max) { // past max: the channels were closed
            return false;
        }
        boolean row = packet.role() == ResponsePacket.Role.ROW;
        if (packet.rows() == max - 1) {
            return row; // the last row the client gets: its end starts the hold of the packet after it
        }
        if (!row) {
            cut.releaseRowHold(); // an end of rows or the next result's head: held back until the next row
            return true;
        }
        if (packet.start() < 0 && (!cut.holdsBytes() || untoldBetween)) {
            // The row's first bytes already went to the client, or what is held back is not only the row's (an EOF
            // of the result's head is too): no ERR can follow in step.
            client.close();
            backend.close();
            return false;
        }
        cutting = true;
        cut.cutRowsFrom(packet.start());
        onCut.run();
        return true;
    }

    @Override
    public void packetEnded(int end, int sequenceId) {
        if (!asked) {
            return;
        }
        asked = false;
        if (cutting) {
            this.sequenceId = sequenceId;
        } else {
            cut.holdRowsFrom(end);
        }
    }

    @Override
    public void responseEnded(ResponseOutcome outcome, int end) {
        if (cutting) {
            cutting = false;
            cut.cutRowsTo(end, errPayload(), sequenceId);
        } else {
            cut.releaseRowHold();
        }
    }

    /** The ERR's payload: header, code, SQL state marker and state, message. */
    private byte[] errPayload() {
        byte[] message = ("Statement refused by query rule " + rule + ": more than " + max + " rows")
                .getBytes(StandardCharsets.UTF_8);
        byte[] payload = new byte[9 + message.length];
        payload[0] = (byte) 0xFF;
        payload[1] = (byte) ER_USER_LIMIT_REACHED;
        payload[2] = (byte) (ER_USER_LIMIT_REACHED >>> 8);
        payload[3] = '#';
        System.arraycopy("42000".getBytes(StandardCharsets.US_ASCII), 0, payload, 4, 5);
        System.arraycopy(message, 0, payload, 9, message.length);
        return payload;
    }
}
