package io.sluice.routing;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;

/**
 * Statements of a read/write split group that wait for its primary (none writable, a split brain, a switchover's
 * hold): each a task for its session's event loop, run there once the primary takes writes. Touched only while a
 * group has no primary, never on the way of a statement that finds one.
 */
final class PrimaryWaiters {
    private record Waiter(Executor loop, Runnable wake) { }

    private final ConcurrentLinkedQueue<Waiter> waiting = new ConcurrentLinkedQueue<>();

    Object add(Executor loop, Runnable wake) {
        Waiter waiter = new Waiter(loop, wake);
        waiting.add(waiter);
        return waiter;
    }

    void remove(Object waiter) {
        waiting.remove(waiter);
    }

    int size() {
        return waiting.size();
    }

    /** Every waiter's task, on its loop; each runs once. */
    void wakeAll() {
        for (Waiter waiter; (waiter = waiting.poll()) != null; ) {
            waiter.loop().execute(waiter.wake());
        }
    }
}
