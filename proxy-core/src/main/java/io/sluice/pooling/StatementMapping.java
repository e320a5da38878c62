package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendConnection;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;

/**
 * A policy's capability to send a session's prepared-statement commands under the statement ids of the connection
 * in use (transaction pooling, read/write splitting, session pooling after a move): a statement prepared on another
 * connection is prepared again first. The relay looks for it once per session (decision 140); a policy without it
 * has those commands forwarded as they came.
 */
public interface StatementMapping {

    /**
     * Writes a prepared-statement command (COM_STMT_PREPARE, EXECUTE, SEND_LONG_DATA, RESET, FETCH; not CLOSE) to
     * the connection in use, mapping the session's statement ids onto the connection's.
     *
     * @param captured the traffic capture's record of the command, or {@code null}
     * @return false when the command must wait (not consumed; the session holds it and tries again once it resumes)
     */
    boolean sendStatementCommand(BackendConnection connection, int command, ByteBuf frame, ResponseKind kind,
            ResponseObserver captured);

    /** The statement mapping of {@code policy}, or {@code null}: looked for once per session (decision 140). */
    static StatementMapping of(CommandPolicy policy) {
        return policy instanceof StatementMapping mapping ? mapping : null;
    }
}
