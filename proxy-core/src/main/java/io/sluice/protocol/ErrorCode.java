package io.sluice.protocol;

/**
 * The MySQL errors Sluice itself sends, each with the SQLSTATE a client expects with it. Errors that come from a
 * backend are relayed as the backend sent them.
 *
 * @see <a href="https://dev.mysql.com/doc/mysql-errors/8.0/en/server-error-reference.html">Server error reference</a>
 */
public enum ErrorCode {
    /** Too many client connections ({@code server.maxConnections}), or no backend connection became free in time. */
    ER_CON_COUNT_ERROR(1040, "08004"),
    /** The handshake response could not be read. */
    ER_HANDSHAKE_ERROR(1043, "08S01"),
    /** Sluice is shutting down gracefully: new connections are refused. */
    ER_SERVER_SHUTDOWN(1053, "08S01"),
    /** Wrong password or unknown user. */
    ER_ACCESS_DENIED_ERROR(1045, "28000"),
    /**
     * A login attempt from an address backing off after failed logins, whose turn is further away than it may wait
     * (another attempt from the address already waits, or the turn comes after its handshake timeout).
     */
    ER_HOST_IS_BLOCKED(1129, "HY000"),
    /** A command Sluice does not relay (replication, binlog). */
    ER_UNKNOWN_COM_ERROR(1047, "08S01"),
    /** A login packet with another sequence id than the exchange's next one. */
    ER_NET_PACKETS_OUT_OF_ORDER(1156, "08S01"),
    /** A command whose frame did not arrive whole within {@code server.netReadTimeoutMilliseconds}. */
    ER_NET_READ_INTERRUPTED(1159, "08S01"),
    /** A prepared-statement command named a statement id the session never prepared, or closed. */
    ER_UNKNOWN_STMT_HANDLER(1243, "HY000"),
    /** A command larger than {@code server.maxPacketSize}. */
    ER_NET_PACKET_TOO_LARGE(1153, "08S01"),
    /** An account already has {@code maxConnections} sessions ({@code authority.users[].maxConnections}). */
    ER_USER_LIMIT_REACHED(1226, "42000"),
    /** The client asked for an authentication method Sluice cannot perform. */
    ER_NOT_SUPPORTED_AUTH_MODE(1251, "08004"),
    /** The backend could not be reached; class 08 so that pools discard the connection. */
    CR_CONN_HOST_ERROR(2003, "08001"),
    /**
     * The backend connection was lost during the session. SQLSTATE class 08 (connection exception) rather than the
     * C client's HY000, because that is what makes JDBC drivers and pools discard the connection.
     */
    CR_SERVER_LOST(2013, "08S01"),
    /**
     * A statement of a read/write split session that needs the group's primary while it is down (decision 103):
     * the code a read-only server answers a write with, SQLSTATE HY000 so that drivers and pools keep the connection,
     * whose reads go on from the replicas.
     */
    ER_OPTION_PREVENTS_STATEMENT(1290, "HY000"),
    /**
     * A write in a READ ONLY transaction or session: what a replica's connection answers a write with (decision 110),
     * and Sluice's answer to a statement that would make a replica's connection writable.
     */
    ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION(1792, "25006"),
    /** A plain-text login while {@code server.tls.requireSecureTransport} is on. */
    ER_SECURE_TRANSPORT_REQUIRED(3159, "HY000"),
    /** A client silent for longer than {@code server.idleTimeoutMilliseconds}, as MySQL 8.0.24+ says it. */
    ER_CLIENT_INTERACTION_TIMEOUT(4031, "HY000");

    private final int code;
    private final String sqlState;

    ErrorCode(int code, String sqlState) {
        this.code = code;
        this.sqlState = sqlState;
    }

    public int code() {
        return code;
    }

    public String sqlState() {
        return sqlState;
    }

    /**
     * The SQLSTATE that goes with {@code code}, for an ERR packet that came without one (a server's error sent
     * before the handshake, such as MariaDB's "Too many connections"): the one Sluice uses for that code, else
     * HY000, what the MySQL client library reports for an error without SQLSTATE.
     */
    public static String sqlStateOf(int code) {
        for (ErrorCode error : values()) {
            if (error.code == code) {
                return error.sqlState;
            }
        }
        return "HY000";
    }
}
