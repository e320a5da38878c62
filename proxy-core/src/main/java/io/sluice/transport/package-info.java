/**
 * The Netty transport (epoll, io_uring or NIO) and the relay event-loop group, whose loops read no clock on a turn
 * that only does I/O (decision 051).
 *
 * <p>Layer: the foundation; it uses {@code config} only.
 */
package io.sluice.transport;
