package io.sluice.frontend;

import io.netty.util.concurrent.Future;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.SetSessionVariables;
import io.sluice.backend.TextQuery;
import io.sluice.backend.pool.EventLoopPool;
import io.sluice.balancer.Backend;
import io.sluice.balancer.replication.CausalWait;
import io.sluice.pooling.GtidWait;
import io.sluice.pooling.MetadataCheck;
import io.sluice.pooling.PinReason;
import io.sluice.pooling.ReadUserVariables;
import io.sluice.pooling.SessionPooling;
import io.sluice.sql.Secrets;
import io.sluice.state.PreparedStatement;
import io.sluice.state.SessionVariables;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves a session-pooling session to a connection of another backend (issue #31, decision 104). Session pooling
 * follows nothing of a session, so at the session's first idle moment outside a transaction after a move was asked
 * for, its own server is asked what the session holds: the session variables that differ from the server's global
 * ones, its schema and user variables, and the per-session counters that say whether it may hold something that
 * cannot move (temporary tables, table locks, XA, SQL-level prepared statements, and protocol ones when Sluice did
 * not record them). A connection of the target is then made to match (one {@code SET}), swapped in, and the old one
 * closed; recorded prepared statements are prepared again there on first use ({@link SessionPooling}, decision 106),
 * or, with MariaDB's metadata caching, before the swap, and must answer with the column definitions their client has
 * ({@link MetadataCheck}).
 * The client's reading stops meanwhile. A session that cannot move stays and says why; one whose new connection
 * cannot be made to match stays on its old one, untouched.
 * On the session's event loop; one per session, made when a move is first asked for.
 */
final class SessionHandover {
    private static final Logger log = LoggerFactory.getLogger(SessionHandover.class);
    /** A session that refused waits this long before its server is asked again: not after every command. */
    private static final long RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** Not carried: per statement, per connection, or set by the login of the new connection itself. */
    private static final Set<String> NOT_CARRIED = Set.of("timestamp", "pseudo_thread_id", "rand_seed1",
            "rand_seed2", "insert_id", "last_insert_id", "identity", "gtid_seq_no", "character_set_database",
            "collation_database");

    private static final List<String> COUNTERS = List.of("COM_STMT_PREPARE", "COM_STMT_CLOSE", "COM_PREPARE_SQL",
            "COM_DEALLOC_SQL", "COM_CREATE_TEMPORARY_TABLE", "COM_DROP_TEMPORARY_TABLE", "COM_LOCK_TABLES",
            "COM_UNLOCK_TABLES", "COM_XA_START", "COM_XA_COMMIT", "COM_XA_ROLLBACK");

    /**
     * One query, one row per fact: the variables this session changed from the global values (MariaDB's
     * {@code information_schema.SYSTEM_VARIABLES}), and always those a login sets from the handshake (the new
     * connection has its own login's values for them, not the globals: a client that logged in with utf8mb3 and
     * then set utf8mb4, the global, would otherwise be left with utf8mb3), the counters, the schema, and whether a
     * transaction is open.
     */
    static final String SNAPSHOT = "SELECT VARIABLE_NAME AS n, SESSION_VALUE AS v FROM information_schema.SYSTEM_VARIABLES"
            + " WHERE VARIABLE_SCOPE = 'SESSION' AND READ_ONLY = 'NO' AND (NOT (SESSION_VALUE <=> GLOBAL_VALUE)"
            + " OR VARIABLE_NAME IN ('" + String.join("', '", SessionVariables.HANDSHAKE_VARIABLES).toUpperCase(
                    java.util.Locale.ROOT) + "'))"
            + " UNION ALL SELECT CONCAT('#', VARIABLE_NAME), VARIABLE_VALUE FROM information_schema.SESSION_STATUS"
            + " WHERE VARIABLE_NAME IN ('" + String.join("', '", COUNTERS) + "')"
            + " UNION ALL SELECT '#SCHEMA', DATABASE() UNION ALL SELECT '#IN_TRANSACTION', @@in_transaction"
            + " UNION ALL SELECT '#LAST_GTID', @@last_gtid UNION ALL SELECT '#LAST_INSERT_ID', LAST_INSERT_ID()";

    /** What the session's server said of it, to be set on the new connection. */
    private record Snapshot(SessionVariables wanted, String schema, String lastGtid, String lastInsertId) {
        Snapshot withSchema(String other) {
            return new Snapshot(wanted, other, lastGtid, lastInsertId);
        }

        /** The one statement that makes a fresh connection match, or {@code null}. */
        String statement() {
            String variables = SessionVariables.syncStatement(new SessionVariables(), wanted, Map.of());
            if (lastInsertId == null || lastInsertId.equals("0")) {
                return variables;
            }
            // LAST_INSERT_ID() is the session's too (a digit string from the server: nothing to quote)
            return "SET last_insert_id = " + lastInsertId + (variables == null ? "" : ", " + variables.substring(4));
        }
    }

    private final FrontendContext context;
    private final ClientSession session;
    private final CommandRelayHandler relay;
    private final BackendLease lease;
    private boolean running;
    private long retryAfterNanos;
    private PinReason refusedFor;
    /** The statements whose next result on the new connection must carry definitions, once it is swapped in. */
    private List<PreparedStatement> expectingDefinitions = List.of();

    SessionHandover(FrontendContext context, ClientSession session, CommandRelayHandler relay, BackendLease lease) {
        this.context = context;
        this.session = session;
        this.relay = relay;
        this.lease = lease;
    }

    /** What kept the session where it is at its last try, or {@code null}: for {@code /api/sessions}. */
    PinReason refusedFor() {
        return refusedFor;
    }

    /** A move was asked for, or a response ended: starts the move if the session is idle outside a transaction. */
    void atIdleMoment() {
        BackendConnection old = lease.connection();
        if (running || !lease.moves().movePending() || old == null || System.nanoTime() - retryAfterNanos < 0
                || !relay.isCommandPhase() || !relay.isQuiet() || !old.isBetweenCommands() || old.runsOwnCommand()
                || old.tracker().inTransaction()) {
            return; // a statement, a transaction or a refusal under way: the next idle moment tries again
        }
        running = true;
        expectingDefinitions = List.of();
        relay.moving(true); // no client command may reach the old connection once its state is read
        PinReason held = lease.policy().pinnedBy();
        if (held != null) {
            refuse(held, SessionMove.Refusal.PINNED); // an open cursor, long data sent ahead (decision 106)
            return;
        }
        boolean deprecateEof = session.key().deprecateEof();
        // A query with tables would clear warnings the client may still read (SHOW WARNINGS); reading the count
        // does not. With warnings left, the next idle moment tries again.
        old.run(new TextQuery("SELECT @@warning_count AS w", deprecateEof, rows -> {
            if (rows.size() == 1 && "0".equals(rows.get(0).get("w"))) {
                readSnapshot(old, deprecateEof);
            } else {
                done();
            }
        }, failure -> lost(failure)));
    }

    private void readSnapshot(BackendConnection old, boolean deprecateEof) {
        old.run(new TextQuery(SNAPSHOT, deprecateEof, rows -> snapshotRead(old, rows), failure -> {
            if (failure.serverError() != null) {
                refuse(null, SessionMove.Refusal.FAILED); // not MariaDB enough to be read: it stays
            } else {
                lost(failure);
            }
        }));
    }

    private void snapshotRead(BackendConnection old, List<Map<String, String>> rows) {
        SessionVariables wanted = new SessionVariables();
        Map<String, Long> counters = new HashMap<>();
        String schema = null;
        String lastGtid = null;
        String lastInsertId = null;
        boolean inTransaction = false;
        for (Map<String, String> row : rows) {
            String name = row.get("n");
            String value = row.get("v");
            if (name == null) {
                continue;
            } else if (name.equals("#SCHEMA")) {
                schema = value;
            } else if (name.equals("#LAST_GTID")) {
                lastGtid = value == null || value.isEmpty() ? null : value;
            } else if (name.equals("#LAST_INSERT_ID")) {
                lastInsertId = value;
            } else if (name.equals("#IN_TRANSACTION")) {
                inTransaction = "1".equals(value);
            } else if (name.startsWith("#")) {
                counters.put(name.substring(1), value == null ? 0 : Long.parseLong(value.strip()));
            } else if (!NOT_CARRIED.contains(name.toLowerCase(java.util.Locale.ROOT))) {
                wanted.put(name, value == null ? "NULL" : value); // character_set_results = NULL, for one

            }
        }
        PinReason pin = inTransaction ? null : pinnedBy(counters, lease.policy() instanceof SessionPooling);
        if (inTransaction) {
            done(); // began one meanwhile (not reported yet): the next idle moment tries again
            return;
        }
        if (pin != null) {
            refuse(pin, SessionMove.Refusal.PINNED);
            return;
        }
        Snapshot snapshot = new Snapshot(wanted, schema, lastGtid, lastInsertId);
        old.run(new ReadUserVariables(old, session.key().deprecateEof(), new ReadUserVariables.Outcome() {
            @Override
            public void read(Map<String, String> literals) {
                wanted.userVariables(literals);
                takeTarget(old, snapshot);
            }

            @Override
            public void refused() {
                refuse(PinReason.USER_VARIABLE, SessionMove.Refusal.PINNED);
            }

            @Override
            public void lost(BackendException cause) {
                SessionHandover.this.lost(cause);
            }
        }));
    }

    /**
     * What the server's per-session counters say the session may hold. They only ever err on the side of staying: a
     * statement prepared twice under one name, or a temporary table dropped by a plain {@code DROP TABLE}, keeps the
     * session where it is.
     *
     * @param recorded whether Sluice recorded the session's protocol prepared statements (decision 106): then only
     *     SQL-level ones ({@code PREPARE ... FROM}), which it never prepares again, keep it
     */
    private static PinReason pinnedBy(Map<String, Long> c, boolean recorded) {
        if (recorded && c.getOrDefault("COM_PREPARE_SQL", 0L) > c.getOrDefault("COM_DEALLOC_SQL", 0L)) {
            return PinReason.SQL_PREPARE;
        } else if (!recorded && c.getOrDefault("COM_STMT_PREPARE", 0L) > c.getOrDefault("COM_STMT_CLOSE", 0L)
                + c.getOrDefault("COM_DEALLOC_SQL", 0L)) {
            return PinReason.PREPARED_STATEMENT;
        } else if (c.getOrDefault("COM_CREATE_TEMPORARY_TABLE", 0L)
                > c.getOrDefault("COM_DROP_TEMPORARY_TABLE", 0L)) {
            return PinReason.TEMPORARY_TABLE;
        } else if (c.getOrDefault("COM_LOCK_TABLES", 0L) > c.getOrDefault("COM_UNLOCK_TABLES", 0L)) {
            return PinReason.TABLE_LOCK;
        } else if (c.getOrDefault("COM_XA_START", 0L) > c.getOrDefault("COM_XA_COMMIT", 0L)
                + c.getOrDefault("COM_XA_ROLLBACK", 0L)) {
            return PinReason.XA;
        }
        return null;
    }

    private void takeTarget(BackendConnection old, Snapshot read) {
        Backend next = lease.moves().claimTarget();
        if (next == null) {
            refuse(null, SessionMove.Refusal.NO_BACKEND);
            return;
        }
        Snapshot snapshot = read.withSchema(lease.schemaOn(next.name(), read.schema()));
        EventLoopPool from = context.pool(next.name()).forLoop(session.eventLoop());
        Future<BackendConnection> acquired = from.acquire(session.key(), snapshot.schema());
        acquired.addListener(f -> {
            if (!f.isSuccess()) {
                log.debug("client {}: no connection of {} to move to: {}", session.remoteAddress(), next.name(),
                        f.cause().toString());
                lease.moves().unclaim(next);
                refuse(null, SessionMove.Refusal.NO_BACKEND);
                return;
            }
            BackendConnection fresh = (BackendConnection) f.getNow();
            String statement = snapshot.statement();
            if (statement == null) {
                checkDefinitions(old, fresh, from, next, snapshot);
                return;
            }
            fresh.run(new SetSessionVariables(statement, error -> {
                if (error == null) {
                    checkDefinitions(old, fresh, from, next, snapshot);
                } else {
                    // Half set, or the server refused a value: the new connection is closed, the session stays.
                    log.info("client {}: stays on backend {}: restoring its state on {} failed: {}",
                            session.remoteAddress(), lease.dataSource(), next.name(), error.getMessage());
                    fresh.close();
                    lease.moves().unclaim(next);
                    refuse(null, SessionMove.Refusal.FAILED);
                }
            }));
        });
    }

    /**
     * With MariaDB's metadata caching, the session's prepared statements are prepared on the new connection now,
     * after its variables (the character set of results is in the definitions), and must answer with the column
     * definitions their client last received: else the new server would leave out of an execute definitions the
     * client does not have, and the client would misread its rows. A session whose statements differ stays.
     */
    private void checkDefinitions(BackendConnection old, BackendConnection fresh, EventLoopPool from, Backend next,
            Snapshot snapshot) {
        if (!MetadataCheck.needed(lease.policy(), fresh)) {
            awaitLastWrite(old, fresh, from, next, snapshot);
            return;
        }
        MetadataCheck.run((SessionPooling) lease.policy(), fresh, new MetadataCheck.Outcome() {
            @Override
            public void same(List<PreparedStatement> sendingDefinitions) {
                expectingDefinitions = sendingDefinitions;
                awaitLastWrite(old, fresh, from, next, snapshot);
            }

            @Override
            public void differs(String sql) {
                log.info("client {}: stays on backend {}: a prepared statement's result columns differ on {} from"
                        + " those the client has ({})", session.remoteAddress(), lease.dataSource(), next.name(),
                        Secrets.redact(sql.length() > 200 ? sql.substring(0, 200) + "..." : sql));
                fresh.close(); // it has the session's variables and statements
                lease.moves().unclaim(next);
                refuse(PinReason.METADATA_DIFFERS, SessionMove.Refusal.METADATA_DIFFERS);
            }

            @Override
            public void lost(BackendException cause) {
                lease.moves().unclaim(next);
                refuse(null, SessionMove.Refusal.FAILED);
            }
        });
    }

    /** The new server must have applied the session's last write before it serves the session (decision 105). */
    private void awaitLastWrite(BackendConnection old, BackendConnection fresh, EventLoopPool from, Backend next,
            Snapshot snapshot) {
        String lastGtid = snapshot.lastGtid();
        Duration wait = context.pooling().moveGtidWait();
        if (lastGtid == null || wait.isZero()) {
            swap(old, fresh, from, next, snapshot);
            return;
        }
        GtidWait.run(fresh, lastGtid, wait, session.key().deprecateEof(),
                new GtidWait.Outcome() {
                    @Override
                    public void reached() {
                        swap(old, fresh, from, next, snapshot);
                    }

                    @Override
                    public void notReached(CausalWait.Outcome why) {
                        log.info("client {}: stays on backend {}: {} had not applied its last write {} ({})",
                                session.remoteAddress(), lease.dataSource(), next.name(), lastGtid, why);
                        fresh.close(); // it has the session's variables: another session's would differ
                        lease.moves().unclaim(next);
                        refuse(null, SessionMove.Refusal.GTID_WAIT_TIMEOUT);
                    }

                    @Override
                    public void lost(BackendException cause) {
                        lease.moves().unclaim(next);
                        refuse(null, SessionMove.Refusal.FAILED);
                    }
                });
    }

    private void swap(BackendConnection old, BackendConnection fresh, EventLoopPool from, Backend next,
            Snapshot snapshot) {
        if (!old.isBetweenCommands() || old.runsOwnCommand() || !old.channel().isActive()
                || lease.connection() != old || !relay.isCommandPhase() || !relay.isQuiet()) {
            // The old connection broke, the session ended, or a command slipped in (or waits, held: it was looked
            // at for the old connection, a COM_STMT_CLOSE of its ids among them): not now. The new connection has
            // the session's variables, not a pooled connection's: closed.
            fresh.close();
            lease.moves().unclaim(next);
            done();
            return;
        }
        if (lease.policy() instanceof SessionPooling statements) {
            // the client's statement ids now map onto the new connection's; its text is read in the sql_mode the
            // move set there, which the new connection's login value need not be
            statements.movedToAnotherConnection(snapshot.wanted().get("sql_mode"));
            MetadataCheck.expectDefinitions(expectingDefinitions);
        }
        lease.moves().handedOver(next, fresh, from, snapshot.schema());
        old.close(); // its state is the session's, copied: it goes back to no other session
        refusedFor = null;
        done();
    }

    private void refuse(PinReason pin, SessionMove.Refusal refusal) {
        refusedFor = pin;
        retryAfterNanos = System.nanoTime() + RETRY_NANOS;
        context.registry().moveRefused(refusal);
        // Each may pass: what pins ends, the new server catches up, the client prepares again or the schemas converge.
        boolean passing = refusal == SessionMove.Refusal.PINNED || refusal == SessionMove.Refusal.GTID_WAIT_TIMEOUT
                || refusal == SessionMove.Refusal.METADATA_DIFFERS;
        if (!passing || lease.moves().waiting() == SessionMove.Reason.REBALANCE) {
            // Nowhere to go, or only a rebalance, which picks another session: a later drain, down or rebalance
            // asks again. A session on a drained or down backend that is pinned, or whose target lacks its last
            // write, keeps trying at its idle moments, once a second at most.
            lease.moves().cancelMove();
        }
        done();
    }

    /** The old connection broke while it was read: the relay hears of it as of any lost connection. */
    private void lost(BackendException cause) {
        log.debug("client {}: reading its state for a move failed: {}", session.remoteAddress(), cause.toString());
        done();
    }

    private void done() {
        running = false;
        relay.moving(false);
    }
}
