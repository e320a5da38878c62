package io.sluice.frontend;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.balancer.replication.Roles;
import io.sluice.routing.ReadWriteGroup;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * One session's wait for its read/write split group's primary (issue #40): while the group has none that takes
 * writes, a statement that needs it waits here, up to {@code primaryWaitMilliseconds} from the first time its acquire
 * found none, then fails with {@link NoPrimary}. Made only when a wait begins; a group with a primary costs nothing.
 * On the session's event loop.
 */
final class PrimaryWait {
    private final ReadWriteGroup group;
    private final EventLoop loop;
    private final long startNanos;
    private Object waiter;
    private ScheduledFuture<?> timeout;
    private boolean over;

    private PrimaryWait(ReadWriteGroup group, EventLoop loop, long startNanos) {
        this.group = group;
        this.loop = loop;
        this.startNanos = startNanos;
    }

    /** A wait that begins now. */
    static PrimaryWait begin(ReadWriteGroup group, EventLoop loop) {
        return new PrimaryWait(group, loop, System.nanoTime());
    }

    /**
     * Waits again (the first time, or after a wake that found the primary gone again) until the group's primary takes
     * writes, then runs {@code retry}; past the deadline {@code failed} gets the error instead. Exactly one of them
     * runs, once, on the loop.
     */
    void await(Roles seen, Runnable retry, Consumer<NoPrimary> failed) {
        long waited = System.nanoTime() - startNanos;
        long left = group.config().primaryWait().toNanos() - waited;
        if (left <= 0) {
            failed.accept(new NoPrimary(group.name(), seen, TimeUnit.NANOSECONDS.toMillis(waited)));
            return;
        }
        over = false;
        waiter = group.awaitPrimary(loop, () -> {
            if (!over) {
                over = true;
                timeout.cancel(false);
                retry.run();
            }
        });
        timeout = loop.schedule(() -> {
            if (!over) {
                over = true;
                group.stopWaiting(waiter);
                failed.accept(new NoPrimary(group.name(), group.roles(),
                        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos)));
            }
        }, left, TimeUnit.NANOSECONDS);
    }
}
