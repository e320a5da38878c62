package io.sluice.pooling;

import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.TextQuery;
import io.sluice.balancer.replication.CausalWait;
import io.sluice.balancer.replication.GtidPosition;
import io.sluice.balancer.replication.MariaDbGtidPosition;
import io.sluice.config.ReadWriteSplittingConfig;
import java.time.Duration;

/**
 * Waits, as one of Sluice's own commands on a connection about to serve a session, until its server has applied the
 * session's last GTID ({@code MASTER_GTID_WAIT}). Read/write splitting's causal read on a replica and a session's
 * first connection on the server it moved to (issue #31, both pooling modes) need it; this is the one copy of it.
 */
public final class GtidWait {

    /** How the wait ended; exactly one of these is called, once. */
    public interface Outcome {
        /** The server has applied the GTID: the connection may serve the session. */
        void reached();

        /** The timeout passed first ({@link CausalWait.Outcome#TIMED_OUT}) or the server refused or could not wait. */
        void notReached(CausalWait.Outcome why);

        /** The connection broke under the wait. */
        void lost(BackendException cause);
    }

    /** How long a moved session's new server may take to apply its last write: the causal reads' default. */
    public static final Duration MOVE_TIMEOUT = ReadWriteSplittingConfig.DEFAULT_CAUSAL_READS_TIMEOUT;

    private GtidWait() {
    }

    /**
     * Runs the wait for {@code gtid} (MariaDB's {@code last_gtid} form) on {@code connection}.
     *
     * @param deprecateEof whether the connection's session negotiated CLIENT_DEPRECATE_EOF, for reading the result
     */
    public static void run(BackendConnection connection, String gtid, Duration timeout, boolean deprecateEof,
            Outcome outcome) {
        GtidPosition position = MariaDbGtidPosition.parse(gtid);
        String sql = CausalWait.sql(position, timeout);
        if (sql == null) {
            outcome.reached(); // the session wrote nothing: nothing to wait for
            return;
        }
        connection.run(new TextQuery(sql, deprecateEof, rows -> {
            String value = rows.isEmpty() ? null : rows.get(0).values().iterator().next();
            CausalWait.Outcome read = CausalWait.read(position, value);
            if (read == CausalWait.Outcome.REACHED) {
                outcome.reached();
            } else {
                outcome.notReached(read);
            }
        }, failure -> {
            if (failure.serverError() != null) {
                outcome.notReached(CausalWait.Outcome.FAILED); // the server refused the wait
            } else {
                outcome.lost(failure);
            }
        }));
    }
}
