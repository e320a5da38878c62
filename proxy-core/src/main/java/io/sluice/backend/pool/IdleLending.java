package io.sluice.backend.pool;

import io.netty.util.concurrent.Promise;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.InitDb;
import io.sluice.backend.Ping;
import io.sluice.backend.SessionKey;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Lends a connection from a loop's {@link IdleConnections}: one idle for long is pinged first (a server stopped or
 * hung meanwhile would take the session's first command and never answer), and the session's schema is selected on
 * it when it has another one. A connection that fails either is closed and another lent in its place; one whose
 * session gave up meanwhile goes back to the idle list. Runs on the pool's loop, for its {@link EventLoopPool}.
 */
final class IdleLending {
    private static final Logger log = LoggerFactory.getLogger(EventLoopPool.class);

    private final EventLoopPool pool;
    private final BackendPool parent;
    private final IdleConnections idle;

    IdleLending(EventLoopPool pool, BackendPool parent, IdleConnections idle) {
        this.pool = pool;
        this.parent = parent;
        this.idle = idle;
    }

    /**
     * Lends an idle connection of {@code key}, selecting {@code schema} on it first if it has another one.
     *
     * @return whether one was found (the promise is then completed, now or once the schema is selected)
     */
    boolean serve(SessionKey key, String schema, Promise<BackendConnection> promise) {
        BackendConnection connection = idle.take(key, schema);
        if (connection == null) {
            return false;
        }
        connection.markHeld();
        if (parent.timeouts().needsCheckBeforeLending(connection)) {
            checkThenLend(connection, key, schema, promise);
        } else {
            lendIdle(connection, key, schema, promise);
        }
        return true;
    }

    /**
     * Pings a connection idle for long before lending it: a server that was stopped or hung meanwhile would take the
     * session's first command and never answer. One that does not answer in time is closed, and another connection
     * lent in its place (a new one to a hung server fails its login, and the session fails over).
     */
    private void checkThenLend(BackendConnection connection, SessionKey key, String schema,
            Promise<BackendConnection> promise) {
        ScheduledFuture<?>[] timer = new ScheduledFuture<?>[1];
        Ping ping = new Ping(error -> {
            if (timer[0] != null) {
                timer[0].cancel(false);
            }
            if (error == null) {
                lendIdle(connection, key, schema, promise);
                return;
            }
            log.debug("closing {}: idle for long and its ping failed: {}", connection, error.getMessage());
            connection.close();
            if (!promise.isDone() && !pool.shutDown) {
                pool.lend(key, schema, promise);
            }
        });
        connection.run(ping);
        if (connection.runsOwnCommand()) { // else it failed at once and the callback ran
            timer[0] = pool.loop().schedule(() -> {
                log.debug("closing {}: no answer to its ping within {} ms", connection,
                        parent.timeouts().idleCheckTimeoutMillis());
                connection.channel().close(); // fails the ping, whose callback lends another
            }, parent.timeouts().idleCheckTimeoutMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Lends an idle connection taken from the list, selecting {@code schema} on it first if it has another one. */
    private void lendIdle(BackendConnection connection, SessionKey key, String schema,
            Promise<BackendConnection> promise) {
        if (Objects.equals(connection.state().schema(), schema)) {
            if (!promise.trySuccess(connection)) {
                pool.offer(connection); // the session gave up while the connection was checked
            }
            return;
        }
        connection.run(new InitDb(schema, error -> {
            if (error == null) {
                connection.state().schema(schema);
                if (!promise.trySuccess(connection)) {
                    pool.offer(connection); // the session gave up (timed out, left) while the schema was selected
                }
            } else if (error.serverError() == null && !pool.shutDown) {
                // It broke before answering: the server had ended it while it was idle (a restart, wait_timeout) and
                // its close was not seen yet. Nothing of the session's reached it, and it is closed: lend another.
                if (!promise.isDone()) {
                    pool.lend(key, schema, promise);
                }
            } else {
                pool.offer(connection); // a refused COM_INIT_DB leaves the connection as it was
                promise.tryFailure(error);
            }
        }));
    }
}
