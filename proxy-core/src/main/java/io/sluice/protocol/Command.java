package io.sluice.protocol;

/**
 * Command bytes (the first payload byte of a client's command packet), under MySQL's names.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_command_phase.html">Command phase</a>
 */
public final class Command {
    public static final int COM_SLEEP = 0x00;
    public static final int COM_QUIT = 0x01;
    public static final int COM_INIT_DB = 0x02;
    public static final int COM_QUERY = 0x03;
    public static final int COM_FIELD_LIST = 0x04;
    public static final int COM_CREATE_DB = 0x05;
    public static final int COM_DROP_DB = 0x06;
    public static final int COM_REFRESH = 0x07;
    public static final int COM_SHUTDOWN = 0x08;
    public static final int COM_STATISTICS = 0x09;
    public static final int COM_PROCESS_INFO = 0x0a;
    public static final int COM_CONNECT = 0x0b;
    public static final int COM_PROCESS_KILL = 0x0c;
    public static final int COM_DEBUG = 0x0d;
    public static final int COM_PING = 0x0e;
    public static final int COM_TIME = 0x0f;
    public static final int COM_DELAYED_INSERT = 0x10;
    public static final int COM_CHANGE_USER = 0x11;
    public static final int COM_BINLOG_DUMP = 0x12;
    public static final int COM_TABLE_DUMP = 0x13;
    public static final int COM_CONNECT_OUT = 0x14;
    public static final int COM_REGISTER_SLAVE = 0x15;
    public static final int COM_STMT_PREPARE = 0x16;
    public static final int COM_STMT_EXECUTE = 0x17;
    public static final int COM_STMT_SEND_LONG_DATA = 0x18;
    public static final int COM_STMT_CLOSE = 0x19;
    public static final int COM_STMT_RESET = 0x1a;
    public static final int COM_SET_OPTION = 0x1b;
    public static final int COM_STMT_FETCH = 0x1c;
    public static final int COM_DAEMON = 0x1d;
    public static final int COM_BINLOG_DUMP_GTID = 0x1e;
    public static final int COM_RESET_CONNECTION = 0x1f;

    private static final String[] NAMES = {
        "COM_SLEEP", "COM_QUIT", "COM_INIT_DB", "COM_QUERY", "COM_FIELD_LIST", "COM_CREATE_DB", "COM_DROP_DB",
        "COM_REFRESH", "COM_SHUTDOWN", "COM_STATISTICS", "COM_PROCESS_INFO", "COM_CONNECT", "COM_PROCESS_KILL",
        "COM_DEBUG", "COM_PING", "COM_TIME", "COM_DELAYED_INSERT", "COM_CHANGE_USER", "COM_BINLOG_DUMP",
        "COM_TABLE_DUMP", "COM_CONNECT_OUT", "COM_REGISTER_SLAVE", "COM_STMT_PREPARE", "COM_STMT_EXECUTE",
        "COM_STMT_SEND_LONG_DATA", "COM_STMT_CLOSE", "COM_STMT_RESET", "COM_SET_OPTION", "COM_STMT_FETCH",
        "COM_DAEMON", "COM_BINLOG_DUMP_GTID", "COM_RESET_CONNECTION",
    };

    private Command() {
    }

    /** MySQL's name for a command byte, or {@code 0xNN} for one it does not name. */
    public static String name(int command) {
        return command >= 0 && command < NAMES.length ? NAMES[command] : String.format("0x%02x", command);
    }
}
