package io.sluice.benchmark;

import io.netty.channel.Channel;
import io.netty.channel.ManualIoEventLoop;
import io.netty.util.concurrent.Future;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BorrowingSession;
import io.sluice.backend.pool.BackendPool;
import io.sluice.backend.pool.EventLoopPool;
import io.sluice.backend.SessionKey;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.Transport;
import io.sluice.transport.TransportKind;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A real {@link BackendPool} to a real server, on a Netty {@link ManualIoEventLoop} owned by the calling (JMH)
 * thread: the pool's methods must run on its loop, and this way the benchmark thread is that loop, so nothing in a
 * measurement hands work to another thread. The owner drives the loop's I/O with {@link #driveUntil}.
 */
final class LoopPool implements AutoCloseable {
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    final ManualIoEventLoop loop;
    final BackendPool pool;
    final EventLoopPool local;
    final SessionKey key;

    /** Opens {@code connections} connections (also the pool's maximum) and leaves them idle. */
    LoopPool(String url, String user, String password, SessionKey key, int connections, BorrowingSession
            session) {
        TransportKind transport = TransportKind.of(Transport.AUTO);
        this.loop = new ManualIoEventLoop(Thread.currentThread(), transport.ioHandlerFactory());
        this.key = key;
        // no idle timeout or lifetime: housekeeping must not retire connections during a run
        DataSourceConfig dataSource = new DataSourceConfig("bench", url, user, password, 5_000, 0, 0, connections, 0);
        this.pool = new BackendPool(dataSource, loop, transport, 32 * 1024, key, loop); // no health checks here
        this.local = pool.forLoop(loop);
        List<Future<BackendConnection>> opening = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            opening.add(local.acquire(key, null));
        }
        driveUntil(() -> opening.stream().allMatch(Future::isDone), "opening " + connections + " connections");
        List<BackendConnection> opened = new ArrayList<>();
        for (Future<BackendConnection> f : opening) {
            if (!f.isSuccess()) {
                opened.forEach(BackendConnection::close);
                close();
                throw new IllegalStateException("cannot open a backend connection to " + url + " as " + user
                        + " (is the server up?)", f.cause());
            }
            opened.add(f.getNow());
        }
        giveBack(opened, session, connections);
    }

    /** Lends each connection to {@code session} and releases it (a reset round trip), until all are idle. */
    void giveBack(List<BackendConnection> connections, BorrowingSession session, int idleAfter) {
        checkOwner();
        for (BackendConnection connection : connections) {
            connection.bind(session, null, null, null);
            local.resetAndReturn(connection);
        }
        connections.clear();
        driveUntil(() -> local.idleCount() == idleAfter, idleAfter + " connections idle");
    }

    /** An idle connection, taken synchronously; fails if none is idle. */
    BackendConnection takeIdle() {
        BackendConnection connection = local.acquire(key, null).getNow();
        if (connection == null) {
            throw new IllegalStateException("acquire was not served from an idle connection");
        }
        return connection;
    }

    void checkOwner() {
        if (!loop.inEventLoop()) {
            throw new IllegalStateException("JMH moved the benchmark to another thread; the pool's loop is owned by "
                    + "the thread that ran the trial setup");
        }
    }

    /** Runs the loop's I/O and tasks on this thread until {@code done}; a stuck server fails the run, not hangs it. */
    void driveUntil(BooleanSupplier done, String what) {
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("timed out after 10 s waiting for " + what);
            }
            loop.run(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    @Override
    public void close() {
        pool.close(0); // queues the shutdown on the loop, which only this thread runs
        driveUntil(() -> pool.openConnections() == 0, "connections closed");
        loop.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        driveUntil(loop::isTerminated, "loop terminated");
    }

    /** A session that only owns a client channel: enough to lend a connection. */
    static BorrowingSession session(Channel client) {
        return new BorrowingSession() {
            @Override
            public Channel clientChannel() {
                return client;
            }

            @Override
            public void onLocalInfileRequest() {
                throw new IllegalStateException("no LOCAL INFILE expected");
            }

            @Override
            public void onBackendLost(BackendConnection backend, boolean responseStarted) {
                throw new IllegalStateException("backend connection lost: " + backend);
            }

            @Override
            public void onResponsesRelayed() {
                // as a session pooling session: nothing to do between responses
            }

            @Override
            public void onBackendWritable() {
                // the benchmark's client never stops reading
            }

            @Override
            public String describeForLog() {
                return "benchmark";
            }
        };
    }
}
