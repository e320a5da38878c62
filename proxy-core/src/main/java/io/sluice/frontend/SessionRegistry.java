package io.sluice.frontend;

import io.netty.util.concurrent.Future;
import io.sluice.api.ClientCounts;
import io.sluice.api.SessionSnapshot;
import io.sluice.pooling.PinReason;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The client sessions open now and what happened at the door: admission against {@code server.maxConnections},
 * refusals, failed logins, the closing flag of graceful shutdown, and the pins of transaction pooling. Written from
 * every event loop and read by the admin API and the metrics exporter, so everything here is concurrent or atomic.
 */
public final class SessionRegistry implements ClientCounts {
    private static final PinReason[] PIN_REASONS = PinReason.values();

    private final int maxConnections;
    private final List<String> pinReasons;
    /** Logged-in or logging-in sessions, for graceful shutdown and {@code /api/sessions}. */
    private final Set<ClientSession> sessions = ConcurrentHashMap.newKeySet();
    /** Set once graceful shutdown refuses new connections. */
    private volatile boolean closing;
    private final AtomicInteger connectionIds = new AtomicInteger();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refusedTooMany = new AtomicLong();
    private final AtomicLong refusedClosing = new AtomicLong();
    private final AtomicLong authenticationFailures = new AtomicLong();
    /** Transaction pooling: sessions pinned, by {@link PinReason} ordinal. Counted per pin, never per command. */
    private final AtomicLongArray pins = new AtomicLongArray(PIN_REASONS.length);
    /** Sessions pinned now, by the ordinal of the first {@link PinReason} each is pinned for. */
    private final AtomicIntegerArray pinnedNow = new AtomicIntegerArray(PIN_REASONS.length);
    /** Sessions moved to another backend, by {@link SessionMove.Reason} ordinal; refusals by {@code Refusal}. */
    private final AtomicLongArray moves = new AtomicLongArray(SessionMove.Reason.values().length);
    private final AtomicLongArray movesRefused = new AtomicLongArray(SessionMove.Refusal.values().length);

    /**
     * @param maxConnections {@code server.maxConnections}, 0 for no limit (it needs a restart to change)
     * @param transactionPooling whether pins are reported: they only happen in {@code pooling: TRANSACTION}
     */
    public SessionRegistry(int maxConnections, boolean transactionPooling) {
        this.maxConnections = maxConnections;
        List<String> labels = new ArrayList<>();
        if (transactionPooling) {
            for (PinReason reason : PIN_REASONS) {
                labels.add(reason.label());
            }
        }
        this.pinReasons = List.copyOf(labels);
    }

    /** Counts a new client; false when {@code server.maxConnections} is reached (the count is then unchanged). */
    boolean admit() {
        int now = open.incrementAndGet();
        if (maxConnections > 0 && now > maxConnections) {
            open.decrementAndGet();
            refusedTooMany.incrementAndGet();
            return false;
        }
        accepted.incrementAndGet();
        return true;
    }

    /** A client turned away because graceful shutdown has begun; it was never admitted. */
    void turnedAwayWhileClosing() {
        refusedClosing.incrementAndGet();
    }

    int nextConnectionId() {
        return connectionIds.incrementAndGet() & 0x7FFFFFFF;
    }

    /** An admitted client's session, from its greeting on. */
    void opened(ClientSession session) {
        sessions.add(session);
        if (closing) {
            session.closeWhenIdle(); // raced with startClosing
        }
    }

    /** An admitted client's connection closed, at whatever stage. */
    void closed(ClientSession session) {
        sessions.remove(session);
        open.decrementAndGet();
    }

    void authenticationFailed() {
        authenticationFailures.incrementAndGet();
    }

    void pinned(PinReason reason) {
        pins.incrementAndGet(reason.ordinal());
    }

    void pinChanged(PinReason before, PinReason now) {
        if (before != null) {
            pinnedNow.decrementAndGet(before.ordinal());
        }
        if (now != null) {
            pinnedNow.incrementAndGet(now.ordinal());
        }
    }

    /** Sessions pinned now, by the first reason each is pinned for; only reasons with any. */
    public Map<PinReason, Integer> pinnedNow() {
        Map<PinReason, Integer> counts = new EnumMap<>(PinReason.class);
        for (PinReason reason : PIN_REASONS) {
            int n = pinnedNow.get(reason.ordinal());
            if (n > 0) {
                counts.put(reason, n);
            }
        }
        return counts;
    }

    @Override
    public int pinnedNow(int index) {
        return pinnedNow.get(index);
    }

    void moved(SessionMove.Reason reason) {
        moves.incrementAndGet(reason.ordinal());
    }

    void moveRefused(SessionMove.Refusal refusal) {
        movesRefused.incrementAndGet(refusal.ordinal());
    }

    @Override
    public List<String> moveReasons() {
        return SessionMove.reasonLabels();
    }

    @Override
    public long moves(int index) {
        return moves.get(index);
    }

    @Override
    public List<String> moveRefusals() {
        return SessionMove.refusalLabels();
    }

    @Override
    public long movesRefused(int index) {
        return movesRefused.get(index);
    }

    /** The sessions open now, for {@link SessionMoves}. */
    Iterable<ClientSession> sessions() {
        return sessions;
    }

    /** Graceful shutdown: refuse new connections and close every session at its first idle moment. */
    public void startClosing() {
        closing = true;
        for (ClientSession session : sessions) {
            session.closeWhenIdle();
        }
    }

    boolean isClosing() {
        return closing;
    }

    /**
     * Every session open now, each described on its own event loop, waiting at most 2 s in all: a session that closes
     * meanwhile or whose loop is stuck is left out rather than hang the admin API.
     */
    public List<SessionSnapshot> snapshots() {
        List<Future<SessionSnapshot>> pending = new ArrayList<>();
        for (ClientSession session : sessions) {
            try {
                pending.add(session.eventLoop().submit(session::snapshot));
            } catch (RuntimeException e) {
                // its loop is shutting down: the session is going too
            }
        }
        List<SessionSnapshot> snapshots = new ArrayList<>(pending.size());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        for (Future<SessionSnapshot> future : pending) {
            try {
                snapshots.add(future.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS));
            } catch (ExecutionException | TimeoutException e) {
                // closed meanwhile, or its loop is stuck: leave it out
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return snapshots;
    }

    @Override
    public int open() {
        return open.get();
    }

    @Override
    public long accepted() {
        return accepted.get();
    }

    @Override
    public long refusedTooMany() {
        return refusedTooMany.get();
    }

    @Override
    public long refusedWhileClosing() {
        return refusedClosing.get();
    }

    @Override
    public long authenticationFailures() {
        return authenticationFailures.get();
    }

    @Override
    public List<String> pinReasons() {
        return pinReasons;
    }

    @Override
    public long pins(int index) {
        return pins.get(index);
    }
}
