package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import java.util.ArrayDeque;

/**
 * A session's client frames that wait, in order: for a backend connection to be bound, or for one of Sluice's own
 * commands on it to end. Empty, and allocation-free, on the hot path; the queue is made the first time a frame waits.
 * Frames are taken: each leaves by {@link #poll()} (to be sent) or is released by {@link #dropAll()}.
 */
final class HeldCommands {

    /**
     * A waiting frame: a command with its response kind, or (kind {@code null}) bytes that continue one (the rest of a
     * 16 MiB+ command, LOCAL INFILE data).
     */
    record Held(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        /** The sequence id a reply to this command carries. */
        int replySequenceId() {
            return Packets.sequenceId(frame, frame.readerIndex()) + 1;
        }

        /** Releases the frame; its capture record, if any, learns the command never went out. */
        void drop() {
            frame.release();
            if (captured != null) {
                captured.onAbandoned();
            }
        }
    }

    private ArrayDeque<Held> queue;

    void add(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        if (queue == null) {
            queue = new ArrayDeque<>(4);
        }
        queue.add(new Held(frame, kind, command, captured));
    }

    boolean isEmpty() {
        return queue == null || queue.isEmpty();
    }

    /** The first waiting frame, left in, or {@code null}. */
    Held peek() {
        return queue == null ? null : queue.peek();
    }

    /** The first waiting frame, taken out, or {@code null}. */
    Held poll() {
        return queue == null ? null : queue.poll();
    }

    /** Releases every waiting frame. */
    void dropAll() {
        for (Held next; (next = poll()) != null; ) {
            next.drop();
        }
    }
}
