package io.sluice.config;

/** The Netty transport that carries both client and backend sockets. */
public enum Transport {
    /** epoll on Linux, NIO elsewhere; io_uring only when asked for, until the benchmarks show it ahead. */
    AUTO,
    /** Linux epoll. */
    EPOLL,
    /** Linux io_uring (kernel 5.14 or later). */
    IO_URING,
    /** The JDK's NIO selector, available everywhere. */
    NIO
}
