package io.sluice.backend.pool;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.TextQuery;
import io.sluice.balancer.replication.ReplicationReading;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Sluice's own work with a {@link BackendPool}'s server, each on a connection of its own on the check loop, apart
 * from the loops that relay client traffic and not counted in {@code maxPoolSize} (a full pool still passes its
 * checks): health checks, replication readings, a switchover's statements, account queries. Called from any thread;
 * the work runs on the check loop.
 */
public final class OwnConnections {
    private final BackendPool pool;
    private final EventLoopPool checks;

    OwnConnections(BackendPool pool, EventLoopPool checks) {
        this.pool = pool;
        this.checks = checks;
    }

    /**
     * One health check: connect, log in and quit, within {@code timeoutMillis}. The connection does not count
     * against {@code maxPoolSize}, so a full pool still passes its checks.
     */
    public CompletableFuture<Void> check(long timeoutMillis) {
        CompletableFuture<Void> outcome = new CompletableFuture<>();
        EventLoop loop = checks.loop();
        loop.execute(() -> {
            Promise<Void> done = loop.newPromise();
            done.addListener(f -> {
                if (f.isSuccess()) {
                    outcome.complete(null);
                } else {
                    outcome.completeExceptionally(f.cause());
                }
            });
            checks.check(timeoutMillis, done);
        });
        return outcome;
    }

    /**
     * Reads the server's replication state (a read/write split group's replica watch), on the check loop, on a
     * connection of its own; an unreachable reading when it cannot.
     */
    public CompletableFuture<ReplicationReading> readReplication(long timeoutMillis) {
        CompletableFuture<ReplicationReading> outcome = new CompletableFuture<>();
        EventLoop loop = checks.loop();
        loop.execute(() -> {
            Promise<ReplicationReading> done = loop.newPromise();
            done.addListener(f -> outcome.complete(f.isSuccess() ? (ReplicationReading) f.getNow()
                    : ReplicationReading.unreachable(pool.dataSource().name(), String.valueOf(f.cause()))));
            checks.readReplication(timeoutMillis, done);
        });
        return outcome;
    }

    /**
     * Runs {@code statements} in order on the server, as {@code username} (Sluice's own account for a switchover, not
     * the data source's), on a connection of their own on the check loop, closed after. Completes with each
     * statement's rows (empty for one that answers OK), or exceptionally with the first refusal or failure; the
     * statements after a failed one do not run.
     */
    public CompletableFuture<List<Map<String, String>>[]> runAs(String username, String password,
            List<String> statements, long timeoutMillis) {
        CompletableFuture<List<Map<String, String>>[]> outcome = new CompletableFuture<>();
        EventLoop loop = checks.loop();
        loop.execute(() -> checks.runAs(new String[] {username, password}, statements, timeoutMillis, outcome));
        return outcome;
    }

    /**
     * Runs one query of Sluice's own on the check loop, on a connection of its own as the data source's account (not
     * counted in {@code maxPoolSize}): reading the server's accounts for {@code users: FROM_BACKEND}, its triggers and
     * views for transaction pooling. The connection logs in to {@code schema}: tables are named without it, since a
     * client's CLIENT_NO_SCHEMA, which the data source's connections may carry, makes the server drop {@code db.} from
     * {@code db.table}.
     *
     * @return the rows by column name, or a failure (the server unreachable, the query refused)
     */
    public CompletableFuture<List<Map<String, String>>> query(String schema, String sql, long timeoutMillis) {
        CompletableFuture<List<Map<String, String>>> outcome = new CompletableFuture<>();
        EventLoop loop = checks.loop();
        loop.execute(() -> {
            Promise<List<Map<String, String>>> done = loop.newPromise();
            done.addListener(f -> {
                if (f.isSuccess()) {
                    @SuppressWarnings("unchecked")
                    List<Map<String, String>> rows = (List<Map<String, String>>) f.getNow();
                    outcome.complete(rows);
                } else {
                    outcome.completeExceptionally(f.cause());
                }
            });
            Promise<BackendConnection> ready = loop.newPromise();
            ready.addListener(f -> {
                if (!f.isSuccess()) {
                    done.tryFailure(f.cause());
                    return;
                }
                BackendConnection connection = (BackendConnection) f.getNow();
                ScheduledFuture<?> timer = loop.schedule(connection::close, timeoutMillis, TimeUnit.MILLISECONDS);
                Runnable closeIt = () -> {
                    timer.cancel(false);
                    connection.markIdle();
                    connection.close();
                };
                connection.run(new TextQuery(sql, connection.key().deprecateEof(), rows -> {
                    closeIt.run();
                    done.trySuccess(rows);
                }, failure -> {
                    closeIt.run();
                    done.tryFailure(failure);
                }));
            });
            pool.connector().connect(checks, pool.defaultKey(), schema, ready, timeoutMillis, false);
        });
        return outcome;
    }
}
