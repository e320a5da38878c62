package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.TextRows;
import io.sluice.relay.ResponseKind;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One of the two queries a read/write split group's replica watch sends to each of its servers (MariaDB):
 * {@link ReplicationReading#MARIADB_VARIABLES} then {@link ReplicationReading#REPLICA_STATUS}, pipelined on one
 * connection of the watch's own; the second builds the {@link ReplicationReading}.
 */
public final class ReadReplication extends OwnCommand {
    private final String sql;
    private final boolean deprecateEof;
    private final Consumer<List<Map<String, String>>> rows;
    private final Consumer<BackendException> failed;

    private ReadReplication(String sql, boolean deprecateEof, Consumer<List<Map<String, String>>> rows,
            Consumer<BackendException> failed) {
        this.sql = sql;
        this.deprecateEof = deprecateEof;
        this.rows = rows;
        this.failed = failed;
    }

    /**
     * The two commands for {@code server}; {@code reading} gets the reading, or an unreachable one when a query
     * failed.
     */
    public static ReadReplication[] of(String server, boolean deprecateEof, Consumer<ReplicationReading> reading) {
        String[] variables = new String[3];
        boolean[] failedOnce = new boolean[1];
        Consumer<BackendException> failed = cause -> {
            if (!failedOnce[0]) {
                failedOnce[0] = true;
                reading.accept(ReplicationReading.unreachable(server, cause.getMessage()));
            }
        };
        ReadReplication first = new ReadReplication(ReplicationReading.MARIADB_VARIABLES, deprecateEof, rows -> {
            if (!rows.isEmpty()) {
                List<String> values = rows.get(0).values().stream().map(v -> v == null ? "" : v).toList();
                variables[0] = values.get(0);
                variables[1] = values.get(1);
                variables[2] = values.get(2);
            }
        }, failed);
        ReadReplication second = new ReadReplication(ReplicationReading.REPLICA_STATUS, deprecateEof, rows -> {
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
        return new ReadReplication[] {first, second};
    }

    @Override
    protected ByteBuf encode(ByteBufAllocator alloc) {
        return Packets.command(alloc, Command.COM_QUERY, sql);
    }

    @Override
    protected ResponseKind response() {
        return ResponseKind.RESULT;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        List<Map<String, String>> named = TextRows.named(packets, deprecateEof);
        if (named == null) {
            BackendException refused = refusal(sql, packets);
            failed.accept(refused != null ? refused : new BackendException(sql + ": no result"));
        } else {
            rows.accept(named);
        }
    }

    @Override
    protected void onFailure(BackendException cause) {
        failed.accept(cause);
    }

    @Override
    public String toString() {
        return "ReadReplication[" + sql + "]";
    }
}
