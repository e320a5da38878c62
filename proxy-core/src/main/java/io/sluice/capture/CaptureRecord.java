package io.sluice.capture;

import io.sluice.protocol.Command;

/**
 * One entry of a capture file. Times are nanoseconds from the capture's monotonic base (time 0 is when the capture
 * started; {@link CaptureHeader#baseEpochMillis()} is that instant on the wall clock). Session ids are the
 * connection ids Sluice gave its clients in its greeting (not the backend's {@code CONNECTION_ID()}).
 */
public sealed interface CaptureRecord {

    /** The session the record belongs to. */
    int sessionId();

    /** When it happened, in nanoseconds from the capture's base. */
    long timeNanos();

    /**
     * A client session began: it logged in while the capture ran, or (with {@code openBefore}) it was already open
     * and this is its first command seen by the capture. Never holds a password.
     *
     * @param capabilities the capability flags the session runs with
     * @param collationId the character set the client asked for at login
     * @param user the proxy user it logged in as
     * @param schema the schema it asked for at login, or {@code null}
     * @param client the client's address
     */
    record SessionBegin(int sessionId, long timeNanos, boolean openBefore, int capabilities, int collationId,
            String user, String schema, String client) implements CaptureRecord {
    }

    /** The client session ended (COM_QUIT or a closed connection), or the capture stopped while it was open. */
    record SessionEnd(int sessionId, long timeNanos) implements CaptureRecord {
    }

    /** COM_CHANGE_USER succeeded: the session now runs as {@code user} in {@code schema}. Never holds a password. */
    record ChangeUser(int sessionId, long timeNanos, String user, String schema) implements CaptureRecord {
    }

    /**
     * One client command and what came of it.
     *
     * @param timeNanos when the command reached the proxy
     * @param durationNanos until the last packet of its response reached the proxy; 0 for commands without a response
     * @param command the command byte ({@link Command})
     * @param payload the command's payload after the command byte: the SQL text for COM_QUERY and COM_STMT_PREPARE,
     *     the statement id, flags and parameters for COM_STMT_EXECUTE, as the client sent them
     * @param truncated whether {@code payload} is only the start of a longer command (not replayed)
     * @param outcome how the command ended
     * @param errorCode the server's error code when {@code outcome} is {@link Outcome#ERROR}
     * @param affectedRows summed over the response's OK packets
     * @param rows rows returned, over all result sets
     * @param statementId for COM_STMT_PREPARE, the id the server gave the statement
     */
    record CommandRecord(int sessionId, long timeNanos, long durationNanos, int command, byte[] payload,
            boolean truncated, Outcome outcome, int errorCode, long affectedRows, long rows, long statementId)
            implements CaptureRecord {

        /** MySQL's name of the command, e.g. {@code COM_QUERY}. */
        public String commandName() {
            return Command.name(command);
        }
    }

    /** How a command ended. The ordinal is written to files: add values only at the end. */
    enum Outcome {
        /** The command has no response (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA). */
        NO_RESPONSE,
        /** OK or a result set. */
        OK,
        /** An ERR packet. */
        ERROR,
        /** The session or its backend connection ended before the response did, or the capture stopped first. */
        UNKNOWN
    }
}
