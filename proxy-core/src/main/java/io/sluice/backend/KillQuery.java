package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import java.util.List;
import java.util.function.Consumer;

/**
 * {@code KILL QUERY ID <query id>} (MariaDB) or {@code KILL QUERY <thread id>} (MySQL), answered by an OK: ends one
 * statement running on another connection of the same account, which gets ERR 1317 for it (a query rule's timeout,
 * decision 168).
 */
public final class KillQuery extends OwnCommand {
    private final String sql;
    private final Consumer<BackendException> done;

    /** @param done receives {@code null} once the server accepted it, else its refusal or the failure */
    public KillQuery(String sql, Consumer<BackendException> done) {
        this.sql = sql;
        this.done = done;
    }

    @Override
    protected ByteBuf encode(ByteBufAllocator alloc) {
        return Packets.command(alloc, Command.COM_QUERY, sql);
    }

    @Override
    protected ResponseKind response() {
        return ResponseKind.SINGLE;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        done.accept(refusal(sql, packets));
    }

    @Override
    protected void onFailure(BackendException cause) {
        done.accept(cause);
    }
}
