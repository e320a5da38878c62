package io.sluice.relay;

import io.netty.buffer.ByteBuf;

/**
 * A feature that follows responses alongside a {@link ResponseTracker}: the tracker does the framing and the
 * response state, and tells its watches what it classified. A traffic capture's sums ({@link ResponseSummary}),
 * transaction pooling's reading of session state ({@link StateReading}) and session pooling's digest of column
 * definitions ({@link DefinitionsDigesting}) are watches; a feature to come (a row limit of query rules) is one more,
 * added without a change to the tracker's loop.
 *
 * <p>A tracker without watches pays one test per packet it classifies (rows passed over by its row skipping pay
 * nothing). Watches are told in the order they were added, on the connection's event loop, always before the tracker
 * reports the response complete. Calls pass borrowed buffers: a watch reads them where it is told, and neither moves
 * their indexes nor keeps them.
 */
public interface ResponseWatch {

    /**
     * Whether this watch wants to see every row packet ({@link ResponsePacket.Role#ROW}): rows are then classified one
     * by one while it is added, rather than passed over many at a time. Asked when it is added.
     */
    default boolean watchesRows() {
        return false;
    }

    /**
     * The tracker classified a packet of the response it follows (it read the packet's first bytes; the rest of the
     * payload may still be to come). Called before the tracker acts on it: {@link ResponsePacket#serverStatus()} is
     * still the status before this packet.
     *
     * @return whether this watch wants the rest of the packet's payload through {@link #payload} and its end through
     *     {@link #packetEnded}
     */
    boolean packet(ResponsePacket packet);

    /**
     * Bytes of the packet being read after its first ones, whenever a watch asked for them: a watch that did not
     * ignores them.
     */
    default void payload(ByteBuf buf, int index, int length) {
    }

    /**
     * The packet whose payload a watch asked for ended just before {@code end} of the buffer being read.
     *
     * @param sequenceId its sequence id
     */
    default void packetEnded(int end, int sequenceId) {
    }

    /** The response ended with the packet just read: {@code outcome} is complete but for what this watch adds. */
    default void responseEnded(ResponseOutcome outcome) {
    }

    /** As {@link #responseEnded(ResponseOutcome)}, with where the response ended: just before {@code end}. */
    default void responseEnded(ResponseOutcome outcome, int end) {
        responseEnded(outcome);
    }

    /** A buffer of the backend's is about to be read: the first of the calls for its bytes. */
    default void readStarted() {
    }

    /**
     * The buffer announced by {@link #readStarted} is read: told only to the watches that were told it started.
     *
     * @param tracker where a packet not yet classified starts ({@link ResponseTracker#undecidedOkStart()})
     */
    default void readEnded(ResponseTracker tracker) {
    }
}
