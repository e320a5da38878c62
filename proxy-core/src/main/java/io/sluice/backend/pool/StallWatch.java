package io.sluice.backend.pool;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * Tells a server that hung under its sessions from one that is slow (decision 093). Every half
 * {@code healthCheck.timeoutMilliseconds} each relay loop sweeps its connections to the server; one that has waited
 * for an answer through {@link #SUSPECT_AFTER_SWEEPS} sweeps without a byte (the timeout, or more) makes the server
 * suspect, and a health check's login is tried at once. A server that answers that login is only slow (a long
 * query): nothing happens. One that does not answer at all within the timeout is hung: the backend is reported down
 * at once, and every connection that waits for it in silence is closed, so that its session gets "Lost connection"
 * instead of waiting for good. It stays hung for the watch until the backend is up again.
 *
 * <p>The sweeps tick on the check loop and run on each relay loop as a plain task, as the pool's housekeeping does.
 */
final class StallWatch {
    /** Silent sweeps in a row (at half the check timeout each) before the server is suspect: the check timeout. */
    static final int SUSPECT_AFTER_SWEEPS = 3;

    private final BackendPool pool;
    private final EventLoopPool[] loops;
    private final long checkTimeoutMillis;
    /** Told, once per hang, why the server was found hung. */
    private final Consumer<String> onHung;
    private final ScheduledFuture<?> schedule;
    private final AtomicBoolean checking = new AtomicBoolean();
    private volatile boolean hung;

    StallWatch(BackendPool pool, EventLoop checkLoop, EventLoopPool[] loops, long checkTimeoutMillis,
            Consumer<String> onHung) {
        this.pool = pool;
        this.loops = loops;
        this.checkTimeoutMillis = checkTimeoutMillis;
        this.onHung = onHung;
        long period = Math.max(50, checkTimeoutMillis / 2);
        this.schedule = checkLoop.scheduleWithFixedDelay(this::sweep, period, period, TimeUnit.MILLISECONDS);
    }

    /** Hands each relay loop its sweep. */
    private void sweep() {
        boolean hungNow = hung;
        for (EventLoopPool loop : loops) {
            try {
                loop.loop().execute(() -> {
                    if (loop.sweepStalls(hungNow, SUSPECT_AFTER_SWEEPS)) {
                        suspect();
                    }
                });
            } catch (RejectedExecutionException e) {
                return; // the loops are stopping
            }
        }
    }

    /** A connection waited in silence: one login tells a hung server from a slow one. Any thread. */
    private void suspect() {
        if (hung || !checking.compareAndSet(false, true)) {
            return;
        }
        pool.ownConnections().check(checkTimeoutMillis).whenComplete((ignored, failure) -> {
            checking.set(false);
            if (failure != null && !answered(failure)) {
                hung = true;
                onHung.accept("a session's command got no answer for " + checkTimeoutMillis + " ms or more, and a"
                        + " login got none either: " + rootOf(failure).getMessage());
                sweep(); // closes the connections that wait for it now, not a sweep later
            }
        });
    }

    /** Whether the check's failure is the server's own answer (full, refusing the login): then it is not hung. */
    private static boolean answered(Throwable failure) {
        return rootOf(failure) instanceof BackendException e && e.serverError() != null;
    }

    private static Throwable rootOf(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    /** The backend is up again: its server answers. */
    void serverAnswers() {
        hung = false;
    }

    boolean isHung() {
        return hung;
    }

    void stop() {
        schedule.cancel(false);
    }
}
