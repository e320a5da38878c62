package io.sluice.backend.pool;

import io.sluice.backend.BackendAccount;
import io.sluice.backend.SessionKey;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How one data source's {@code maxPoolSize} slots are shared by its event loops. A connection belongs to one loop,
 * while the count of open connections is shared by all; so when sessions wait on one loop, a slot must move there: an
 * idle connection elsewhere closes, and the waiting loop opens one in its place.
 *
 * <p>Session pooling moves slots whenever a session waits on another loop. Transaction pooling gives connections back
 * after every transaction, so one is idle only for moments; there a slot moves only to a loop whose sessions have
 * waited longer than a give-back takes ({@link #RECLAIM_DELAY_MILLIS}: "starving"), and only from a loop holding more
 * than its fair share. Moving a slot costs a backend login, which under load slows the server and makes the next
 * burst longer (seen with sysbench plus 300 client connects per second: a few waits became hundreds of logins).
 *
 * <p>Connections of the sessions' own server accounts (decision 145) are counted per account too, bounded by
 * {@code maxPoolSizePerAccount} within {@code maxPoolSize}, so that one account cannot take every connection the
 * server allows Sluice.
 *
 * <p>Thread-safe: the counts are atomics, touched per connection and per wait, never per command.
 */
final class SlotBalancer {
    /** Transaction pooling: how long a loop's sessions wait for a give-back on their own loop before slots move. */
    static final long RECLAIM_DELAY_MILLIS = 50;

    private final BackendPool pool;
    private final AtomicInteger open = new AtomicInteger();
    /** Sessions waiting for a connection, on any loop: a connection freed where nobody waits then makes room. */
    private final AtomicInteger waiting = new AtomicInteger();
    /** Transaction pooling: loops whose sessions have waited longer than a give-back takes. */
    private final AtomicInteger starvingLoops = new AtomicInteger();
    /**
     * Open connections per account of the sessions' own; the data source's account is not in it. An entry stays once
     * made: there are as many as server accounts that used Sluice, a few bytes each.
     */
    private final Map<BackendAccount, AtomicInteger> perAccount = new ConcurrentHashMap<>();

    SlotBalancer(BackendPool pool) {
        this.pool = pool;
    }

    /** Claims a slot for a new connection if fewer than {@code maxPoolSize} are open. */
    boolean tryReserve() {
        int max = pool.dataSource().maxPoolSize();
        for (;;) {
            int current = open.get();
            if (current >= max) {
                return false;
            }
            if (open.compareAndSet(current, current + 1)) {
                return true;
            }
        }
    }

    /**
     * Claims a slot for a new connection of {@code key}: one of {@code maxPoolSize}, and one of
     * {@code maxPoolSizePerAccount} when the key names an account of the session's own.
     */
    boolean tryReserve(SessionKey key) {
        BackendAccount account = key.account();
        if (account == null) {
            return tryReserve();
        }
        AtomicInteger count = perAccount.computeIfAbsent(account, a -> new AtomicInteger());
        int max = pool.dataSource().maxPoolSizePerAccount();
        for (;;) {
            int current = count.get();
            if (max > 0 && current >= max) {
                return false;
            }
            if (count.compareAndSet(current, current + 1)) {
                break;
            }
        }
        if (!tryReserve()) {
            count.decrementAndGet();
            return false;
        }
        return true;
    }

    /** Whether {@code key}'s account has all the connections {@code maxPoolSizePerAccount} allows it. */
    boolean accountFull(SessionKey key) {
        BackendAccount account = key.account();
        int max = pool.dataSource().maxPoolSizePerAccount();
        if (account == null || max <= 0) {
            return false;
        }
        AtomicInteger count = perAccount.get(account);
        return count != null && count.get() >= max;
    }

    /** Open connections per account of the sessions' own, by user name (metrics, the admin API). */
    Map<String, Integer> openPerAccount() {
        Map<String, Integer> counts = new TreeMap<>();
        perAccount.forEach((account, count) -> counts.put(account.user(), count.get()));
        return counts;
    }

    /** A connection of {@code key} closed, or never opened: its slots may serve a session waiting on any loop. */
    void released(SessionKey key) {
        BackendAccount account = key.account();
        if (account != null) {
            AtomicInteger count = perAccount.get(account);
            if (count != null) {
                count.decrementAndGet();
            }
        }
        released();
    }

    /** A connection closed, or never opened: its slot may serve a session waiting on any loop. */
    void released() {
        open.decrementAndGet();
        for (EventLoopPool loop : pool.loops()) {
            try {
                loop.loop().execute(loop::serveWaitersIfAny);
            } catch (RejectedExecutionException e) {
                return; // the loops are stopping: nobody waits any more
            }
        }
    }

    /** Open connections, on every loop (idle, lent, or still logging in). */
    int open() {
        return open.get();
    }

    void waiterAdded() {
        waiting.incrementAndGet();
    }

    void waiterRemoved() {
        waiting.decrementAndGet();
    }

    /** Sessions waiting now, on every loop. */
    int waiting() {
        return waiting.get();
    }

    /** A loop's sessions started or stopped waiting longer than a give-back takes (transaction pooling). */
    void starvingChanged(boolean starving) {
        if (starving) {
            starvingLoops.incrementAndGet();
        } else {
            starvingLoops.decrementAndGet();
        }
    }

    /**
     * A loop's fair part of {@code maxPoolSize}. In transaction pooling a loop at or under its share keeps its idle
     * connections rather than closing them for another loop's waiters, which would turn every give-back into a new
     * backend login.
     */
    int fairShare() {
        int loops = pool.loops().length;
        return (pool.dataSource().maxPoolSize() + loops - 1) / loops;
    }

    /**
     * Whether a connection coming back on a loop that holds {@code openHere} should close to move its slot to another
     * loop: in session pooling whenever a session waits elsewhere; in transaction pooling only when a loop starves and
     * this one is over its fair share.
     */
    boolean anotherLoopNeedsSlot(int openHere) {
        if (!pool.transactionPooling()) {
            return waiting.get() > 0;
        }
        return starvingLoops.get() > 0 && openHere > fairShare();
    }

    /**
     * Whether a loop asked for a slot should close its oldest idle connection, idle for {@code idleNanos}: always in
     * session pooling; in transaction pooling only over the fair share, or after a second idle (a loop that really
     * does not need it), not one idle only between two transactions.
     */
    boolean shouldYield(int openHere, long idleNanos) {
        return !pool.transactionPooling() || openHere > fairShare() || idleNanos >= 1_000_000_000L;
    }

    /**
     * A loop's sessions wait: whether to ask the other loops for slots at once (session pooling) or only once they
     * have waited {@link #RECLAIM_DELAY_MILLIS} (transaction pooling, where a give-back on their own loop usually
     * serves them first).
     */
    boolean reclaimsAtOnce() {
        return !pool.transactionPooling();
    }

    /**
     * Asks every loop but {@code requester} to close an idle connection of {@code account}, whose sessions wait on
     * {@code requester} with all of {@code maxPoolSizePerAccount} open.
     */
    void reclaimAccountElsewhere(EventLoopPool requester, BackendAccount account) {
        for (EventLoopPool loop : pool.loops()) {
            if (loop != requester) {
                loop.loop().execute(() -> loop.retireOneIdleOf(account));
            }
        }
    }

    /** Asks every loop but {@code requester} to close an idle connection, if it should, for its slot. */
    void reclaimElsewhere(EventLoopPool requester) {
        for (EventLoopPool loop : pool.loops()) {
            if (loop != requester) {
                loop.loop().execute(loop::yieldIdleSlot);
            }
        }
    }
}
