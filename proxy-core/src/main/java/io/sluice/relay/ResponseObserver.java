package io.sluice.relay;

/**
 * Wants to know how the response to one forwarded command ended: a traffic capture's record of the command, or
 * transaction pooling's mapping of a prepared statement. It rides in the command's entry of the connection's
 * in-flight queue, so nothing follows pipelined commands in a queue of its own.
 */
public interface ResponseObserver {
    /**
     * The response is complete. Its outcome is readable from {@code tracker} during the call
     * ({@link ResponseTracker#outcome()}).
     */
    void onResponse(ResponseTracker tracker);

    /**
     * Whether the response's column definitions are to be digested for {@link #onResponse} (session pooling with
     * MariaDB's metadata caching, issue #31); asked of a statement mapping only, as its response begins.
     */
    default boolean digestsDefinitions() {
        return false;
    }

    /**
     * Of an observer that {@link #digestsDefinitions digests definitions}: whether a result that leaves them out
     * (MariaDB's metadata caching) must break the connection rather than reach the client, which would decode its rows
     * with definitions other than the server's.
     */
    default boolean requiresDefinitions() {
        return false;
    }

    /** The command has no response ({@link ResponseKind#NONE}), and its turn came. */
    default void onNoResponse() {
    }

    /** The response will never be seen: the connection broke, or was taken from the session, first. */
    default void onAbandoned() {
    }
}
