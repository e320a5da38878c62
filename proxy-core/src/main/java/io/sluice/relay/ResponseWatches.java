package io.sluice.relay;

import io.netty.buffer.ByteBuf;
import java.util.Arrays;

/**
 * The {@link ResponseWatch watches} of one {@link ResponseTracker}: those added for as long as they want (a capture's
 * sums, transaction pooling's state reading) and those of the response being followed only (a digest of its column
 * definitions). The tracker asks {@link #any} once per packet it classifies and goes no further when it is false.
 * Not thread-safe: on the tracker's event loop.
 */
final class ResponseWatches {

    /** Those added for as long as they want, then those of the response being followed only. */
    private ResponseWatch[] watches = new ResponseWatch[4];
    private int added;
    private int total;
    /** The watches told that the buffer being read started, to be told it ended (watches change during a read). */
    private ResponseWatch[] reading = new ResponseWatch[4];
    private int readingCount;
    /** Whether there is any watch at all. */
    boolean any;
    /** Whether a watch wants every row classified. */
    boolean rows;

    /** Adds {@code watch} unless it is there already; it hears of packets from the next one on. */
    void add(ResponseWatch watch) {
        if (indexOf(watch, 0, added) >= 0) {
            return;
        }
        makeRoom();
        System.arraycopy(watches, added, watches, added + 1, total - added);
        watches[added++] = watch;
        total++;
        changed();
    }

    /** Removes {@code watch}, if it was {@link #add added}. */
    void remove(ResponseWatch watch) {
        int k = indexOf(watch, 0, added);
        if (k >= 0) {
            System.arraycopy(watches, k + 1, watches, k, total - k - 1);
            watches[--total] = null;
            added--;
            changed();
        }
    }

    /** Adds a watch of the response being followed only, unless it is there already. */
    void addForResponse(ResponseWatch watch) {
        if (indexOf(watch, added, total) < 0) {
            makeRoom();
            watches[total++] = watch;
            changed();
        }
    }

    /** A response begins: the watches of the last one go. */
    void responseBegins() {
        if (total > added) {
            Arrays.fill(watches, added, total, null);
            total = added;
            changed();
        }
    }

    private int indexOf(ResponseWatch watch, int from, int to) {
        for (int k = from; k < to; k++) {
            if (watches[k] == watch) {
                return k;
            }
        }
        return -1;
    }

    private void makeRoom() {
        if (total == watches.length) {
            watches = Arrays.copyOf(watches, total * 2);
            reading = new ResponseWatch[watches.length];
        }
    }

    private void changed() {
        any = total > 0;
        boolean anyRows = false;
        for (int k = 0; k < total; k++) {
            anyRows |= watches[k].watchesRows();
        }
        rows = anyRows;
    }

    /** @return whether a watch wants the rest of the packet */
    boolean packet(ResponsePacket packet) {
        boolean wanted = false;
        for (int k = 0; k < total; k++) {
            wanted |= watches[k].packet(packet);
        }
        return wanted;
    }

    void payload(ByteBuf buf, int index, int length) {
        for (int k = 0; k < total; k++) {
            watches[k].payload(buf, index, length);
        }
    }

    void packetEnded(int end, int sequenceId) {
        for (int k = 0; k < total; k++) {
            watches[k].packetEnded(end, sequenceId);
        }
    }

    void responseEnded(ResponseOutcome outcome, int end) {
        for (int k = 0; k < total; k++) {
            watches[k].responseEnded(outcome, end);
        }
    }

    /**
     * A buffer is about to be read: the watches {@link #add added} now hear of its end, even if removed in between
     * (those of a response only hear of neither: a read may hold several responses).
     */
    void readStarted() {
        readingCount = added;
        System.arraycopy(watches, 0, reading, 0, added);
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
