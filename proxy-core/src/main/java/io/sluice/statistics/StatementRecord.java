package io.sluice.statistics;

/**
 * Where the outcome of one client statement goes when its response ends: its digest's counters, or, for a
 * COM_STMT_PREPARE, the session's table of prepared statements. It rides in the command's in-flight entry on the
 * backend connection, so the relay needs no queue of its own to match outcomes to statements.
 */
public interface StatementRecord {

    /**
     * The statement's response ended. Called on the connection's event loop.
     *
     * @param nanos from forwarding the statement to the end of its response
     * @param nowNanos {@link System#nanoTime()} at the end
     * @param failed whether the response was, or ended with, an ERR packet
     * @param warnings the warning count of the OK or EOF that ended it
     * @param rows rows sent to the client
     * @param affectedRows rows the statement changed
     * @param statementId the statement id the client saw in a COM_STMT_PREPARE_OK, else 0
     * @param replica whether it ran on a replica of a read/write split group
     */
    void completed(long nanos, long nowNanos, boolean failed, int warnings, long rows, long affectedRows,
            long statementId, boolean replica);

    /**
     * The statement was not sent after all (it waits for Sluice's own prepare on the connection) and gets a new
     * record when it is: what this one started is undone. Nothing to undo by default.
     */
    default void unsent() {
    }
}
