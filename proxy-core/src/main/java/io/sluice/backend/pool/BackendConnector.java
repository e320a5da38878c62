package io.sluice.backend.pool;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.util.concurrent.Promise;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendEndpoint;
import io.sluice.backend.BackendException;
import io.sluice.backend.ConnectionState;
import io.sluice.backend.SessionKey;
import io.sluice.protocol.Capabilities;
import io.sluice.protocol.Packets.BackendError;
import io.sluice.transport.TransportKind;

/**
 * Opens connections to one data source: the TCP connect on the loop that will use the connection, with the socket
 * options and the read-buffer sizing below, then the login the connection drives itself.
 */
final class BackendConnector {
    /**
     * The smallest read from a server: 16 KiB, the size of the pieces MySQL and MariaDB write a result in
     * ({@code net_buffer_length}). Netty's default guess shrinks to a few hundred bytes after a run of small answers,
     * and then needs three reads (and grows back) for the next result of a few kilobytes; HAProxy reads into 16 KiB
     * buffers too. The buffer only lives until its bytes are written to the client.
     */
    static final int SERVER_READ_MIN_BYTES = 16 * 1024;
    /** The largest read from a server: Netty's default, 64 KiB (256 KiB measured no better on range_10000). */
    static final int SERVER_READ_MAX_BYTES = 64 * 1024;
    /**
     * Reads per readiness event at most, while reads fill their buffer: Netty's default for TCP channels. It must be
     * set here: Netty applies a channel type's default only to the allocator it creates itself, and an allocator given
     * as an option keeps its own, which is 1. With 1, a read that filled its 64 KiB ended the batch and the loop went
     * back to {@code epoll_wait} for the rest of a large result (range_10000: 42 wake-ups for 50 reads per query).
     */
    static final int SERVER_READS_PER_WAKE_UP = 16;
    /** Shared: it keeps no state of its own, each channel gets its own handle. */
    private static final AdaptiveRecvByteBufAllocator SERVER_READS =
            new AdaptiveRecvByteBufAllocator(SERVER_READ_MIN_BYTES, SERVER_READ_MIN_BYTES, SERVER_READ_MAX_BYTES);

    static {
        SERVER_READS.maxMessagesPerRead(SERVER_READS_PER_WAKE_UP);
    }

    /**
     * How a connection's channel comes to be: registered on a loop, its handler the {@link BackendConnection},
     * connected to the server. Sluice always connects a socket ({@link #connectSocket}); the seam exists for tests
     * that put a scripted server on an in-memory channel in its place (see {@code ScriptedBackend} in the test
     * sources), so that the pool, the login and the relay they check are Sluice's own.
     */
    interface ChannelOpener {
        /** @return completes once the channel is registered and connected, or fails */
        ChannelFuture open(EventLoop loop, BackendConnection connection, BackendEndpoint endpoint, long timeoutMillis);
    }

    private final BackendPool pool;
    private final TransportKind transport;
    private final int connBufferSize;
    private ChannelOpener opener = this::connectSocket;

    BackendConnector(BackendPool pool, TransportKind transport, int connBufferSize) {
        this.pool = pool;
        this.transport = transport;
        this.connBufferSize = connBufferSize;
    }

    /**
     * Opens a connection on {@code owner}'s loop, logged in with {@code schema} selected; {@code ready} completes
     * when it can be lent, or fails.
     *
     * @param pooled whether it holds a {@code maxPoolSize} slot (reserved by the caller); a health check's does not
     */
    void connect(EventLoopPool owner, SessionKey key, String schema, Promise<BackendConnection> ready,
            long timeoutMillis, boolean pooled) {
        connect(owner, key, schema, ready, timeoutMillis, pooled, null);
    }

    /**
     * As {@link #connect(EventLoopPool, SessionKey, String, Promise, long, boolean)}, logged in as {@code account}
     * (a user name and password) instead of the data source's account when not {@code null}: Sluice's own work on
     * the server (a switchover's commands), never pooled, never read-only.
     */
    void connect(EventLoopPool owner, SessionKey key, String schema, Promise<BackendConnection> ready,
            long timeoutMillis, boolean pooled, String[] account) {
        boolean transactionPooling = pooled && pool.transactionPooling();
        // Transaction pooling follows session state only through the trackers, which need CLIENT_SESSION_TRACK.
        boolean tracksState = transactionPooling && Capabilities.has(key.capabilities(),
                Capabilities.CLIENT_SESSION_TRACK);
        // Session pooling maps statements too, once a session moved to another server (decision 106).
        ConnectionState state = new ConnectionState(schema, tracksState,
                pooled ? pool.preparedStatementCacheSize() : 0);
        state.readOnly(account == null && pool.servesReplica()); // a replica's: read-only from login on (decision 110)
        BackendEndpoint endpoint = pool.endpoint(); // one read: a reload may replace it meanwhile
        if (account != null) {
            endpoint = new BackendEndpoint(endpoint.dataSource(), endpoint.host(), endpoint.port(), account[0],
                    account[1], endpoint.sslMode(), endpoint.tls());
        }
        BackendConnection connection = new BackendConnection(endpoint, key, owner, ready, timeoutMillis, pooled,
                state);
        BackendError refused = key.account() == null ? null : key.account().refusal() == null ? null
                : key.account().refusal().refused();
        if (refused != null) {
            // The server refused this learned credential already: asked again, it would only count one more failed
            // login against the account (decision 171).
            connection.connectFailed(new BackendException("login refused", refused));
            return;
        }
        ChannelFuture connect = opener.open(owner.loop(), connection, endpoint, timeoutMillis);
        connect.addListener(f -> {
            if (!f.isSuccess()) {
                connection.connectFailed(f.cause());
            }
        });
    }

    /** The TCP connect, on the loop that will use the connection, with the options above. */
    private ChannelFuture connectSocket(EventLoop loop, BackendConnection connection, BackendEndpoint endpoint,
            long timeoutMillis) {
        return new Bootstrap()
                .group(loop)
                .channelFactory(transport.socketChannelFactory())
                // TCP_NODELAY is every transport's default (NoDelayByDefaultTest): not set again
                .option(ChannelOption.SO_KEEPALIVE, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) Math.min(Integer.MAX_VALUE, timeoutMillis))
                .option(ChannelOption.WRITE_BUFFER_WATER_MARK,
                        new WriteBufferWaterMark(connBufferSize / 2, connBufferSize))
                .option(ChannelOption.RCVBUF_ALLOCATOR, SERVER_READS)
                .handler(connection)
                .connect(endpoint.host(), endpoint.port());
    }

    /** Tests only: opens connections' channels with {@code replacement} instead of sockets. */
    void openWith(ChannelOpener replacement) {
        opener = replacement;
    }
}
