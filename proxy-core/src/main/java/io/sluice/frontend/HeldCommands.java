package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import java.util.ArrayDeque;

/**
 * A session's client frames that wait, in order: for a backend connection to be bound, or for one of Sluice's own
 * commands on it to end. Also Sluice's own answers to a pipelining client's commands (an ERR for an empty packet or a
 * command it does not relay), which wait for the responses to the commands before them. Empty, and allocation-free,
 * on the hot path; the queue is made the first time a frame waits. Frames are taken: each leaves by {@link #poll()}
 * (to be sent) or is released by {@link #dropAll()}.
 */
final class HeldCommands {
    /** The {@code command} of an entry that is Sluice's own answer, for the client, not a frame for the backend. */
    static final int OWN_ANSWER = -2;
    /** The {@code command} of a COM_CHANGE_USER that waits for the responses to the commands before it. */
    static final int CHANGE_USER = -3;

    /**
     * A waiting frame: a command with its response kind, (kind {@code null}) bytes that continue one (the rest of a
     * 16 MiB+ command, LOCAL INFILE data), or (command {@link #OWN_ANSWER}) Sluice's answer to a command.
     */
    record Held(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        /** The sequence id a reply to this command carries (an answer's own). */
        int replySequenceId() {
            int sequenceId = Packets.sequenceId(frame, frame.readerIndex());
            return isOwnAnswer() ? sequenceId : sequenceId + 1;
        }

        /** Whether this is a COM_CHANGE_USER, which Sluice handles itself once the commands before it are done. */
        boolean isChangeUser() {
            return command == CHANGE_USER;
        }

        /** Whether this is Sluice's answer to a command, for the client. */
        boolean isOwnAnswer() {
            return command == OWN_ANSWER;
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

    /** Holds Sluice's answer to a command (taken) until the responses to the commands before it have gone out. */
    void addOwnAnswer(ByteBuf answer) {
        add(answer, null, OWN_ANSWER, null);
    }

    /** Holds a COM_CHANGE_USER frame (taken) until the responses to the commands before it have gone out. */
    void addChangeUser(ByteBuf frame) {
        add(frame, null, CHANGE_USER, null);
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
