package io.sluice.relay;

/**
 * The session state a backend connection reports, for transaction pooling. Called on the event loop, in stream
 * order, only while the {@link ResponseTracker} {@link StateReading#follow(boolean) follows state}, always
 * before the completion of their response.
 */
public interface SessionStateListener {
    /**
     * An OK packet answering a statement went past (not the one that ends a result set).
     *
     * @param affectedRows its affected-rows field
     * @param lastInsertId its last-insert-id field (0 when the statement generated none)
     */
    default void onOk(long affectedRows, long lastInsertId) {
    }

    /**
     * An OK packet with {@code SERVER_SESSION_STATE_CHANGED}: its whole payload, copied (a new array the callee may
     * keep). Such packets answer SET, USE and the like, not the statements of a busy workload.
     */
    default void onSessionState(byte[] okPayload) {
    }

    /** An EOF packet said the session state changed, but EOF packets cannot say how. */
    default void onUntrackedStateChange() {
    }

    /**
     * A result set ended, after {@code rows} rows (counted over the response): what {@code FOUND_ROWS()} returns after
     * a SELECT without {@code SQL_CALC_FOUND_ROWS}.
     */
    default void onResultSetEnd(long rows) {
    }
}
