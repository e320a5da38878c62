package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.sluice.metrics.CommandObserver;
import io.sluice.metrics.CommandTypes;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import io.sluice.statistics.StatementRecord;

/**
 * One command forwarded on a backend connection whose response has not ended: the single record of a pipelined
 * command. Entries live in a per-connection ring ({@link InFlightCommands}) and are reused, so forwarding a command
 * allocates nothing.
 */
final class InFlight {
    /** The shape of the response, for the tracker. */
    ResponseKind kind;
    /** Sluice's own command, which gets the response; {@code null} for a client's, whose response is relayed. */
    OwnCommand own;
    /** The command's type for metrics ({@link io.sluice.metrics.CommandTypes}). */
    int commandType;
    /** When it was forwarded, {@link System#nanoTime()}; 0 when commands are not timed. */
    long startedNanos;
    /** The first bytes of a COM_QUERY's SQL, for the slow-query log; reused from command to command. */
    byte[] sql;
    int sqlLength;
    int sqlTotalLength;
    /** The statement id the client is shown in a COM_STMT_PREPARE_OK in place of the server's; 0 for none. */
    int replacementStatementId;
    /** A traffic capture's record of the command, or {@code null}. */
    ResponseObserver captured;
    /** Transaction pooling's mapping of a prepared statement, or {@code null}. */
    ResponseObserver mapping;
    /** Where the statement's outcome is counted by digest, or {@code null} (statistics off, or no statement). */
    StatementRecord statement;
    /** Whether it was sent to a replica of a read/write split group, for {@link #statement}. */
    boolean onReplica;
    /** A {@code maxRows} rule's limit on the response, or {@code null}. */
    io.sluice.relay.RowLimit rows;

    /** Back to an unused entry; the SQL array is kept for the next command. */
    void clear() {
        kind = null;
        own = null;
        rows = null;
        startedNanos = 0;
        sqlLength = -1;
        replacementStatementId = 0;
        captured = null;
        mapping = null;
        statement = null;
    }

    /**
     * Starts the clock on a client command frame (borrowed), and keeps a COM_QUERY's first bytes for the slow-query
     * log: the frame itself is released once written.
     */
    void start(ByteBuf frame, CommandObserver observer) {
        int at = frame.readerIndex() + Packets.HEADER_SIZE;
        int command = frame.getUnsignedByte(at);
        commandType = CommandTypes.index(command);
        startedNanos = System.nanoTime();
        int keep = command == Command.COM_QUERY ? observer.sqlToKeep() : 0;
        if (keep > 0) {
            int total = Packets.payloadLength(frame, frame.readerIndex()) - 1;
            int length = Math.max(0, Math.min(Math.min(total, keep), frame.writerIndex() - at - 1));
            if (sql == null || sql.length < length) {
                sql = new byte[Math.min(keep, Math.max(length, 256))];
            }
            frame.getBytes(at + 1, sql, 0, length);
            sqlLength = length;
            sqlTotalLength = total;
        }
    }

    /** Whether the slow-query log has this command's SQL. */
    boolean hasSql() {
        return sqlLength >= 0;
    }

    /** Tells the entry's observers that its response will never be seen. */
    void abandon() {
        if (captured != null) {
            captured.onAbandoned();
        }
        if (mapping != null) {
            mapping.onAbandoned();
        }
    }
}
