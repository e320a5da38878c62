package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import java.util.ArrayDeque;
import java.util.function.IntFunction;

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
    record Held(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured, boolean toRoute) {
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
    /** How many of the frames wait to be routed (read/write splitting) once they are first. */
    private int toRoute;

    void add(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        add(new Held(frame, kind, command, captured, false));
    }

    /**
     * Holds a statement that the session's policy routes once it is first and the connection is between commands
     * ({@link io.sluice.routing.RoutingPolicy#routeHeld}).
     */
    void addToRoute(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        add(new Held(frame, kind, command, captured, true));
        toRoute++;
    }

    /**
     * Puts a statement first, to be routed: read/write splitting runs it again on the primary after a replica refused
     * it as a write (decision 110), before whatever the client sent after it.
     */
    void addFirstToRoute(ByteBuf frame, int command, ResponseObserver captured) {
        if (queue == null) {
            queue = new ArrayDeque<>(4);
        }
        queue.addFirst(new Held(frame, ResponseKind.of(command), command, captured, true));
        toRoute++;
    }

    private void add(Held held) {
        if (queue == null) {
            queue = new ArrayDeque<>(4);
        }
        queue.add(held);
    }

    /** Whether a frame waits to be routed. */
    boolean waitsToBeRouted() {
        return toRoute > 0;
    }

    /** The first frame, which waited to be routed, has been: it is sent as any other now. */
    void firstRouted() {
        Held first = queue.poll();
        toRoute--;
        queue.addFirst(new Held(first.frame(), first.kind(), first.command(), first.captured(), false));
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
        Held first = queue == null ? null : queue.poll();
        if (first != null && first.toRoute()) {
            toRoute--;
        }
        return first;
    }

    /**
     * No connection came for the waiting commands: answers each with its error (a pipelining client waits for an
     * answer to every command that has one), writes Sluice's own answers among them in their place, drops the rest
     * of a long command; up to a frame that waits to be routed, which gets a connection of its own. Flushes.
     *
     * @param error the ERR for a reply of this sequence id (taken)
     * @return whether a frame that waits to be routed is first now
     */
    boolean failUpToRouted(Channel client, IntFunction<ByteBuf> error) {
        Held next;
        while ((next = peek()) != null && !next.toRoute()) {
            poll();
            if (next.isOwnAnswer()) {
                client.write(next.frame(), client.voidPromise());
                continue;
            }
            int sequenceId = next.replySequenceId();
            // Not the rest of a long command, nor one answered by nothing (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA).
            boolean answered = next.isChangeUser() || next.kind() != null && next.kind() != ResponseKind.NONE;
            next.drop();
            if (answered) {
                client.write(error.apply(sequenceId), client.voidPromise());
            }
        }
        client.flush();
        return next != null;
    }

    /** Releases every waiting frame. */
    void dropAll() {
        for (Held next; (next = poll()) != null; ) {
            next.drop();
        }
    }
}
