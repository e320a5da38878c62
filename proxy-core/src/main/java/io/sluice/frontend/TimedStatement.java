package io.sluice.frontend;

import io.netty.util.concurrent.ScheduledFuture;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.KillQuery;
import io.sluice.backend.TextQuery;
import io.sluice.backend.pool.BackendPool;
import io.sluice.backend.pool.EventLoopPool;
import io.sluice.rules.QueryRule;
import io.sluice.statistics.StatementRecord;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A statement a {@code timeoutMilliseconds} rule matched, sent on a backend connection (issue #41 item 2, decision
 * 168): if its response has not ended when the time is up, it is cancelled from another connection of the same data
 * source and account, taken from the pool for that alone, as {@code max_statement_time} would end it: on MariaDB
 * {@code KILL QUERY ID} of its own query id, found while it has run at least the limit (so a statement that started
 * after it is never the one ended); on MySQL {@code KILL QUERY} of the connection's thread. The server then answers the statement with its own ERR 1317 (Query
 * execution was interrupted), which the client gets as the statement's response; the connection stays in step, so
 * nothing leaks into the next statement. It rides as the statement's record, so its end (which cancels the timer)
 * is known without a hook of its own in the relay; the statistics' record, when there is one, is told too.
 *
 * <p>The timer starts when Sluice sends the statement, the server's clock when the statement reaches it: a statement
 * that arrived late (a busy loop, a slow network, a queue behind Sluice's own command) has not yet run the limit when
 * the timer fires, or is not running yet. It is then looked for again when it will have, rather than left to run
 * (decision 198).
 */
final class TimedStatement implements StatementRecord {
    private static final Logger log = LoggerFactory.getLogger(TimedStatement.class);
    /** How many times the process list is read for one statement before it is left alone. */
    private static final int MAX_LOOKS = 10;

    private final StatementRecord statistics;
    private final QueryRule rule;
    private final BackendConnection connection;
    private final ClientSession session;
    private final BackendPool pool;
    private final boolean mariaDb;
    private ScheduledFuture<?> timer;
    private boolean ended;
    private int looks;

    private TimedStatement(StatementRecord statistics, QueryRule rule, BackendConnection connection,
            ClientSession session, BackendPool pool, boolean mariaDb) {
        this.statistics = statistics;
        this.mariaDb = mariaDb;
        this.rule = rule;
        this.connection = connection;
        this.session = session;
        this.pool = pool;
        this.timer = connection.channel().eventLoop().schedule(this::expired, rule.config().limit(),
                TimeUnit.MILLISECONDS);
    }

    /** Looks at the statement again after {@code millis}, unless it has been looked for often enough. */
    private void lookAgain(long millis) {
        if (++looks >= MAX_LOOKS) {
            log.debug("query rule {}: the statement on {} (thread {}) was not seen running {} ms; left alone",
                    rule.name(), connection.dataSourceName(), connection.serverConnectionId(), rule.config().limit());
            return;
        }
        timer = connection.channel().eventLoop().schedule(this::expired, Math.max(1, millis), TimeUnit.MILLISECONDS);
    }

    /** Arms the rule's timer for a statement about to be sent on {@code connection}: its record, to ride with it. */
    static TimedStatement start(StatementRecord statistics, QueryRule rule, BackendConnection connection,
            ClientSession session, BackendPool pool, boolean mariaDb) {
        return new TimedStatement(statistics, rule, connection, session, pool, mariaDb);
    }

    @Override
    public void completed(long nanos, long nowNanos, boolean failed, int warnings, long rows, long affectedRows,
            long statementId, boolean replica) {
        ended = true;
        timer.cancel(false);
        if (statistics != null) {
            statistics.completed(nanos, nowNanos, failed, warnings, rows, affectedRows, statementId, replica);
        }
    }

    /** The statement was not sent after all ({@link RuleHook#notSent}): its timer is disarmed. */
    @Override
    public void unsent() {
        ended = true;
        timer.cancel(false);
        if (statistics != null) {
            statistics.unsent();
        }
    }

    /** On the connection's loop: the time is up. A statement that ended, or whose connection broke, is left alone. */
    private void expired() {
        if (ended || !connection.isOpen() || pool == null) {
            return;
        }
        EventLoopPool own = pool.forLoop(connection.channel().eventLoop());
        own.acquire(session.key(), null).addListener(f -> {
            if (!f.isSuccess()) {
                failed("no connection to send KILL QUERY on: " + f.cause().getMessage());
                return;
            }
            BackendConnection killer = (BackendConnection) f.getNow();
            if (ended) {
                own.returnAsIs(killer); // it ended while a connection was taken
                return;
            }
            int thread = connection.serverConnectionId();
            if (!mariaDb) {
                kill(own, killer, "KILL QUERY " + thread);
                return;
            }
            // The statement's own query id, only once it has run as long as the limit: a statement that ended
            // meanwhile, and whatever runs on that thread after it, is never the one killed.
            long limit = rule.config().limit();
            String find = "SELECT QUERY_ID, TIME_MS FROM information_schema.PROCESSLIST WHERE ID = " + thread
                    + " AND COMMAND IN ('Query', 'Execute')";
            killer.run(new TextQuery(find, killer.key().deprecateEof(), rows -> {
                Map<String, String> running = rows.isEmpty() ? null : rows.get(0);
                long ran = running == null ? -1 : (long) Double.parseDouble(running.get("TIME_MS"));
                if (ended) {
                    own.returnAsIs(killer); // it ended on its own
                } else if (ran >= limit - 1) {
                    kill(own, killer, "KILL QUERY ID " + running.get("QUERY_ID"));
                } else {
                    // Not running yet, or not for the limit: it reached the server late, or it ended there and its
                    // response is still on the way (then its end stops the next look).
                    own.returnAsIs(killer);
                    lookAgain(running == null ? Math.max(1, limit / MAX_LOOKS) : limit - ran);
                }
            }, failure -> {
                own.returnAsIs(killer);
                failed(failure.getMessage());
            }));
        });
    }

    private void kill(EventLoopPool own, BackendConnection killer, String sql) {
        killer.run(new KillQuery(sql, refused -> {
            own.returnAsIs(killer); // a KILL leaves its own connection as it was
            if (refused == null) {
                rule.counters().acted();
                log.debug("query rule {}: {} on {} after {} ms", rule.name(), sql, connection.dataSourceName(),
                        rule.config().limit());
            } else {
                failed(refused.getMessage());
            }
        }));
    }

    private void failed(String why) {
        rule.counters().failed();
        log.warn("query rule {}: the statement on {} (thread {}) could not be cancelled after {} ms: {}", rule.name(),
                connection.dataSourceName(), connection.serverConnectionId(), rule.config().limit(), why);
    }
}
