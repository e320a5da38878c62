package io.sluice.relay;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/**
 * The {@link ResponseWatch watches} of one {@link ResponseTracker}: those added for as long as they want (a capture's
 * sums, transaction pooling's state reading) and one for the response being followed only (a digest of its column
 * definitions). The tracker asks {@link #any} once per packet it classifies and goes no further when it is false.
 * Not thread-safe: on the tracker's event loop.
 */
final class ResponseWatches {

    private ResponseWatch[] added = new ResponseWatch[4];
    private int count;
    /** The watch of the response being followed only; {@code null}: none. */
    private ResponseWatch ofResponse;
    /** The watches told that the buffer being read started, to be told it ended (watches change during a read). */
    private ResponseWatch[] reading = new ResponseWatch[4];
    private int readingCount;
    /** Whether there is any watch at all. */
    boolean any;
    /** Whether a watch wants every row classified. */
    boolean rows;

    /** Adds {@code watch} unless it is there already; it hears of packets from the next one on. */
    void add(ResponseWatch watch) {
        for (int k = 0; k < count; k++) {
            if (added[k] == watch) {
                return;
            }
        }
        if (count == added.length) {
            added = Arrays.copyOf(added, count * 2);
            reading = new ResponseWatch[added.length];
        }
        added[count++] = watch;
        changed();
    }

    /** Removes {@code watch}, if it is there. */
    void remove(ResponseWatch watch) {
        for (int k = 0; k < count; k++) {
            if (added[k] == watch) {
                System.arraycopy(added, k + 1, added, k, count - k - 1);
                added[--count] = null;
                changed();
                return;
            }
        }
    }

    /** The watch of the response being followed only, {@code null} for none: set as a response begins. */
    void ofResponse(ResponseWatch watch) {
        if (watch != ofResponse) {
            ofResponse = watch;
            changed();
        }
    }

    private void changed() {
        any = count > 0 || ofResponse != null;
        boolean anyRows = ofResponse != null && ofResponse.watchesRows();
        for (int k = 0; k < count; k++) {
            anyRows |= added[k].watchesRows();
        }
        rows = anyRows;
    }

    /** @return whether a watch wants the rest of the packet */
    boolean packet(ResponsePacket packet) {
        boolean wanted = false;
        for (int k = 0; k < count; k++) {
            wanted |= added[k].packet(packet);
        }
        if (ofResponse != null) {
            wanted |= ofResponse.packet(packet);
        }
        return wanted;
    }

    void payload(ByteBuf buf, int index, int length) {
        for (int k = 0; k < count; k++) {
            added[k].payload(buf, index, length);
        }
        if (ofResponse != null) {
            ofResponse.payload(buf, index, length);
        }
    }

    void packetEnded(int end, int sequenceId) {
        for (int k = 0; k < count; k++) {
            added[k].packetEnded(end, sequenceId);
        }
        if (ofResponse != null) {
            ofResponse.packetEnded(end, sequenceId);
        }
    }

    void responseEnded(ResponseOutcome outcome) {
        for (int k = 0; k < count; k++) {
            added[k].responseEnded(outcome);
        }
        if (ofResponse != null) {
            ofResponse.responseEnded(outcome);
        }
    }

    /** A buffer is about to be read: the watches added now hear of its end, even if removed in between. */
    void readStarted() {
        readingCount = count;
        System.arraycopy(added, 0, reading, 0, count);
        for (int k = 0; k < readingCount; k++) {
            reading[k].readStarted();
        }
    }

    void readEnded(ResponseTracker tracker) {
        for (int k = 0; k < readingCount; k++) {
            reading[k].readEnded(tracker);
            reading[k] = null;
        }
        readingCount = 0;
    }
}
