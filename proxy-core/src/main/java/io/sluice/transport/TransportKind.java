package io.sluice.transport;

import io.netty.channel.ChannelFactory;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.sluice.config.ConfigException;
import io.sluice.config.Transport;
import java.util.concurrent.ThreadFactory;

/**
 * The Netty transport in use: its event-loop I/O handler and its socket channel classes. Client and backend sockets
 * always share one transport, because a backend channel must be registered on its client's event loop.
 *
 * @param name what logs and metrics call it
 * @param ioHandlerFactory creates the event loops' I/O handlers
 * @param serverChannelFactory creates listening sockets
 * @param socketChannelFactory creates backend sockets
 */
public record TransportKind(String name, IoHandlerFactory ioHandlerFactory,
        ChannelFactory<? extends ServerChannel> serverChannelFactory,
        ChannelFactory<? extends SocketChannel> socketChannelFactory) {

    /**
     * Resolves the configured transport. {@code AUTO} takes epoll on Linux and NIO elsewhere; io_uring is chosen
     * only when asked for, until the benchmark shows it ahead (see docs/benchmarks.md).
     *
     * @throws ConfigException when the asked-for native transport is not available here
     */
    public static TransportKind of(Transport transport) {
        switch (transport) {
            case EPOLL:
                if (!Epoll.isAvailable()) {
                    throw new ConfigException("server.transport: EPOLL (expected: available here; "
                            + Epoll.unavailabilityCause() + ")");
                }
                return epoll();
            case IO_URING:
                if (!IoUring.isAvailable()) {
                    throw new ConfigException("server.transport: IO_URING (expected: available here; "
                            + IoUring.unavailabilityCause() + ")");
                }
                return ioUring();
            case NIO:
                return nio();
            case AUTO:
            default:
                return Epoll.isAvailable() ? epoll() : nio();
        }
    }

    /**
     * Event loops of this transport, as Sluice runs them: see {@link RelayEventLoopGroup}.
     *
     * @param threads how many loops
     * @param threadFactory names the loops' threads
     */
    public EventLoopGroup newEventLoopGroup(int threads, ThreadFactory threadFactory) {
        return new RelayEventLoopGroup(threads, threadFactory, ioHandlerFactory);
    }

    private static TransportKind epoll() {
        return new TransportKind("epoll", EpollIoHandler.newFactory(), EpollServerSocketChannel::new,
                EpollSocketChannel::new);
    }

    private static TransportKind ioUring() {
        return new TransportKind("io_uring", IoUringIoHandler.newFactory(), IoUringServerSocketChannel::new,
                IoUringSocketChannel::new);
    }

    private static TransportKind nio() {
        return new TransportKind("nio", NioIoHandler.newFactory(), NioServerSocketChannel::new,
                NioSocketChannel::new);
    }
}
