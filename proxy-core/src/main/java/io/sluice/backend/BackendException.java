package io.sluice.backend;

import io.sluice.protocol.Packets.BackendError;

/**
 * A backend connection could not be opened, authenticated or prepared for a session. When the server itself
 * refused (unknown database, access denied), {@link #serverError()} holds its ERR so the client sees it unchanged.
 */
public class BackendException extends Exception {
    private static final long serialVersionUID = 1L;

    private final transient BackendError serverError;
    private final boolean serverUnavailable;

    public BackendException(String message, Throwable cause) {
        super(message, cause);
        this.serverError = null;
        this.serverUnavailable = false;
    }

    public BackendException(String message, BackendError serverError) {
        this(message, serverError, false);
    }

    private BackendException(String message, BackendError serverError, boolean serverUnavailable) {
        super(message + ": " + serverError);
        this.serverError = serverError;
        this.serverUnavailable = serverUnavailable;
    }

    public BackendException(String message) {
        super(message);
        this.serverError = null;
        this.serverUnavailable = false;
    }

    /**
     * The server turned the connection away whoever it was for (too many connections, shutting down, this host not
     * let in): a failure of the backend, as a failed connect is, though the server answered.
     */
    public static BackendException serverUnavailable(String message, BackendError serverError) {
        return new BackendException(message, serverError, true);
    }

    /**
     * Whether the server turned the connection away whoever it was for ({@link #serverUnavailable}): the session may
     * fail over and the backend counts it as a failed connect, unlike a refusal of this login (access denied, unknown
     * database).
     */
    public boolean isServerUnavailable() {
        return serverUnavailable;
    }

    /** The server's own ERR, or {@code null} when the failure was not an answer from the server. */
    public BackendError serverError() {
        return serverError;
    }
}
