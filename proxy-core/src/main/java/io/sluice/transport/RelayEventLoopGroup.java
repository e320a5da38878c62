package io.sluice.transport;

import io.netty.channel.IoEventLoop;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SingleThreadIoEventLoop;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadFactory;

/**
 * Netty's multi-threaded event-loop group, with loops that read no clock on a turn that only does I/O.
 *
 * <p>Why: a relay loop turns about once per query. In Netty 4.2 each turn of an epoll loop read the clock about six
 * times, for two features Sluice does not use; under sysbench read_write that was most of the clock reads behind
 * the 9% of Sluice's user-space CPU spent in {@code clock_gettime}. Two changes to Netty's own loop remove them:
 * <ul>
 *   <li><b>No one-second deadline.</b> A 4.2 loop with nothing scheduled still asks to be woken one second from
 *   now ({@code SingleThreadEventExecutor.deadlineNanos()} returns "now + 1 s"). That deadline moves on every turn,
 *   so the epoll handler takes its timer path every turn: clock reads, and an {@code epoll_pwait2} with a timeout
 *   instead of a plain wait. Netty 4.1 had removed this wake-up (netty#9605: "we're sure it's no longer needed");
 *   4.2's {@code IoHandler} split brought it back. Here {@link RelayEventLoop#deadlineNanos()} returns the next
 *   scheduled task's deadline, or {@code -1} ("nothing on the calendar", which the epoll and io_uring handlers
 *   already understand). A task scheduled from another thread still reaches a sleeping loop at once: Netty hands it
 *   over through the loop's task queue, which wakes the loop. A task scheduled on the loop is seen before the loop
 *   next waits. NIO loops do not use the deadline and behave as before.</li>
 *   <li><b>No suspension.</b> Netty 4.2 lets an auto-scaling group suspend a loop whose I/O handler can change
 *   threads (epoll, io_uring), and for that it times every turn's I/O: three more clock reads. Sluice's groups have
 *   a fixed number of loops and never suspend one. The handler factory is wrapped so that it reports no thread
 *   changes, which turns suspension, and the timing, off.</li>
 * </ul>
 * See decision 051.
 *
 * <p>And one fix: <b>a loop always closes its channels when it shuts down</b> (decision 058). Netty closes them in
 * its loop's {@code run()}, only on a turn that finds the shutdown already begun after its I/O step. A shutdown with
 * no quiet period that begins while the loop is running tasks ends the loop at the next
 * {@code confirmShutdown()} without that step: the channels' sockets stay open with no thread behind them, and a
 * client waits forever for an answer. {@link RelayEventLoop#confirmShutdown()} closes them first.
 */
public final class RelayEventLoopGroup extends MultiThreadIoEventLoopGroup {

    /**
     * @param threads how many loops
     * @param threadFactory names the loops' threads
     * @param ioHandlerFactory the transport's I/O handler
     */
    public RelayEventLoopGroup(int threads, ThreadFactory threadFactory, IoHandlerFactory ioHandlerFactory) {
        super(threads, threadFactory, withoutThreadChanges(ioHandlerFactory));
    }

    /** The same handlers, from a factory that does not claim they can change threads: see the class comment. */
    private static IoHandlerFactory withoutThreadChanges(IoHandlerFactory ioHandlerFactory) {
        return ioHandlerFactory::newHandler; // isChangingThreadSupported() keeps its default, false
    }

    @Override
    protected IoEventLoop newChild(Executor executor, IoHandlerFactory ioHandlerFactory, Object... args) {
        return new RelayEventLoop(this, executor, ioHandlerFactory);
    }

    /** One loop of the group: Netty's own, with the one-second deadline taken out and its channels closed at the end. */
    static final class RelayEventLoop extends SingleThreadIoEventLoop {

        RelayEventLoop(RelayEventLoopGroup parent, Executor executor, IoHandlerFactory ioHandlerFactory) {
            super(parent, executor, ioHandlerFactory);
        }

        /** The next scheduled task's deadline, or {@code -1} when none is scheduled: wait for I/O only. */
        @Override
        protected long deadlineNanos() {
            return nextScheduledTaskDeadlineNanos();
        }

        /**
         * Netty's check that a shutting-down loop may end, after closing what is still registered on it. Netty does
         * the same close in {@code run()}, but only when it sees the shutdown right after an I/O step; a shutdown
         * (quiet period 0) that began during the turn's tasks reaches this check first and ended the loop with its
         * channels open. Closing twice is harmless: a closed channel is no longer registered.
         */
        @Override
        protected boolean confirmShutdown() {
            if (isShuttingDown() && inEventLoop()) {
                ioHandler().prepareToDestroy();
            }
            return super.confirmShutdown();
        }

        /** For tests: {@link #deadlineNanos()} as the loop sees it; call it on the loop. */
        long deadlineForTest() {
            return deadlineNanos();
        }

        /** For tests: whether an auto-scaling group could suspend this loop. */
        boolean suspensionSupportedForTest() {
            return isSuspensionSupported();
        }

        /** For tests: how far ahead {@link #deadlineNanos()} is; call it on the loop, with a task scheduled. */
        long nanosToDeadlineForTest() {
            return deadlineNanos() - getCurrentTimeNanos();
        }
    }
}
