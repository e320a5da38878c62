package io.sluice.backend;

import io.sluice.balancer.replication.ReplicationReading;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The two queries a read/write split group's replica watch sends to each of its servers (MariaDB):
 * {@link ReplicationReading#MARIADB_VARIABLES} then {@link ReplicationReading#REPLICA_STATUS}, pipelined on one
 * connection of the watch's own; the second builds the {@link ReplicationReading}.
 */
public final class ReadReplication {

    private ReadReplication() {
    }

    /**
     * The two commands for {@code server}; {@code reading} gets the reading, or an unreachable one when a query
     * failed.
     */
    public static TextQuery[] of(String server, boolean deprecateEof, Consumer<ReplicationReading> reading) {
        String[] variables = new String[3];
        boolean[] failedOnce = new boolean[1];
        Consumer<BackendException> failed = cause -> {
            if (!failedOnce[0]) {
                failedOnce[0] = true;
                reading.accept(ReplicationReading.unreachable(server, cause.getMessage()));
            }
        };
        TextQuery first = new TextQuery(ReplicationReading.MARIADB_VARIABLES, deprecateEof, rows -> {
            if (!rows.isEmpty()) {
                List<String> values = rows.get(0).values().stream().map(v -> v == null ? "" : v).toList();
                variables[0] = values.get(0);
                variables[1] = values.get(1);
                variables[2] = values.get(2);
            }
        }, failed);
        TextQuery second = new TextQuery(ReplicationReading.REPLICA_STATUS, deprecateEof, rows -> {
            if (failedOnce[0]) {
                return;
            }
            try {
                reading.accept(ReplicationReading.of(server, ReplicationReading.isOn(variables[0]), variables[1],
                        variables[2], rows.isEmpty() ? Map.of() : rows.get(0)));
            } catch (IllegalArgumentException e) {
                reading.accept(ReplicationReading.unreachable(server, "unreadable position: " + e.getMessage()));
            }
        }, failed);
        return new TextQuery[] {first, second};
    }
}
