package io.sluice.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFactory;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.Future;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.transport.RelayEventLoopGroup.RelayEventLoop;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * The relay loops wait for I/O without Netty 4.2's one-second deadline, scheduled tasks still run, and a loop that
 * shuts down closes its channels. The wake-up
 * count comes from the kernel ({@code voluntary_ctxt_switches} of the loop's thread), so the tests need Linux and
 * the native transport they name.
 */
class RelayEventLoopGroupTest {

    /** How long a loop is left idle: long enough for Netty's one-second deadline to wake a plain loop 3 times. */
    private static final long IDLE_MILLIS = 3_300;

    @Test
    void deadlineIsTheNextScheduledTaskOrNone() throws Exception {
        assumeTrue(Epoll.isAvailable(), "epoll");
        EventLoopGroup group = new RelayEventLoopGroup(1, new DefaultThreadFactory("relay-test"),
                EpollIoHandler.newFactory());
        try {
            RelayEventLoop loop = (RelayEventLoop) group.next();
            assertThat(loop.submit(loop::deadlineForTest).get()).isEqualTo(-1L);
            assertThat(loop.suspensionSupportedForTest()).as("suspension (and its per-turn timing)").isFalse();

            ScheduledFuture<?> later = loop.schedule(() -> { }, 60, TimeUnit.SECONDS);
            assertThat(loop.submit(loop::nanosToDeadlineForTest).get())
                    .isBetween(TimeUnit.SECONDS.toNanos(50), TimeUnit.SECONDS.toNanos(60));

            later.cancel(false);
            assertThat(loop.submit(loop::deadlineForTest).get()).isEqualTo(-1L);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void idleEpollLoopSleepsUntilThereIsWork() throws Exception {
        assumeTrue(Epoll.isAvailable(), "epoll");
        assertIdleLoopSleeps(EpollIoHandler::newFactory);
    }

    @Test
    void idleIoUringLoopSleepsUntilThereIsWork() throws Exception {
        assumeTrue(IoUring.isAvailable(), "io_uring");
        assertIdleLoopSleeps(IoUringIoHandler::newFactory);
    }

    /**
     * A plain Netty loop wakes about once a second with nothing to do; a relay loop does not. A task scheduled from
     * another thread while the relay loop sleeps still runs, no earlier than asked.
     */
    private static void assertIdleLoopSleeps(Supplier<IoHandlerFactory> handler) throws Exception {
        EventLoopGroup plain = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("plain-test"),
                handler.get());
        EventLoopGroup relay = new RelayEventLoopGroup(1, new DefaultThreadFactory("relay-test"), handler.get());
        try {
            EventLoop plainLoop = plain.next();
            EventLoop relayLoop = relay.next();
            String plainTid = threadId(plainLoop);
            String relayTid = threadId(relayLoop);
            long plainBefore = voluntarySwitches(plainTid);
            long relayBefore = voluntarySwitches(relayTid);

            Thread.sleep(IDLE_MILLIS);

            long plainWakeups = voluntarySwitches(plainTid) - plainBefore;
            long relayWakeups = voluntarySwitches(relayTid) - relayBefore;
            // Up to 2: the loop going to sleep right after the task that read its thread id, and (io_uring) one
            // completion of the ring's own once the machine is busy. A plain loop wakes every second, at least 3 times.
            assertThat(relayWakeups).as("wake-ups of an idle relay loop in %d ms", IDLE_MILLIS).isLessThanOrEqualTo(2);
            assertThat(plainWakeups)
                    .as("wake-ups of an idle plain Netty loop in %d ms; if this fails, Netty no longer wakes idle "
                            + "loops every second and RelayEventLoopGroup can go", IDLE_MILLIS)
                    .isGreaterThanOrEqualTo(3);

            long scheduledAt = System.nanoTime();
            AtomicLong ranAt = new AtomicLong();
            CountDownLatch ran = new CountDownLatch(1);
            relayLoop.schedule(() -> {
                ranAt.set(System.nanoTime());
                ran.countDown();
            }, 200, TimeUnit.MILLISECONDS);
            assertThat(ran.await(10, TimeUnit.SECONDS)).as("the scheduled task ran").isTrue();
            assertThat(ranAt.get() - scheduledAt).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(200));
        } finally {
            plain.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            relay.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @Test
    void epollLoopClosesItsChannelsWhenItsShutdownBeginsDuringATask() throws Exception {
        assumeTrue(Epoll.isAvailable(), "epoll");
        assertShutdownClosesChannels(EpollIoHandler.newFactory(), EpollServerSocketChannel::new);
    }

    @Test
    void nioLoopClosesItsChannelsWhenItsShutdownBeginsDuringATask() throws Exception {
        assertShutdownClosesChannels(NioIoHandler.newFactory(), NioServerSocketChannel::new);
    }

    /**
     * Sluice.close() hands each loop a task (closing the pools) right before it shuts the group down with no quiet
     * period. When the shutdown begins while a loop runs such a task, Netty's own loop ended without closing its
     * channels: the accepted client's socket stayed open, and the client waited for ever.
     */
    private static void assertShutdownClosesChannels(IoHandlerFactory handler,
            ChannelFactory<? extends ServerChannel> serverChannel) throws Exception {
        EventLoopGroup group = new RelayEventLoopGroup(1, new DefaultThreadFactory("relay-test"), handler);
        CountDownLatch accepted = new CountDownLatch(1);
        Channel server = new ServerBootstrap()
                .group(group)
                .channelFactory(serverChannel)
                .childHandler(new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(ChannelHandlerContext ctx) {
                        accepted.countDown();
                    }
                })
                .bind("127.0.0.1", 0).sync().channel();
        try (Socket client = new Socket("127.0.0.1", ((InetSocketAddress) server.localAddress()).getPort())) {
            assertThat(accepted.await(10, TimeUnit.SECONDS)).as("the client was accepted").isTrue();
            CountDownLatch taskRunning = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            group.next().execute(() -> {
                taskRunning.countDown();
                try {
                    release.await(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            assertThat(taskRunning.await(10, TimeUnit.SECONDS)).isTrue();

            Future<?> terminated = group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
            release.countDown();

            assertThat(terminated.await(10, TimeUnit.SECONDS)).as("the loop ended").isTrue();
            assertThat(server.isOpen()).as("the listener is closed").isFalse();
            client.setSoTimeout(5_000);
            assertThat(client.getInputStream().read()).as("the client reads the end of the stream").isEqualTo(-1);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    /** The kernel's id of the loop's thread, read on the loop. */
    private static String threadId(EventLoop loop) throws Exception {
        return loop.submit(() -> Files.readSymbolicLink(Path.of("/proc/thread-self")).getFileName().toString())
                .get(10, TimeUnit.SECONDS);
    }

    /** How many times the thread has gone to sleep of its own accord: once per wait that had to block. */
    private static long voluntarySwitches(String tid) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/task", tid, "status"))) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
                return Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
            }
        }
        throw new IllegalStateException("no voluntary_ctxt_switches for thread " + tid);
    }
}
