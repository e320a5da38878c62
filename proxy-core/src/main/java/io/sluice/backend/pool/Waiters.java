package io.sluice.backend.pool;

import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendAccount;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.SessionKey;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.function.Predicate;

/**
 * Sessions of one loop waiting for a connection, in order: for a free slot ({@code maxPoolSize} reached) or for a
 * reset in flight to end. Each waits at most until its timer fires. On the loop only.
 */
final class Waiters {

    /** One waiting session: what it needs, where it is told, and its timer. */
    record Waiter(SessionKey key, String schema, Promise<BackendConnection> promise, ScheduledFuture<?> timeout) {
        /** Stops its timer: it is served, or gives up otherwise. */
        void stopTimer() {
            timeout.cancel(false);
        }
    }

    private final ArrayDeque<Waiter> queue = new ArrayDeque<>();

    void add(Waiter waiter) {
        queue.add(waiter);
    }

    /** Puts a waiter back first in line, where it was. */
    void addFirst(Waiter waiter) {
        queue.addFirst(waiter);
    }

    /** The first waiter, taken out, or {@code null}. */
    Waiter poll() {
        return queue.poll();
    }

    /** Removes the waiter told through {@code promise}; whether it was there. */
    boolean remove(Promise<BackendConnection> promise) {
        return queue.removeIf(w -> w.promise() == promise);
    }

    boolean remove(Waiter waiter) {
        return queue.remove(waiter);
    }

    boolean isEmpty() {
        return queue.isEmpty();
    }

    int size() {
        return queue.size();
    }

    /** Whether a session of {@code account} still waits here. */
    boolean anyFor(BackendAccount account) {
        for (Waiter waiter : queue) {
            if (account.equals(waiter.key().account()) && !waiter.promise().isDone()) {
                return true;
            }
        }
        return false;
    }

    /** How many wait for a connection of {@code key}. */
    int count(SessionKey key) {
        int n = 0;
        for (Waiter waiter : queue) {
            if (waiter.key().equals(key)) {
                n++;
            }
        }
        return n;
    }

    /** The last waiter that matches, taken out, or {@code null}. */
    Waiter removeLast(Predicate<Waiter> matching) {
        for (Iterator<Waiter> it = queue.descendingIterator(); it.hasNext(); ) {
            Waiter waiter = it.next();
            if (matching.test(waiter)) {
                it.remove();
                return waiter;
            }
        }
        return null;
    }
}
