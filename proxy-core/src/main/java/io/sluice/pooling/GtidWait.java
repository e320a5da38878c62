package io.sluice.pooling;

import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.TextQuery;
import io.sluice.balancer.replication.CausalWait;
import io.sluice.balancer.replication.GtidPosition;
import io.sluice.balancer.replication.MariaDbGtidPosition;
import io.sluice.balancer.replication.MySqlGtidSet;
import java.time.Duration;

/**
 * Waits, as one of Sluice's own commands on a connection about to serve a session, until its server has applied the
 * session's last GTID: {@code MASTER_GTID_WAIT} on MariaDB, {@code WAIT_FOR_EXECUTED_GTID_SET} on MySQL, by what
 * the connection's greeting said it is ({@link io.sluice.backend.ConnectionState#isMySql()}). Read/write splitting's
 * causal read on a replica and a session's first connection on the server it moved to (issue #31, both pooling
 * modes) need it; this is the one copy of it.
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


    private GtidWait() {
    }

    /**
     * Runs the wait for {@code gtid} on {@code connection}: MariaDB's {@code last_gtid} form ({@code 0-1-42}) on
     * MariaDB, a GTID set ({@code uuid:1-42}) on MySQL. A position the server's flavour cannot read (a session that
     * wrote on the other flavour, which a group of one flavour does not have) is a failed wait: the read goes to the
     * primary rather than wait for something the server cannot compare.
     *
     * @param deprecateEof whether the connection's session negotiated CLIENT_DEPRECATE_EOF, for reading the result
     */
    public static void run(BackendConnection connection, String gtid, Duration timeout, boolean deprecateEof,
            Outcome outcome) {
        GtidPosition position;
        try {
            position = position(gtid, connection.state().isMySql());
        } catch (IllegalArgumentException e) {
            outcome.notReached(CausalWait.Outcome.FAILED);
            return;
        }
        String sql = CausalWait.sql(position, timeout);
        if (sql == null) {
            outcome.reached(); // the session wrote nothing: nothing to wait for
            return;
        }
        connection.run(new TextQuery(sql, deprecateEof, rows -> {
            CausalWait.Outcome read = CausalWait.read(position, TextQuery.firstValue(rows));
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

    /** Parses {@code gtid} as the flavour of the server that is to wait for it. */
    static GtidPosition position(String gtid, boolean mySql) {
        return mySql ? MySqlGtidSet.parse(gtid) : MariaDbGtidPosition.parse(gtid);
    }
}
