package io.sluice.backend.pool;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.SessionKey;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A login waits for a connection being reset on its loop rather than opening one (decision 054): under connection
 * churn a client often logs in while the previous client's connection is still being reset, and waiting that round
 * trip costs less than a new server login (and keeps the pool from growing to the churn's peak). At most one session
 * waits per reset of its key; a waiter falls back after {@link #RESET_WAIT_MILLIS} or when a reset fails. On the
 * loop only.
 */
final class ResetHandOff {
    private static final Logger log = LoggerFactory.getLogger(ResetHandOff.class);

    /**
     * How long a session waits for a connection being reset on its loop before it opens one instead. A reset is one
     * round trip, normally well under a millisecond; opening a connection costs the server a login. The bound only
     * matters when a reset hangs.
     */
    static final long RESET_WAIT_MILLIS = 100;

    private final EventLoop loop;
    /** Opens a connection (or waits for a slot) for a waiter that gives up on the resets. */
    private final Consumer<Waiters.Waiter> fallback;
    /** Connections of this loop being reset after their session ended (COM_RESET_CONNECTION in flight). */
    private final ArrayDeque<BackendConnection> resetting = new ArrayDeque<>();
    private final Waiters waiters = new Waiters();

    ResetHandOff(EventLoop loop, Consumer<Waiters.Waiter> fallback) {
        this.loop = loop;
        this.fallback = fallback;
    }

    /** A reset of {@code connection} began. */
    void started(BackendConnection connection) {
        resetting.add(connection);
    }

    /** A reset ended, cleanly or not, or its connection closed mid-reset. */
    void ended(BackendConnection connection) {
        resetting.remove(connection);
    }

    /**
     * Has the session wait for a reset of its key, if one is in flight and not yet promised to another session.
     *
     * @return whether the session now waits
     */
    boolean await(SessionKey key, String schema, Promise<BackendConnection> promise) {
        if (resetting.isEmpty() || resetsInFlight(key) <= waiters.count(key)) {
            return false;
        }
        Waiters.Waiter[] self = new Waiters.Waiter[1];
        ScheduledFuture<?> timer = loop.schedule(() -> {
            if (waiters.remove(self[0]) && !promise.isDone()) {
                log.debug("a reset took over {} ms: opening a connection instead", RESET_WAIT_MILLIS);
                fallback.accept(self[0]);
            }
        }, RESET_WAIT_MILLIS, TimeUnit.MILLISECONDS);
        self[0] = new Waiters.Waiter(key, schema, promise, timer);
        waiters.add(self[0]);
        return true;
    }

    boolean hasWaiters() {
        return !waiters.isEmpty();
    }

    /**
     * Serves waiting sessions from idle connections, after resets ended. Each waiter leaves the list before it is
     * served, so that whatever its session does next finds the list consistent.
     *
     * @param serve tries to serve one waiter; false when no idle connection suits it yet
     */
    void serve(java.util.function.Predicate<Waiters.Waiter> serve) {
        for (int i = waiters.size(); i > 0 && !waiters.isEmpty(); i--) {
            Waiters.Waiter waiter = waiters.poll();
            if (waiter.promise().isDone() || serve.test(waiter)) {
                waiter.stopTimer();
            } else {
                waiters.add(waiter); // its key's reset has not ended yet
            }
        }
    }

    /** A reset of {@code key} failed: if more sessions now wait for its resets than remain, the last falls back. */
    void failed(SessionKey key) {
        if (waiters.count(key) <= resetsInFlight(key)) {
            return;
        }
        Waiters.Waiter waiter = waiters.removeLast(w -> w.key().equals(key));
        if (waiter != null) {
            waiter.stopTimer();
            if (!waiter.promise().isDone()) {
                fallback.accept(waiter);
            }
        }
    }

    /** Fails every waiter: Sluice stops. */
    void shutdown(Throwable cause) {
        for (Waiters.Waiter waiter; (waiter = waiters.poll()) != null; ) {
            waiter.stopTimer();
            waiter.promise().tryFailure(cause);
        }
    }

    private int resetsInFlight(SessionKey key) {
        int n = 0;
        for (BackendConnection connection : resetting) {
            if (connection.key().equals(key)) {
                n++;
            }
        }
        return n;
    }
}
