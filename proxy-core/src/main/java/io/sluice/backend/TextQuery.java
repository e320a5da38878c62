package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.TextRows;
import io.sluice.relay.ResponseKind;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * One query of Sluice's own whose text result is handed over whole, each row by column name: the replica watch's
 * readings, read/write splitting's causal wait. A refusal or a lost connection goes to {@code failed}.
 */
public final class TextQuery extends OwnCommand {
    private final String sql;
    private final boolean deprecateEof;
    private final Consumer<List<Map<String, String>>> rows;
    private final Consumer<BackendException> failed;

    /**
     * @param rows receives the rows (values {@code null} for SQL NULL)
     * @param failed receives why there are none
     */
    public TextQuery(String sql, boolean deprecateEof, Consumer<List<Map<String, String>>> rows,
            Consumer<BackendException> failed) {
        this.sql = sql;
        this.deprecateEof = deprecateEof;
        this.rows = rows;
        this.failed = failed;
    }

    /** The first column of the first row, as a one-value query ({@code SELECT MASTER_GTID_WAIT(...)}) answers. */
    public static String firstValue(List<Map<String, String>> rows) {
        return rows.isEmpty() ? null : rows.get(0).values().iterator().next();
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
        return "TextQuery[" + sql + "]";
    }
}
