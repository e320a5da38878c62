package io.sluice.config;

/** The Netty transport that carries both client and backend sockets. */
public enum Transport {
    /** io_uring where the kernel offers it, then epoll, then NIO. */
    AUTO,
    /** Linux epoll. */
    EPOLL,
    /** Linux io_uring (kernel 5.14 or later). */
    IO_URING,
    /** The JDK's NIO selector, available everywhere. */
    NIO
}
