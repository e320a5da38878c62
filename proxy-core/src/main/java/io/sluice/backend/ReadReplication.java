package io.sluice.backend;

import io.sluice.balancer.replication.ReplicationReading;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The queries a read/write split group's replica watch sends to each of its servers, on a connection of the watch's
 * own, by what the server's greeting said it is ({@link ConnectionState#isMySql()}):
 *
 * <ul>
 *   <li>MariaDB: {@link ReplicationReading#MARIADB_VARIABLES} (read_only, gtid_current_pos, gtid_slave_pos) then
 *       {@link ReplicationReading#REPLICA_STATUS};</li>
 *   <li>MySQL: {@link ReplicationReading#MYSQL_VARIABLES} (read_only, super_read_only, gtid_executed) then
 *       {@link ReplicationReading#REPLICA_STATUS} (8.0.22+), and {@link ReplicationReading#SLAVE_STATUS} after it
 *       when the server refuses that with a syntax error (ER_PARSE_ERROR, 1064: MySQL 5.7 and 8.0 before 8.0.22).</li>
 * </ul>
 *
 * The first two are pipelined; the replica status builds the {@link ReplicationReading}.
 */
public final class ReadReplication {
    /** ER_PARSE_ERROR: how a MySQL older than 8.0.22 answers {@code SHOW REPLICA STATUS}. */
    static final int PARSE_ERROR = 1064;

    private final String server;
    private final boolean mySql;
    private final boolean deprecateEof;
    private final Consumer<ReplicationReading> reading;
    private final String[] variables = new String[3];
    private boolean failed;

    private ReadReplication(String server, boolean mySql, boolean deprecateEof, Consumer<ReplicationReading> reading) {
        this.server = server;
        this.mySql = mySql;
        this.deprecateEof = deprecateEof;
        this.reading = reading;
    }

    /**
     * Reads {@code connection}'s server; {@code reading} gets the reading once, or an unreachable one when a query
     * failed.
     *
     * @param server the data source's name, for the reading
     */
    public static void run(BackendConnection connection, String server, Consumer<ReplicationReading> reading) {
        ReadReplication read = new ReadReplication(server, connection.state().isMySql(),
                connection.key().deprecateEof(), reading);
        connection.run(read.variablesQuery(), read.statusQuery(connection, ReplicationReading.REPLICA_STATUS));
    }

    private TextQuery variablesQuery() {
        String sql = mySql ? ReplicationReading.MYSQL_VARIABLES : ReplicationReading.MARIADB_VARIABLES;
        return new TextQuery(sql, deprecateEof, rows -> {
            if (!rows.isEmpty()) {
                List<String> values = rows.get(0).values().stream().map(v -> v == null ? "" : v).toList();
                variables[0] = values.get(0);
                variables[1] = values.get(1);
                variables[2] = values.get(2);
            }
        }, this::failed);
    }

    private TextQuery statusQuery(BackendConnection connection, String sql) {
        return new TextQuery(sql, deprecateEof, rows -> {
            if (!failed) {
                status(rows.isEmpty() ? Map.of() : rows.get(0));
            }
        }, cause -> {
            if (mySql && sql.equals(ReplicationReading.REPLICA_STATUS) && !failed && cause.serverError() != null
                    && cause.serverError().code() == PARSE_ERROR) {
                connection.run(statusQuery(connection, ReplicationReading.SLAVE_STATUS)); // before 8.0.22
            } else {
                failed(cause);
            }
        });
    }

    private void status(Map<String, String> row) {
        try {
            ReplicationReading result;
            if (mySql) {
                // super_read_only implies read_only on a real server; either one keeps writes off a replica.
                boolean readOnly = ReplicationReading.isOn(variables[0]) || ReplicationReading.isOn(variables[1]);
                result = ReplicationReading.ofMySql(server, readOnly, variables[2], row);
            } else {
                result = ReplicationReading.of(server, ReplicationReading.isOn(variables[0]), variables[1],
                        variables[2], row);
            }
            reading.accept(result);
        } catch (IllegalArgumentException e) {
            reading.accept(ReplicationReading.unreachable(server, "unreadable position: " + e.getMessage()));
        }
    }

    private void failed(BackendException cause) {
        if (!failed) {
            failed = true;
            reading.accept(ReplicationReading.unreachable(server, cause.getMessage()));
        }
    }
}
