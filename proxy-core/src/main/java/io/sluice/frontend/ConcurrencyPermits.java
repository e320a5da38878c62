package io.sluice.frontend;

import io.sluice.rules.ConcurrencyLimit.Permit;
import io.sluice.statistics.StatementRecord;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code maxConcurrency} permits one session holds (decision 190), so that each comes back exactly once at
 * whichever end its statement meets: the end of its response (it rides as the statement's record, as
 * {@link TimedStatement} does), the policy answering the statement itself, the session's close (a client killed
 * mid-statement, or a broken backend connection, which closes a session with a statement unanswered), or, as a
 * backstop, the next command finding the session idle with a permit still out. Only statements a
 * {@code maxConcurrency} rule matched come here; everything else pays one check of {@link #any()}. On the session's
 * loop; a permit itself may be given back from any thread.
 */
final class ConcurrencyPermits {

    /** The permit of the statement being handed to the policy now, until it is sent or answered. */
    private Permit sending;
    /** Permits of statements the policy held back (for a connection, or behind others): sent later, in order. */
    private final ArrayDeque<Permit> unsent = new ArrayDeque<>(2);
    /** Permits of statements sent and not known to have ended. */
    private final List<Permit> running = new ArrayList<>(2);

    /** Whether the session holds any permit. */
    boolean any() {
        return sending != null || !unsent.isEmpty() || !running.isEmpty();
    }

    /** Whether a statement with a permit is being handed to the policy now. */
    boolean isSending() {
        return sending != null;
    }

    /** A statement with {@code permit} goes to the policy. */
    void sending(Permit permit) {
        sending = permit;
    }

    /** The policy is done with it: answered itself (the permit comes back) or held to be sent later. */
    void afterPolicy(boolean answered) {
        Permit permit = sending;
        sending = null;
        if (permit == null) {
            return; // sent
        }
        if (answered) {
            permit.giveBack();
        } else {
            unsent.add(permit);
        }
    }

    /**
     * A statement with a permit is sent: the record its outcome goes to, wrapped so that its end gives the permit
     * back.
     */
    StatementRecord onSend(StatementRecord statistics) {
        Permit permit = sending != null ? sending : unsent.poll();
        sending = null;
        if (permit == null) {
            return statistics;
        }
        running.removeIf(Permit::isGivenBack);
        running.add(permit);
        return new Ended(this, statistics, permit);
    }

    /** The session is idle, nothing held, nothing running: any permit still out belongs to no statement. */
    void idle() {
        giveBackAll();
    }

    /** The session closed: every permit comes back. */
    void giveBackAll() {
        if (sending != null) {
            sending.giveBack();
            sending = null;
        }
        for (Permit each; (each = unsent.poll()) != null; ) {
            each.giveBack();
        }
        for (Permit each : running) {
            each.giveBack();
        }
        running.clear();
    }

    /** A statement's record that gives its permit back when its response ends. */
    private record Ended(ConcurrencyPermits owner, StatementRecord statistics, Permit permit)
            implements StatementRecord {
        /** Not sent after all: the permit waits, first, for the statement's send. */
        @Override
        public void unsent() {
            owner.running.remove(permit);
            owner.unsent.addFirst(permit);
            if (statistics != null) {
                statistics.unsent();
            }
        }

        @Override
        public void completed(long nanos, long nowNanos, boolean failed, int warnings, long rows, long affectedRows,
                long statementId, boolean replica) {
            permit.giveBack();
            if (statistics != null) {
                statistics.completed(nanos, nowNanos, failed, warnings, rows, affectedRows, statementId, replica);
            }
        }
    }
}
