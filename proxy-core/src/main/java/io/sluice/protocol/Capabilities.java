package io.sluice.protocol;

import org.apache.shardingsphere.db.protocol.mysql.constant.MySQLCapabilityFlag;

/**
 * Capability flags, under MySQL's own names.
 *
 * @see <a href="https://dev.mysql.com/doc/dev/mysql-server/latest/group__group__cs__capabilities__flags.html">MySQL
 *     capability flags</a>
 */
public final class Capabilities {
    public static final int CLIENT_LONG_PASSWORD = MySQLCapabilityFlag.CLIENT_LONG_PASSWORD.getValue();
    public static final int CLIENT_FOUND_ROWS = MySQLCapabilityFlag.CLIENT_FOUND_ROWS.getValue();
    public static final int CLIENT_LONG_FLAG = MySQLCapabilityFlag.CLIENT_LONG_FLAG.getValue();
    public static final int CLIENT_CONNECT_WITH_DB = MySQLCapabilityFlag.CLIENT_CONNECT_WITH_DB.getValue();
    public static final int CLIENT_NO_SCHEMA = MySQLCapabilityFlag.CLIENT_NO_SCHEMA.getValue();
    public static final int CLIENT_COMPRESS = MySQLCapabilityFlag.CLIENT_COMPRESS.getValue();
    public static final int CLIENT_ODBC = MySQLCapabilityFlag.CLIENT_ODBC.getValue();
    public static final int CLIENT_LOCAL_FILES = MySQLCapabilityFlag.CLIENT_LOCAL_FILES.getValue();
    public static final int CLIENT_IGNORE_SPACE = MySQLCapabilityFlag.CLIENT_IGNORE_SPACE.getValue();
    public static final int CLIENT_PROTOCOL_41 = MySQLCapabilityFlag.CLIENT_PROTOCOL_41.getValue();
    public static final int CLIENT_INTERACTIVE = MySQLCapabilityFlag.CLIENT_INTERACTIVE.getValue();
    public static final int CLIENT_SSL = MySQLCapabilityFlag.CLIENT_SSL.getValue();
    public static final int CLIENT_TRANSACTIONS = MySQLCapabilityFlag.CLIENT_TRANSACTIONS.getValue();
    public static final int CLIENT_SECURE_CONNECTION = MySQLCapabilityFlag.CLIENT_SECURE_CONNECTION.getValue();
    public static final int CLIENT_MULTI_STATEMENTS = MySQLCapabilityFlag.CLIENT_MULTI_STATEMENTS.getValue();
    public static final int CLIENT_MULTI_RESULTS = MySQLCapabilityFlag.CLIENT_MULTI_RESULTS.getValue();
    public static final int CLIENT_PS_MULTI_RESULTS = MySQLCapabilityFlag.CLIENT_PS_MULTI_RESULTS.getValue();
    public static final int CLIENT_PLUGIN_AUTH = MySQLCapabilityFlag.CLIENT_PLUGIN_AUTH.getValue();
    public static final int CLIENT_CONNECT_ATTRS = MySQLCapabilityFlag.CLIENT_CONNECT_ATTRS.getValue();
    public static final int CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA =
            MySQLCapabilityFlag.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA.getValue();
    public static final int CLIENT_SESSION_TRACK = MySQLCapabilityFlag.CLIENT_SESSION_TRACK.getValue();
    public static final int CLIENT_DEPRECATE_EOF = MySQLCapabilityFlag.CLIENT_DEPRECATE_EOF.getValue();

    /**
     * What Sluice offers clients. Anything that would change the wire format in ways the relay does not track is
     * left out: compression, query attributes, optional result-set metadata and the
     * MariaDB extended capabilities. Advertising CLIENT_LONG_PASSWORD (MariaDB's "CLIENT_MYSQL" bit) tells MariaDB
     * clients that no extended capabilities follow. CLIENT_SSL is added to the greeting when TLS is on; it only
     * concerns the client's own connection.
     */
    public static final int PROXY_SUPPORTED = CLIENT_LONG_PASSWORD | CLIENT_FOUND_ROWS | CLIENT_LONG_FLAG
            | CLIENT_CONNECT_WITH_DB | CLIENT_NO_SCHEMA | CLIENT_ODBC | CLIENT_LOCAL_FILES | CLIENT_IGNORE_SPACE
            | CLIENT_PROTOCOL_41 | CLIENT_INTERACTIVE | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION
            | CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS | CLIENT_PS_MULTI_RESULTS | CLIENT_PLUGIN_AUTH
            | CLIENT_CONNECT_ATTRS | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA | CLIENT_SESSION_TRACK
            | CLIENT_DEPRECATE_EOF;

    /**
     * The flags that shape the command phase (how the server parses commands and formats results). A pooled backend
     * connection can serve a client only if it was opened with the same bits here; the others only concern the
     * handshake.
     */
    public static final int SESSION_SHAPING = CLIENT_LONG_PASSWORD | CLIENT_FOUND_ROWS | CLIENT_LONG_FLAG
            | CLIENT_NO_SCHEMA | CLIENT_ODBC | CLIENT_LOCAL_FILES | CLIENT_IGNORE_SPACE | CLIENT_PROTOCOL_41
            | CLIENT_INTERACTIVE | CLIENT_TRANSACTIONS | CLIENT_MULTI_STATEMENTS | CLIENT_MULTI_RESULTS
            | CLIENT_PS_MULTI_RESULTS | CLIENT_SESSION_TRACK | CLIENT_DEPRECATE_EOF;

    /**
     * MariaDB's extended capabilities, a second 32-bit word carried in reserved bytes of the greeting and the
     * handshake response, present when the server leaves CLIENT_LONG_PASSWORD ("CLIENT_MYSQL") unset.
     * EXTENDED_METADATA only adds fields inside column definitions, which the relay never parses, so it can cross;
     * CACHE_METADATA changes the result format in a way the relay follows ({@link #MARIADB_CLIENT_CACHE_METADATA});
     * the others add unsolicited packets (PROGRESS) or commands (STMT_BULK_OPERATIONS), and are not offered.
     *
     * @see <a href="https://mariadb.com/kb/en/connection/">MariaDB connection phase</a>
     */
    public static final int MARIADB_CLIENT_EXTENDED_METADATA = 1 << 3;

    /**
     * MariaDB 10.6+: a column count carries a "metadata follows" byte, and COM_STMT_EXECUTE leaves out column
     * definitions the client already has from the prepare or an earlier execute on the same connection. MariaDB's
     * own connectors (Connector/C, hence sysbench, and Connector/J) ask for it, so without it every execute through
     * Sluice made the server build and send the definitions that a direct connection skips. Offered only when a
     * session keeps its backend connection (session pooling): in transaction pooling a statement runs on
     * connections where Sluice prepared it, whose skipped definitions could then differ from those the client got.
     */
    public static final int MARIADB_CLIENT_CACHE_METADATA = 1 << 4;

    /** The MariaDB extended capabilities Sluice relays. */
    public static final int MARIADB_PROXY_SUPPORTED = MARIADB_CLIENT_EXTENDED_METADATA | MARIADB_CLIENT_CACHE_METADATA;

    /**
     * The MariaDB extended capabilities Sluice offers clients and asks of its backend connections.
     *
     * @param server what the backend's greeting offers
     * @param transactionPooling whether sessions share backend connections between transactions (transaction pooling)
     */
    public static int mariaDbOffered(int server, boolean transactionPooling) {
        int supported = transactionPooling ? MARIADB_PROXY_SUPPORTED & ~MARIADB_CLIENT_CACHE_METADATA
                : MARIADB_PROXY_SUPPORTED;
        return server & supported;
    }

    private Capabilities() {
    }

    public static boolean has(int capabilities, int flag) {
        return (capabilities & flag) != 0;
    }
}
