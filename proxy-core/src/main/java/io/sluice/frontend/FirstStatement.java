package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.pool.BackendPool;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.readwrite.Route;
import io.sluice.readwrite.RouteReason;
import io.sluice.readwrite.StatementClassifier;
import io.sluice.relay.ResponseKind;
import io.sluice.sql.SqlLexer;
import io.sluice.sql.UnreadText;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The first command a session sends on a connection just lent to it, kept (retained, not copied) until the server
 * answers, so that it can run on another backend if its server is found hung before a byte of the answer came
 * (decision 160). A pooled connection idle for less than a check interval is lent without a ping (decision 074), so
 * a server that hung a moment ago takes the session's first statement and never answers; the stall watch then finds
 * it hung and closes the connection (decision 093). Before, the session got ERR 2013 although another backend was up.
 *
 * <p>It runs elsewhere only when that is safe whether or not the hung server ever runs it: the bytes sit in the
 * stopped server's socket, and a server that goes on (SIGCONT) runs them. So only a COM_QUERY that changes nothing
 * beyond the session running it ({@link #runsAgainHarmlessly}), alone in flight, with nothing of the answer relayed,
 * on a connection whose server the stall watch found hung, and a session with nothing else on that server (its
 * first connection in session pooling, or one taken for a transaction in transaction pooling). Anything else still
 * gets "Lost connection": a write may have been done, or be done once the server goes on.
 *
 * <p>On the hot path it costs a field test per command; the keeping, one reference count per lent connection.
 */
final class FirstStatement {
    private static final Logger log = LoggerFactory.getLogger(FirstStatement.class);

    private final FrontendContext context;
    private final CommandRelayHandler relay;
    private final BackendLease lease;
    /** A connection was just bound: the next command sent is its first. */
    private boolean armed;
    /** The first command, retained, while it is the only one in flight and unanswered; else {@code null}. */
    private ByteBuf kept;
    private int keptFrom;
    private int keptTo;
    private BackendConnection keptOn;

    FirstStatement(FrontendContext context, CommandRelayHandler relay, BackendLease lease) {
        this.context = context;
        this.relay = relay;
        this.lease = lease;
    }

    /** A connection was bound to the session: the next command sent on it is its first. */
    void bound() {
        drop();
        armed = true;
    }

    /** A frame is about to be sent on {@code connection} (data packets included, {@code command} -1 then). */
    void sending(BackendConnection connection, ByteBuf frame, int command) {
        if (armed) {
            armed = false;
            if (command == Command.COM_QUERY
                    && Packets.payloadLength(frame, frame.readerIndex()) < Packets.MAX_PAYLOAD) {
                keptFrom = frame.readerIndex();
                keptTo = frame.writerIndex();
                keptOn = connection;
                kept = frame.retain();
            }
        } else if (kept != null) {
            drop(); // a second command in flight: the first no longer runs alone
        }
    }

    /** Responses were relayed: the first command, if kept, was answered. */
    void answered() {
        armed = false;
        if (kept != null) {
            drop();
        }
    }

    /** The session ended, or its connection was lost for good. */
    void drop() {
        if (kept != null) {
            kept.release();
            kept = null;
            keptOn = null;
        }
    }

    /**
     * The session's connection was lost: runs the kept first statement on another backend if that is safe, holding
     * it and taking a connection for it.
     *
     * @return whether it does; otherwise the session hears the connection was lost, as before
     */
    boolean runsElsewhere(BackendConnection lost, boolean responseStarted) {
        ByteBuf frame = kept;
        if (frame == null) {
            return false;
        }
        BackendConnection on = keptOn;
        kept = null;
        keptOn = null;
        frame.setIndex(keptFrom, keptTo);
        BackendPool pool = context.pool(lost.dataSourceName());
        if (on != lost || responseStarted || !relay.held().isEmpty() || pool == null || !pool.serverFoundHung()
                || !runsAgainHarmlessly(frame) || !lease.failOverUnanswered(lost)) {
            frame.release();
            return false;
        }
        log.info("{}: backend {} was found hung before it answered the session's first statement, which"
                + " only reads: running it on {}", relay.describeForLog(), lost.dataSourceName(), lease.dataSource());
        relay.held().add(frame, ResponseKind.of(Command.COM_QUERY), Command.COM_QUERY, null);
        relay.acquire();
        return true;
    }

    /**
     * Whether a COM_QUERY frame changes nothing beyond the session that runs it, wherever and however often it runs: a
     * plain read (what read/write splitting would send to a replica: no locking, no function that may write, nothing
     * read from one connection's state), {@code USE}, or a {@code SET} of session variables whose values would be such
     * a read. Not {@code SET DEFAULT ROLE} (it writes the grant tables), {@code SET GLOBAL}, {@code SET PASSWORD},
     * user variables, nor more than one statement, nor text with a byte above ASCII, a backslash or a double quote:
     * in some client character sets (sjis, gbk...) and sql_modes ({@code NO_BACKSLASH_ESCAPES}, {@code ANSI_QUOTES})
     * the server reads it otherwise than Sluice does (decision 204), and this rare path does not ask which the
     * session has. Read only after a loss, so its allocations do not matter.
     */
    static boolean runsAgainHarmlessly(ByteBuf frame) {
        int from = frame.readerIndex() + Packets.HEADER_SIZE + 1;
        if (UnreadText.in(StatementClassifier.BYTES, frame, from, frame.writerIndex(),
                UnreadText.NON_ASCII | UnreadText.ANY_SQL_MODE)) {
            return false;
        }
        String sql = frame.toString(from, Math.max(0, frame.writerIndex() - from), StandardCharsets.UTF_8);
        RouteReason reason = StatementClassifier.reason(StatementClassifier.classify(sql));
        if (reason == RouteReason.REPLICA || reason == RouteReason.REPLICA_HINT) {
            return true;
        }
        if (reason != RouteReason.SESSION_SET) {
            return false;
        }
        int first = SqlLexer.skipToCode(SqlLexer.CHARS, sql, 0, sql.length());
        int firstEnd = SqlLexer.end(SqlLexer.next(SqlLexer.CHARS, sql, first, sql.length()));
        if (SqlLexer.is(SqlLexer.CHARS, sql, first, firstEnd, "USE")) {
            return true;
        }
        int second = SqlLexer.skipToCode(SqlLexer.CHARS, sql, firstEnd, sql.length());
        int secondEnd = second < sql.length() ? SqlLexer.end(SqlLexer.next(SqlLexer.CHARS, sql, second, sql.length()))
                : second;
        if (!SqlLexer.is(SqlLexer.CHARS, sql, first, firstEnd, "SET")
                || SqlLexer.is(SqlLexer.CHARS, sql, second, secondEnd, "DEFAULT")) {
            return false;
        }
        // The values, read as a SELECT of the same expressions: one that calls a function that may write is not.
        return StatementClassifier.route(StatementClassifier.classify("SELECT " + sql.substring(firstEnd)))
                == Route.REPLICA;
    }
}
