package io.sluice.backend;

/** The pool a connection belongs to, told of its life. Called on the connection's event loop. */
public interface ConnectionOwner {
    void onOpened(BackendConnection connection);

    void onClosed(BackendConnection connection);

    /** The connection logged in, and its login values were read (decision 204 reads the server's sql_mode there). */
    default void onLoggedIn(BackendConnection connection) {
    }

    /** A pooled connection gave up its {@code maxPoolSize} slot: it closed, or never connected. Once each. */
    void slotReleased(BackendConnection connection);
}
