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
import java.util.function.Consumer;

/**
 * A causal read's wait on a replica, before the session's read runs there: {@code SELECT MASTER_GTID_WAIT(...)}
 * (or MySQL's {@code WAIT_FOR_EXECUTED_GTID_SET}), whose one value says whether the replica applied the session's
 * last write in time. Sluice's own command, on the replica connection just taken for the read.
 */
final class CausalWaitQuery extends OwnCommand {
    private final String sql;
    private final boolean deprecateEof;
    private final Consumer<String> value;
    private final Consumer<BackendException> failed;

    /**
     * @param value receives the result's one value ({@code null} for SQL NULL)
     * @param failed receives why there is none (a refusal, a lost connection)
     */
    CausalWaitQuery(String sql, boolean deprecateEof, Consumer<String> value, Consumer<BackendException> failed) {
        this.sql = sql;
        this.deprecateEof = deprecateEof;
        this.value = value;
        this.failed = failed;
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
        String[] row = TextRows.single(packets, deprecateEof, 1);
        if (row == null) {
            BackendException refused = refusal(sql, packets);
            failed.accept(refused != null ? refused : new BackendException(sql + ": no row"));
        } else {
            value.accept(row[0]);
        }
    }

    @Override
    protected void onFailure(BackendException cause) {
        failed.accept(cause);
    }

    @Override
    public String toString() {
        return "CausalWaitQuery[" + sql + "]";
    }
}
