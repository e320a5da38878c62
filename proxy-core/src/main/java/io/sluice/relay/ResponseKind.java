package io.sluice.relay;

import io.sluice.protocol.Command;

/**
 * The shape of the response a command gets, which is all the {@link ResponseTracker} needs to follow it.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_command_phase.html">Command phase</a>
 */
public enum ResponseKind {
    /** A text result: OK, ERR, LOCAL INFILE request or result sets (COM_QUERY, COM_PROCESS_INFO). */
    RESULT,
    /** A binary result: OK, ERR or a result set, possibly only its metadata when a cursor opens (COM_STMT_EXECUTE). */
    BINARY_RESULT,
    /** Binary rows and a terminator (COM_STMT_FETCH). */
    ROWS,
    /** COM_STMT_PREPARE_OK with parameter and column definitions, or ERR. */
    PREPARE,
    /** Column definitions ended by EOF, or ERR (COM_FIELD_LIST). */
    FIELD_LIST,
    /** Exactly one packet: OK, ERR, EOF or a status string (COM_PING, COM_INIT_DB, COM_STATISTICS, ...). */
    SINGLE,
    /** No response at all (COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA). */
    NONE;

    /**
     * The response a client command gets, or {@code null} for a command Sluice does not relay (replication, binlog,
     * the obsolete ones). COM_QUIT and COM_CHANGE_USER are not relayed as such either: Sluice handles them itself.
     */
    public static ResponseKind of(int command) {
        switch (command) {
            case Command.COM_QUERY:
            case Command.COM_PROCESS_INFO:
                return RESULT;
            case Command.COM_STMT_EXECUTE:
                return BINARY_RESULT;
            case Command.COM_STMT_FETCH:
                return ROWS;
            case Command.COM_STMT_PREPARE:
                return PREPARE;
            case Command.COM_FIELD_LIST:
                return FIELD_LIST;
            case Command.COM_STMT_CLOSE:
            case Command.COM_STMT_SEND_LONG_DATA:
                return NONE;
            case Command.COM_INIT_DB:
            case Command.COM_PING:
            case Command.COM_STATISTICS:
            case Command.COM_SET_OPTION:
            case Command.COM_RESET_CONNECTION:
            case Command.COM_STMT_RESET:
            case Command.COM_PROCESS_KILL:
            case Command.COM_DEBUG:
            case Command.COM_REFRESH:
            case Command.COM_CREATE_DB:
            case Command.COM_DROP_DB:
                return SINGLE;
            default:
                return null;
        }
    }
}
