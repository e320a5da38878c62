package io.sluice.relay;

/**
 * What the response a {@link ResponseTracker} followed last amounted to: whether it failed and with which error, and,
 * while the tracker sums responses up ({@link ResponseTracker#summarize}), its affected rows, its rows and a prepared
 * statement's id. Valid from the response's completion until the tracker begins the next one; one per tracker,
 * reused, so reading it allocates nothing.
 */
public final class ResponseOutcome {
    boolean failed;
    int errorCode;
    long affectedRows;
    long rows;
    /** The warning count of the OK or EOF that ended it; read only while summarizing. */
    int warnings;
    /** The server's id in a COM_STMT_PREPARE_OK; 0 for other responses. */
    long statementId;
    int parameters;
    /** The id the client is shown instead of the server's ({@link ResponseTracker#replaceStatementId}); 0: none. */
    int replacementStatementId;
    /** While digesting ({@link ResponseTracker#digestDefinitions}): whether column definitions went to the client. */
    boolean definitionsSent;
    long definitionsDigest = ColumnDefinitionsDigest.NONE;

    /** Back to nothing known: a new response begins. */
    void clear() {
        failed = false;
        errorCode = 0;
        affectedRows = 0;
        rows = 0;
        warnings = 0;
        statementId = 0;
        parameters = 0;
        replacementStatementId = 0;
        definitionsSent = false;
        definitionsDigest = ColumnDefinitionsDigest.NONE;
    }

    /** Whether the response was, or ended with, an ERR packet: for per-command error counts. */
    public boolean failed() {
        return failed;
    }

    /** The error code of its ERR packet, 0 when it had none. */
    public int errorCode() {
        return errorCode;
    }

    /** Affected rows summed over its OK packets; counted only while summarizing. */
    public long affectedRows() {
        return affectedRows;
    }

    /** The warning count of the OK or EOF packet that ended it; counted only while summarizing. */
    public int warnings() {
        return warnings;
    }

    /**
     * Row packets in it (all its result sets); counted only while summarizing, or while the tracker follows session
     * state (transaction pooling answers {@code FOUND_ROWS()} with it).
     */
    public long rows() {
        return rows;
    }

    /**
     * The statement id the client saw in a COM_STMT_PREPARE_OK (the replacement, if one was set); 0 for other
     * responses.
     */
    public long statementId() {
        if (statementId == 0 || replacementStatementId == 0) {
            return statementId;
        }
        return Integer.toUnsignedLong(replacementStatementId);
    }

    /** The server's statement id in a COM_STMT_PREPARE_OK. */
    public int serverStatementId() {
        return (int) statementId;
    }

    /**
     * Whether the response carried column definitions to the client (a COM_STMT_PREPARE_OK always does, none or
     * some); known only for a response the tracker was told to {@link ResponseTracker#digestDefinitions digest}.
     */
    public boolean definitionsSent() {
        return definitionsSent;
    }

    /** The {@link ColumnDefinitionsDigest} of the definitions it carried, when {@link #definitionsSent()}. */
    public long definitionsDigest() {
        return definitionsDigest;
    }

    /** The parameter count in a COM_STMT_PREPARE_OK. */
    public int parameters() {
        return parameters;
    }
}
