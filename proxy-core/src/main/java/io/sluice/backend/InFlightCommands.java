package io.sluice.backend;

import io.sluice.metrics.CommandObserver;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import io.sluice.relay.ResponseOutcome;
import io.sluice.relay.ResponseTracker;
import io.sluice.relay.RowLimit;

/**
 * The in-flight command queue of one backend connection: the commands written to the server whose responses have not
 * ended, oldest first, in a ring of reused {@link InFlight} entries, so forwarding allocates nothing. The tracker
 * follows the oldest one's response; when it ends, {@link #completeHead} settles its entry and begins the next.
 * Lives on the connection's event loop.
 */
final class InFlightCommands {
    private final ResponseTracker tracker;
    private InFlight[] ring = new InFlight[4];
    private int head;
    private int count;
    /** Sluice's own commands among them. */
    private int own;

    InFlightCommands(ResponseTracker tracker) {
        this.tracker = tracker;
    }

    /**
     * A cleared entry at the tail for a command about to be written, to be filled in by the caller; the tracker
     * begins following its response at once when nothing is ahead of it.
     */
    InFlight add(ResponseKind kind, OwnCommand command, int replacementStatementId) {
        return add(kind, command, replacementStatementId, null, null);
    }

    /**
     * {@link #add(ResponseKind, OwnCommand, int)} for a client's command whose response a statement mapping observes,
     * and a {@code maxRows} rule may limit ({@code rows}, or {@code null}).
     */
    InFlight add(ResponseKind kind, OwnCommand command, int replacementStatementId, ResponseObserver mapping,
            RowLimit rows) {
        if (count == ring.length) {
            grow();
        }
        int tail = (head + count) & (ring.length - 1);
        InFlight entry = ring[tail];
        if (entry == null) {
            entry = new InFlight();
            entry.clear();
            ring[tail] = entry;
        }
        count++;
        entry.kind = kind;
        entry.own = command;
        entry.replacementStatementId = replacementStatementId;
        entry.mapping = mapping; // before it begins: the mapping may want the definitions digested
        entry.rows = rows; // and the limit watch the rows
        if (command != null) {
            own++;
        }
        if (count == 1) {
            begin(entry);
        }
        return entry;
    }

    /**
     * The tracker saw the oldest command's response end: reports a client command's time, outcome and statement
     * mapping, removes the entry and begins following the next response.
     *
     * @return the entry's own command, whose packets are now complete, or {@code null} for a client's
     */
    OwnCommand completeHead(CommandObserver observer, CommandObserver.Source source) {
        InFlight done = ring[head];
        OwnCommand command = done.own;
        if (command == null) {
            if (done.startedNanos != 0 && observer != null) {
                long now = System.nanoTime();
                observer.completed(done.commandType, now - done.startedNanos,
                        tracker.lastResponseFailed(), done.hasSql() ? done.sql : null, done.sqlLength,
                        done.sqlTotalLength, source);
                if (done.statement != null) {
                    ResponseOutcome outcome = tracker.outcome();
                    done.statement.completed(now - done.startedNanos, now, outcome.failed(), outcome.warnings(),
                            outcome.rows(), outcome.affectedRows(), outcome.statementId(), done.onReplica);
                }
            }
            if (done.captured != null) {
                done.captured.onResponse(tracker);
            }
            if (done.mapping != null) {
                done.mapping.onResponse(tracker);
            }
        } else {
            own--;
        }
        removeHead();
        InFlight next;
        while ((next = peek()) != null && next.kind == ResponseKind.NONE) { // its turn comes, and it has no response
            if (next.captured != null) {
                next.captured.onNoResponse();
            }
            removeHead();
        }
        if (next != null) {
            begin(next);
        }
        return command;
    }

    /** The oldest own command, which the packets being read belong to. */
    OwnCommand headCommand() {
        return ring[head].own;
    }

    boolean isEmpty() {
        return count == 0;
    }

    int size() {
        return count;
    }

    /** How many of Sluice's own commands are in flight. */
    int ownCommands() {
        return own;
    }

    /** Whether a client command's response is outstanding. */
    boolean hasClientCommands() {
        return count > own;
    }

    /** The connection broke: fails Sluice's own commands and abandons the client's, oldest first, and forgets them. */
    void fail(BackendException cause) {
        own = 0;
        while (count > 0) {
            InFlight entry = ring[head];
            try {
                if (entry.own != null) {
                    entry.own.fail(cause);
                } else {
                    entry.abandon();
                }
            } finally {
                removeHead();
            }
        }
    }

    /** The session let go of the connection mid-response: its commands' observers hear it, the entries stay. */
    void abandonClientCommands() {
        for (int i = 0; i < count; i++) {
            InFlight entry = ring[(head + i) & (ring.length - 1)];
            if (entry.own == null) {
                entry.abandon();
                entry.captured = null;
                entry.mapping = null;
            }
        }
    }

    /** The session's traffic capture ended: the records of the commands in flight are told, in order, and dropped. */
    void endCapture() {
        for (int i = 0; i < count; i++) {
            InFlight entry = ring[(head + i) & (ring.length - 1)];
            if (entry.captured != null) {
                entry.captured.onAbandoned();
                entry.captured = null;
            }
        }
    }

    private InFlight peek() {
        return count == 0 ? null : ring[head];
    }

    private void removeHead() {
        ring[head].clear();
        head = (head + 1) & (ring.length - 1);
        count--;
    }

    private void begin(InFlight entry) {
        tracker.begin(entry.kind);
        if (entry.replacementStatementId != 0) {
            tracker.replaceStatementId(entry.replacementStatementId);
        }
        if (entry.mapping != null && entry.mapping.digestsDefinitions()) {
            tracker.digestDefinitions(entry.mapping.requiresDefinitions());
        }
        if (entry.rows != null) {
            tracker.watchResponse(entry.rows);
        }
    }

    private void grow() {
        InFlight[] grown = new InFlight[ring.length * 2];
        for (int i = 0; i < count; i++) {
            grown[i] = ring[(head + i) & (ring.length - 1)];
        }
        ring = grown;
        head = 0;
    }
}
