package io.sluice.metrics;

import io.sluice.protocol.Command;

/**
 * The command types metrics are kept for, as small array indexes: the hot path turns a command byte into an index
 * with one array load, never a map lookup. Commands without a name here count as {@code OTHER}.
 */
public final class CommandTypes {

    private static final int[] TRACKED = {
        Command.COM_QUERY, Command.COM_STMT_PREPARE, Command.COM_STMT_EXECUTE, Command.COM_STMT_FETCH,
        Command.COM_STMT_CLOSE, Command.COM_STMT_RESET, Command.COM_STMT_SEND_LONG_DATA, Command.COM_PING,
        Command.COM_INIT_DB, Command.COM_FIELD_LIST, Command.COM_SET_OPTION, Command.COM_RESET_CONNECTION,
        Command.COM_CHANGE_USER, Command.COM_QUIT, Command.COM_STATISTICS, Command.COM_PROCESS_INFO,
        Command.COM_PROCESS_KILL,
    };

    /** How many types there are, {@code OTHER} included. */
    public static final int COUNT = TRACKED.length + 1;
    /** The index of every command not tracked on its own. */
    public static final int OTHER = TRACKED.length;

    private static final byte[] INDEX = new byte[256];
    private static final String[] NAMES = new String[COUNT];

    static {
        java.util.Arrays.fill(INDEX, (byte) OTHER);
        for (int i = 0; i < TRACKED.length; i++) {
            INDEX[TRACKED[i]] = (byte) i;
            NAMES[i] = Command.name(TRACKED[i]);
        }
        NAMES[OTHER] = "OTHER";
    }

    private CommandTypes() {
    }

    /** The index of a command byte (0..255). */
    public static int index(int command) {
        return INDEX[command & 0xFF];
    }

    /** The label of an index: MySQL's name ({@code COM_QUERY}) or {@code OTHER}. */
    public static String name(int index) {
        return NAMES[index];
    }
}
