package io.sluice.isolation;

/**
 * How a statement that leaves session state reaches the server: the same state made by a different route, so that a
 * proxy which recognises the plain statement but not its wrappings is caught.
 */
enum Way {
    /** The statement as it is, in the text protocol. */
    DIRECT,
    /** {@code EXECUTE IMMEDIATE '...'}: the state-making statement is only a string to a parser of SQL text. */
    EXECUTE_IMMEDIATE,
    /** Inside a stored procedure: {@code CALL iso_p_kind(n)}. */
    PROCEDURE,
    /** Inside a stored function read by a query: {@code SELECT iso_f_kind(n)}. */
    FUNCTION_SELECT,
    /** Inside a stored function evaluated for nothing: {@code DO iso_f_kind(n)}. */
    FUNCTION_DO,
    /** Inside a BEFORE INSERT trigger: {@code INSERT INTO iso_trg_kind (n) VALUES (n)}. */
    TRIGGER,
    /** Second statement of a multi-statement ({@code DO 0; ...}), the client having allowMultiQueries. */
    MULTI_STATEMENT,
    /** A server-side prepared statement (COM_STMT_PREPARE and COM_STMT_EXECUTE, useServerPrepStmts). */
    SERVER_PREPARED,
    /**
     * Last of a multi-statement whose text before it the server reads otherwise than a reader of bytes in the default
     * {@code sql_mode} (decision 204): it turns on {@code NO_BACKSLASH_ESCAPES} (odd {@code n}) or {@code ANSI_QUOTES}
     * (even), quotes a backslash, and puts the session's mode back; read in the default modes, the quoted text runs on
     * over the statement.
     */
    TEXT_READ_OTHERWISE;

    /** Whether the state-making statement lives in a stored program created at set-up. */
    boolean storedProgram() {
        return this == PROCEDURE || this == FUNCTION_SELECT || this == FUNCTION_DO || this == TRIGGER;
    }
}
