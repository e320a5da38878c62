package io.sluice.backend.pool;

import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.EventLoop;
import java.util.function.BiFunction;

/**
 * Test access to the pool's one seam, {@link BackendConnector.ChannelOpener}, which is package-private so that it is
 * no part of Sluice's API: this class sits in the pool's package (in the test sources) for tests elsewhere to reach it.
 * With it, the real pool opens its connections on in-memory channels served by a scripted server
 * ({@code io.sluice.testing.ScriptedBackend}); everything above the channel, from the login to the pool's
 * bookkeeping, is Sluice's own.
 */
public final class ScriptedDialing {
    private ScriptedDialing() {
    }

    /**
     * Makes {@code pool} open each connection with {@code opener} instead of a TCP connect.
     *
     * @param opener given the loop the connection must run on and its handler (Sluice's {@code BackendConnection}),
     *     registers a channel with that handler on that loop and returns the registration, which completes once the
     *     channel is connected (or fails, as a refused connect)
     */
    public static void openWith(BackendPool pool, BiFunction<EventLoop, ChannelHandler, ChannelFuture> opener) {
        pool.connector().openWith((loop, connection, endpoint, timeoutMillis) -> opener.apply(loop, connection));
    }
}
