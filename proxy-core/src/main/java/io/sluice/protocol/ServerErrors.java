package io.sluice.protocol;

/**
 * Error codes a server sends that Sluice acts on. Sluice relays them as they come and never sends them itself (those
 * are {@link ErrorCode}).
 *
 * @see <a href="https://mariadb.com/kb/en/mariadb-error-code-reference/">MariaDB error codes</a>
 */
public final class ServerErrors {
    /** "Unknown database": a schema a login had found is gone. */
    public static final int ER_BAD_DB_ERROR = 1049;
    /** "Table doesn't exist": MySQL has no {@code mysql.global_priv}, so its accounts are read from mysql.user. */
    public static final int ER_NO_SUCH_TABLE = 1146;
    /** MariaDB's "Connection was killed", sent to a connection killed while it waited for a command. */
    public static final int ER_CONNECTION_KILLED = 1927;

    private ServerErrors() {
    }
}
