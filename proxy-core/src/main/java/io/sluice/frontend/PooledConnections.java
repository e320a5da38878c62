package io.sluice.frontend;

import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.protocol.ErrorCode;
import io.sluice.protocol.Packets.BackendError;
import io.sluice.protocol.ServerErrors;

/**
 * What a session's lease judges of a pooled connection it lets go or finds broken: whether it must be reset before
 * another session gets it, and whether a failure means the server had already ended it.
 */
final class PooledConnections {

    private PooledConnections() {
    }

    /**
     * Whether a failure on a pooled connection means the server had already ended it: it broke without an answer, or
     * its answer is one a server sends just before it closes a connection.
     */
    static boolean gone(BackendException error) {
        BackendError serverError = error.serverError();
        if (serverError == null) {
            return true;
        }
        int code = serverError.code();
        // A server shutting down, and MySQL 8.0.24+ closing a connection idle past its wait_timeout, send the same
        // errors Sluice sends in those cases.
        return code == ServerErrors.ER_CONNECTION_KILLED || code == ErrorCode.ER_SERVER_SHUTDOWN.code()
                || code == ErrorCode.ER_CLIENT_INTERACTION_TIMEOUT.code();
    }

    /**
     * Whether the connection holds something of its session that its next one would see: the last statement's
     * warnings or error ({@code SHOW WARNINGS}), which transaction pooling keeps the session for until its next
     * statement, but which a statement routed elsewhere leaves behind; or user variables, which a SET to NULL
     * leaves with their name and type.
     */
    static boolean showsTraces(BackendConnection connection) {
        var tracker = connection.tracker();
        return tracker.sessionState().lastStatementLeftWarnings() || tracker.lastResponseFailed()
                || connection.state().holdsDiagnostics() || connection.state().variables().hasUserVariables();
    }
}
