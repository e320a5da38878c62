package io.sluice.backend;

import io.sluice.protocol.Packets.BackendError;

/**
 * A backend connection could not be opened, authenticated or prepared for a session. When the server itself
 * refused (unknown database, access denied), {@link #serverError()} holds its ERR so the client sees it unchanged.
 */
public final class BackendException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient BackendError serverError;

    public BackendException(String message, Throwable cause) {
        super(message, cause);
        this.serverError = null;
    }

    public BackendException(String message, BackendError serverError) {
        super(message + ": " + serverError);
        this.serverError = serverError;
    }

    public BackendException(String message) {
        super(message);
        this.serverError = null;
    }

    /** The server's own ERR, or {@code null} when the failure was not an answer from the server. */
    public BackendError serverError() {
        return serverError;
    }
}
