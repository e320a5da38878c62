package io.sluice.backend.pool;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.TextQuery;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Statements of Sluice's own run one after the other on a connection logged in as another account than the data
 * source's ({@link BackendPool#runAs}): a switchover's {@code SET GLOBAL read_only}, {@code CHANGE MASTER TO}. One at a
 * time, so that the statements after a refused one do not run; the connection is closed after the last, or on the
 * first failure, or when the whole exceeds its time; or, for an {@link AdministrationSession}, kept open after the
 * last (a named lock it took stays held) and closed only on a failure.
 */
final class AccountStatements {
    private final BackendConnection connection;
    private final List<String> statements;
    private final CompletableFuture<List<Map<String, String>>[]> outcome;
    private final List<Map<String, String>>[] results;
    private final boolean keepOpen;
    private ScheduledFuture<?> timer;
    private int next;

    @SuppressWarnings("unchecked")
    AccountStatements(BackendConnection connection, List<String> statements,
            CompletableFuture<List<Map<String, String>>[]> outcome) {
        this(connection, statements, outcome, false);
    }

    @SuppressWarnings("unchecked")
    AccountStatements(BackendConnection connection, List<String> statements,
            CompletableFuture<List<Map<String, String>>[]> outcome, boolean keepOpen) {
        this.keepOpen = keepOpen;
        this.connection = connection;
        this.statements = List.copyOf(statements);
        this.outcome = outcome;
        this.results = new List[statements.size()];
    }

    /** Runs the statements; on the connection's loop. */
    void start(EventLoop loop, long timeoutMillis) {
        timer = loop.schedule(() -> fail(new BackendException(connection.dataSourceName() + ": no answer to "
                + statements.get(Math.min(next, statements.size() - 1)) + " within " + timeoutMillis + " ms")),
                timeoutMillis, TimeUnit.MILLISECONDS);
        runNext();
    }

    private void runNext() {
        if (outcome.isDone()) {
            return;
        }
        if (next == statements.size()) {
            timer.cancel(false);
            if (!keepOpen) {
                connection.markIdle();
                connection.close();
            }
            outcome.complete(results);
            return;
        }
        int index = next;
        connection.run(new TextQuery(statements.get(index), connection.key().deprecateEof(), rows -> {
            results[index] = rows;
            next = index + 1;
            runNext();
        }, this::fail));
    }

    private void fail(BackendException cause) {
        if (timer != null) {
            timer.cancel(false);
        }
        connection.close();
        outcome.completeExceptionally(cause);
    }
}
