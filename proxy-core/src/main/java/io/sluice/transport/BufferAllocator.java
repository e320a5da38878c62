package io.sluice.transport;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;

/**
 * The allocator behind every client and backend channel, and so behind every read buffer the relay passes on.
 *
 * <p>Netty 4.2's default is its adaptive allocator, built for many threads (virtual threads among them) sharing
 * size-class magazines. Sluice allocates on a handful of event-loop threads, twice per query (one read on each
 * socket), and releases on the same thread once the write is done: the pooled allocator's per-thread caches serve
 * that with less work. Profiled with sysbench point_select, the adaptive allocator's {@code allocate} was the
 * largest single user-space cost of the relay (about 11% of its samples), and the pooled allocator took about 9%
 * off Sluice's user-space CPU per query (docs/benchmarks.md, "What helped"; docs/decisions/050-pooled-allocator-and-quiet-loop-timers.md).
 *
 * <p>Setting {@code -Dio.netty.allocator.type} (to {@code adaptive}, {@code pooled} or {@code unpooled}) hands the
 * choice back to Netty: Sluice then uses {@link ByteBufAllocator#DEFAULT}.
 */
public final class BufferAllocator {
    /** The allocator channels use; see the class comment. */
    public static final ByteBufAllocator CHANNELS = System.getProperty("io.netty.allocator.type") == null
            ? PooledByteBufAllocator.DEFAULT : ByteBufAllocator.DEFAULT;

    private BufferAllocator() {
    }
}
