package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.backend.BackendException;
import io.sluice.backend.OwnCommand;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.TextRows;
import io.sluice.relay.ResponseKind;
import java.util.List;

/**
 * Reads back what a statement changed that neither the trackers nor OK packets tell exactly (see
 * {@link SessionStateFollower#takeReadBack()}): one query of Sluice's own, only after such statements.
 */
final class ReadBack extends OwnCommand {
    static final int COLLATION = 1;
    static final int LAST_INSERT_ID = 2;
    /** {@code @@timestamp}: whether the session's clock is set, see {@link SessionStateFollower#readBack}. */
    static final int TIMESTAMP = 4;

    /** What was read, or why not. */
    interface Outcome {
        /**
         * @param collation the collation, or {@code null} when not asked for; likewise the last-insert id and the
         *     timestamp
         */
        void read(String collation, String lastInsertId, String timestamp);

        void failed(BackendException cause);
    }

    private final int wanted;
    private final boolean deprecateEof;
    private final Outcome outcome;

    ReadBack(int wanted, boolean deprecateEof, Outcome outcome) {
        this.wanted = wanted;
        this.deprecateEof = deprecateEof;
        this.outcome = outcome;
    }

    @Override
    protected ByteBuf encode(ByteBufAllocator alloc) {
        return Packets.command(alloc, Command.COM_QUERY,
                "SELECT @@session.collation_connection, LAST_INSERT_ID(), @@session.timestamp");
    }

    @Override
    protected ResponseKind response() {
        return ResponseKind.RESULT;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        String[] row = TextRows.single(packets, deprecateEof, 3);
        if (row == null) {
            outcome.read(null, null, null);
            return;
        }
        outcome.read((wanted & COLLATION) != 0 ? row[0] : null, (wanted & LAST_INSERT_ID) != 0 ? row[1] : null,
                (wanted & TIMESTAMP) != 0 ? row[2] : null);
    }

    @Override
    protected void onFailure(BackendException cause) {
        outcome.failed(cause);
    }
}
