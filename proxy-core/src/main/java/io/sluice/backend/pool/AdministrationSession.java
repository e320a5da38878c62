package io.sluice.backend.pool;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Promise;
import io.sluice.backend.BackendConnection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * A connection of Sluice's own to one server, logged in as another account than the data source's (a group's
 * {@code administration} account), kept open between batches of statements: what a failover needs to hold a named
 * lock ({@code GET_LOCK}) on a server while it reads the others and then promotes. Closing it releases the lock (the
 * server drops a connection's locks with it), and so does a failed statement, which closes it. Not pooled, never
 * read-only, on the pool's check loop.
 */
public final class AdministrationSession implements AutoCloseable {
    private final BackendConnection connection;
    private final EventLoop loop;

    private AdministrationSession(BackendConnection connection, EventLoop loop) {
        this.connection = connection;
        this.loop = loop;
    }

    /** Logs in to {@code pool}'s server as {@code username}; fails when it cannot within {@code timeoutMillis}. */
    public static CompletableFuture<AdministrationSession> open(BackendPool pool, String username, String password,
            long timeoutMillis) {
        CompletableFuture<AdministrationSession> outcome = new CompletableFuture<>();
        EventLoopPool checks = pool.checks();
        EventLoop loop = checks.loop();
        loop.execute(() -> {
            Promise<BackendConnection> ready = loop.newPromise();
            ready.addListener(f -> {
                if (f.isSuccess()) {
                    outcome.complete(new AdministrationSession((BackendConnection) f.getNow(), loop));
                } else {
                    outcome.completeExceptionally(f.cause());
                }
            });
            pool.connector().connect(checks, pool.defaultKey(), null, ready, timeoutMillis, false,
                    new String[] {username, password});
        });
        return outcome;
    }

    /**
     * Runs {@code statements} one after the other; the first refused one fails the whole and closes the session.
     *
     * @return each statement's rows by column name (empty for a statement without rows)
     */
    public CompletableFuture<List<Map<String, String>>[]> run(List<String> statements, long timeoutMillis) {
        CompletableFuture<List<Map<String, String>>[]> outcome = new CompletableFuture<>();
        loop.execute(() -> new AccountStatements(connection, statements, outcome, true).start(loop, timeoutMillis));
        return outcome;
    }

    /** Closes the connection: the server releases the named locks it held. */
    @Override
    public void close() {
        loop.execute(() -> {
            connection.markIdle();
            connection.close();
        });
    }
}
