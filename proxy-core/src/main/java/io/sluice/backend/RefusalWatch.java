package io.sluice.backend;

/**
 * Whether a backend connection's next response, a replica's, may be kept from the client (read/write splitting,
 * decision 110): it is the only one outstanding and answers a statement that may run again on the primary. If it is
 * an ERR that says the server refused a write (1792 ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION, 1290
 * ER_OPTION_PREVENTS_STATEMENT) and nothing else, the connection keeps it from the client and {@link #take()} says so
 * once the session hears the response ended. The connection reads {@link #watching} once per read from the server.
 */
public final class RefusalWatch {
    /** The next response is looked at before it is relayed, once. */
    boolean watching;
    /** That response was such a refusal, kept from the client: the session runs the statement on the primary. */
    boolean refused;

    /** Looks at the next response. */
    public void watch() {
        watching = true;
    }

    /** Whether the last response was a refusal kept from the client; asking clears it. */
    public boolean take() {
        boolean was = refused;
        refused = false;
        return was;
    }

    /** The connection went back to its pool: nothing is watched. */
    void clear() {
        watching = false;
        refused = false;
    }
}
