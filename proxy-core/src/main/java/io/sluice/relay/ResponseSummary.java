package io.sluice.relay;

/**
 * Sums each response up into its {@link ResponseOutcome}: affected rows, warnings and rows, which a traffic capture
 * and the statistics by digest record ({@link ResponseTracker#summarize}). A {@link ResponseWatch}: a connection that
 * records nothing does not pay for it.
 */
final class ResponseSummary implements ResponseWatch {

    private final ResponseOutcome outcome;
    private final ResponsePacket packet;

    ResponseSummary(ResponseOutcome outcome, ResponsePacket packet) {
        this.outcome = outcome;
        this.packet = packet;
    }

    @Override
    public boolean packet(ResponsePacket p) {
        if (p.role == ResponsePacket.Role.STATEMENT_OK) {
            outcome.affectedRows += p.head.okAffectedRows();
            outcome.warnings = p.head.okWarnings();
        } else if (p.role == ResponsePacket.Role.END_OF_ROWS) {
            outcome.warnings = p.deprecateEof ? p.head.okWarnings() : p.head.eofWarnings();
        }
        return false;
    }

    @Override
    public void responseEnded(ResponseOutcome ended) {
        ended.rows = packet.rows;
    }
}
