package io.sluice.testing;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.concurrent.TimeUnit;

/**
 * The one event loop of a scripted test, run by the test's own thread. Every {@link MemoryChannel} of the test, client
 * and backend, is registered on it, as Sluice registers a session's backend connections on its client's loop.
 * Nothing runs by itself: a scripted peer delivers an I/O event, then {@link #runTasks()} runs what Sluice queued
 * meanwhile, as the rest of a loop turn would. The clock is frozen, so timers (login and pool timeouts, the pool's
 * housekeeping) fire only when a test {@link #advance advances} it: runs are the same every time.
 *
 * <p>It borrows the loop of an idle {@code EmbeddedChannel}, Netty's deterministic loop (its class is not public);
 * that channel never reads or writes.
 */
public final class ScriptedLoop implements AutoCloseable {
    private static final int MAX_ROUNDS = 1000;

    private final EmbeddedChannel anchor = new EmbeddedChannel();

    public ScriptedLoop() {
        anchor.freezeTime();
    }

    /** The loop, for the pool and for whatever Sluice schedules. */
    public EventLoop loop() {
        return anchor.eventLoop();
    }

    /** Registers {@code channel} on the loop; it is active (connected) at once. */
    public ChannelFuture register(Channel channel) {
        ChannelFuture registered = loop().register(channel);
        if (!registered.isSuccess()) {
            throw new IllegalStateException("could not register " + channel, registered.cause());
        }
        return registered;
    }

    /** Runs the queued tasks, and those they queue, and the timers that are due, until none is left. */
    public void runTasks() {
        for (int round = 0; round < MAX_ROUNDS; round++) {
            anchor.runPendingTasks();
            if (!anchor.hasPendingTasks()) {
                anchor.checkException();
                return;
            }
        }
        throw new IllegalStateException("tasks still queued after " + MAX_ROUNDS + " rounds: a task that requeues itself");
    }

    /** Moves the frozen clock on by {@code millis} and runs what became due. */
    public void advance(long millis) {
        anchor.advanceTimeBy(millis, TimeUnit.MILLISECONDS);
        runTasks();
    }

    /** Cancels what is still scheduled (timers of connections and waiters) and lets the loop go. */
    @Override
    public void close() {
        runTasks();
        anchor.finishAndReleaseAll();
    }
}
