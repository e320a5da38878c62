package io.sluice.frontend;

import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.SessionKey;
import io.sluice.backend.TextQuery;
import io.sluice.backend.pool.EventLoopPool;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One text query of Sluice's own on a connection of a read/write split session's primary, taken from the primary's
 * pool on the session's loop for that query only and given back as it was: {@code causalReads: GLOBAL} reads the
 * primary's GTID position with it before a read on a replica (decision 102). The connection is never bound to the
 * session, so the session's own connection (the replica's, being prepared) is untouched.
 */
final class PrimaryQuery {

    private PrimaryQuery() {
    }

    /**
     * Runs {@code sql} on a connection of {@code primary}. Exactly one of {@code rows} and {@code failed} is told,
     * once, on the pool's loop.
     */
    static void run(EventLoopPool primary, SessionKey key, String schema, String sql,
            Consumer<List<Map<String, String>>> rows, Consumer<BackendException> failed) {
        primary.acquire(key, schema).addListener(f -> {
            if (!f.isSuccess()) {
                Throwable cause = f.cause();
                failed.accept(cause instanceof BackendException be ? be
                        : new BackendException("no connection of the primary: " + cause.getMessage(), cause));
                return;
            }
            BackendConnection connection = (BackendConnection) f.getNow();
            connection.run(new TextQuery(sql, key.deprecateEof(), result -> {
                primary.returnAsIs(connection); // a read of a global variable leaves the connection as it was
                rows.accept(result);
            }, failure -> {
                primary.returnAsIs(connection); // refused: pooled again; broken: closed there, as in any doubt
                failed.accept(failure);
            }));
        });
    }
}
