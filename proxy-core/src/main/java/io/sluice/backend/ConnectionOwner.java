package io.sluice.backend;

/** The pool a connection belongs to, told of its life. Called on the connection's event loop. */
public interface ConnectionOwner {
    void onOpened(BackendConnection connection);

    void onClosed(BackendConnection connection);

    /** A pooled connection gave up its {@code maxPoolSize} slot: it closed, or never connected. Once each. */
    void slotReleased(BackendConnection connection);
}
