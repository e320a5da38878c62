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

    /** The command has no response ({@link ResponseKind#NONE}), and its turn came. */
    default void onNoResponse() {
    }

    /** The response will never be seen: the connection broke, or was taken from the session, first. */
    default void onAbandoned() {
    }
}
