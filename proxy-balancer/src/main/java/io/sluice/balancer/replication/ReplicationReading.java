package io.sluice.balancer.replication;

import java.util.Locale;
import java.util.Map;

/**
 * What one health check read from one server of a read/write split group. The check runs, on each server:
 *
 * <ol>
 *   <li>{@link #MARIADB_VARIABLES} (MariaDB) or {@link #MYSQL_VARIABLES} (MySQL): whether it is read-only, and its
 *       applied position: MariaDB's {@code @@gtid_slave_pos} on a replica (what {@code MASTER_GTID_WAIT} waits on),
 *       {@code @@gtid_current_pos} on the primary; MySQL's {@code @@gtid_executed} on either;</li>
 *   <li>{@link #REPLICA_STATUS}: one row on a replica, none on a primary. MariaDB names its columns
 *       {@code Slave_IO_Running}, {@code Slave_SQL_Running}, {@code Seconds_Behind_Master}, {@code Gtid_IO_Pos};
 *       MySQL 8.0.22+ {@code Replica_IO_Running}, {@code Replica_SQL_Running}, {@code Seconds_Behind_Source},
 *       {@code Retrieved_Gtid_Set}; {@link #of} reads either.</li>
 * </ol>
 *
 * @param server the data source's name
 * @param reachable whether the server answered the check at all
 * @param readOnly {@code @@read_only} (or {@code super_read_only}) is on
 * @param replica the server has a replica status row: it is configured to replicate
 * @param ioRunning the IO thread runs ({@code Yes}; {@code Connecting} is not running)
 * @param sqlRunning the SQL thread runs
 * @param secondsBehind {@code Seconds_Behind_Master}, or -1 for NULL (a thread stopped) or no replica status
 * @param received what the IO thread has received ({@code Gtid_IO_Pos}, {@code Retrieved_Gtid_Set}); may be empty
 * @param applied what the server has applied (see above); may be empty
 * @param error why the server was unreachable, or the replica's last IO or SQL error, or {@code ""}
 * @param sourceHost where a replica replicates from ({@code Master_Host}, MySQL 8.0.22+'s {@code Source_Host}),
 *     {@code ""} when it is no replica or the status has no such column
 * @param sourcePort its port ({@code Master_Port}, {@code Source_Port}), 0 when unknown
 */
public record ReplicationReading(String server, boolean reachable, boolean readOnly, boolean replica,
        boolean ioRunning, boolean sqlRunning, long secondsBehind, GtidPosition received, GtidPosition applied,
        String error, String sourceHost, int sourcePort) {

    /** MariaDB's variables, one row: read_only, gtid_current_pos, gtid_slave_pos. */
    public static final String MARIADB_VARIABLES =
            "SELECT @@GLOBAL.read_only, @@GLOBAL.gtid_current_pos, @@GLOBAL.gtid_slave_pos";
    /** MySQL's variables, one row: read_only, super_read_only, gtid_executed. */
    public static final String MYSQL_VARIABLES =
            "SELECT @@GLOBAL.read_only, @@GLOBAL.super_read_only, @@GLOBAL.gtid_executed";
    /** The replica status; MariaDB 10.5+ and MySQL 8.0.22+ both take it (older ones: SHOW SLAVE STATUS). */
    public static final String REPLICA_STATUS = "SHOW REPLICA STATUS";
    /**
     * The same before MySQL 8.0.22 (which answers {@link #REPLICA_STATUS} with a syntax error, 1064): the columns
     * keep the {@code Slave_} and {@code Master} names, which {@link #of} reads.
     */
    public static final String SLAVE_STATUS = "SHOW SLAVE STATUS";

    /** A server that did not answer. */
    public static ReplicationReading unreachable(String server, String error) {
        return new ReplicationReading(server, false, false, false, false, false, -1, MariaDbGtidPosition.empty(),
                MariaDbGtidPosition.empty(), error, "", 0);
    }

    /**
     * A reading from the variables and the replica status row.
     *
     * @param readOnly the variables' read_only (or super_read_only) is on
     * @param currentPosition MariaDB's {@code gtid_current_pos} or MySQL's {@code gtid_executed}
     * @param slavePosition MariaDB's {@code gtid_slave_pos}, or {@code null} on MySQL
     * @param status the replica status row by column name, empty when the server is no replica
     * @throws IllegalArgumentException when a position is not one
     */
    public static ReplicationReading of(String server, boolean readOnly, String currentPosition,
            String slavePosition, Map<String, String> status) {
        return of(server, readOnly, GtidPosition.parse(nullToEmpty(currentPosition)), slavePosition, status);
    }

    /**
     * A MySQL server's reading, from {@link #MYSQL_VARIABLES} and the replica status row: every position is a GTID
     * set, the empty one included (a fresh replica's {@code gtid_executed} is empty text, which
     * {@link GtidPosition#parse} would take for MariaDB's empty position, of the other flavour and so never at or past
     * the primary's set).
     *
     * @param readOnly {@code read_only} or {@code super_read_only} is on
     * @param gtidExecuted {@code @@GLOBAL.gtid_executed}: what the server has applied (or, on the primary, committed)
     * @throws IllegalArgumentException when a position is not a GTID set
     */
    public static ReplicationReading ofMySql(String server, boolean readOnly, String gtidExecuted,
            Map<String, String> status) {
        return of(server, readOnly, MySqlGtidSet.parse(nullToEmpty(gtidExecuted)), null, status);
    }

    private static ReplicationReading of(String server, boolean readOnly, GtidPosition current, String slavePosition,
            Map<String, String> status) {
        if (status.isEmpty()) {
            return new ReplicationReading(server, true, readOnly, false, false, false, -1, current, current, "", "",
                    0);
        }
        boolean io = "Yes".equalsIgnoreCase(column(status, "Slave_IO_Running", "Replica_IO_Running"));
        boolean sql = "Yes".equalsIgnoreCase(column(status, "Slave_SQL_Running", "Replica_SQL_Running"));
        String seconds = column(status, "Seconds_Behind_Master", "Seconds_Behind_Source");
        String received = column(status, "Gtid_IO_Pos", "Retrieved_Gtid_Set");
        GtidPosition applied = slavePosition != null ? GtidPosition.parse(slavePosition) : current;
        boolean mySql = current instanceof MySqlGtidSet;
        String error = column(status, "Last_SQL_Error", "Last_SQL_Error");
        if (error == null || error.isEmpty()) {
            error = column(status, "Last_IO_Error", "Last_IO_Error");
        }
        String port = column(status, "Master_Port", "Source_Port");
        return new ReplicationReading(server, true, readOnly, true, io, sql,
                seconds == null || seconds.isBlank() ? -1 : Long.parseLong(seconds.strip()),
                received == null || received.isBlank() ? emptyLike(applied)
                        : mySql ? MySqlGtidSet.parse(received) : GtidPosition.parse(received),
                applied, nullToEmpty(error), nullToEmpty(column(status, "Master_Host", "Source_Host")).strip(),
                port == null || port.isBlank() ? 0 : Integer.parseInt(port.strip()));
    }

    /**
     * Whether this server is a replica of the server at {@code host:port}, by its replica status: its source's port
     * is {@code port} and its source's host is {@code host}, ignoring case, or both are names of the loopback
     * interface ({@code localhost}, {@code 127.x.x.x}, {@code ::1}). Names are not resolved (the replica watch runs
     * on the health-check loop, which must not wait on DNS): a replica that names its source otherwise than the data
     * source's URL does is not taken for one of it (decision 185).
     */
    public boolean replicatesFrom(String host, int port) {
        return replica && sourcePort == port && (sourceHost.equalsIgnoreCase(host)
                || isLoopback(sourceHost) && isLoopback(host));
    }

    /** {@code host:port} of this replica's source, for messages; {@code "?"} when its status did not say. */
    public String source() {
        return sourceHost.isEmpty() ? "?" : sourceHost + ":" + sourcePort;
    }

    private static boolean isLoopback(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        return h.equals("localhost") || h.startsWith("127.") || h.equals("::1") || h.equals("0:0:0:0:0:0:0:1");
    }

    private static String column(Map<String, String> status, String mariaDb, String mySql) {
        String value = status.get(mariaDb);
        return value != null || !status.containsKey(mySql) ? value : status.get(mySql);
    }

    private static GtidPosition emptyLike(GtidPosition position) {
        return position instanceof MySqlGtidSet ? MySqlGtidSet.empty() : MariaDbGtidPosition.empty();
    }

    private static String nullToEmpty(String text) {
        return text == null ? "" : text;
    }

    /** Reads {@code ON}, {@code 1}, {@code true} as on, as the variables come back through different clients. */
    public static boolean isOn(String value) {
        if (value == null) {
            return false;
        }
        String text = value.strip().toUpperCase(Locale.ROOT);
        return text.equals("1") || text.equals("ON") || text.equals("TRUE");
    }
}
