package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import java.util.List;
import java.util.function.Consumer;

/**
 * A client's statement run again on another server by a {@code mirror} query rule, its result discarded as it
 * arrives (only the first packet is kept, to tell an OK or a result from an ERR).
 */
public final class MirroredQuery extends OwnCommand {
    private final String sql;
    private final Consumer<BackendException> done;

    /** @param done receives {@code null} once the server answered (a result or OK), else its refusal or the failure */
    public MirroredQuery(String sql, Consumer<BackendException> done) {
        this.sql = sql;
        this.done = done;
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
    protected boolean keepsResponse() {
        return false;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        done.accept(refusal("mirrored statement", packets));
    }

    @Override
    protected void onFailure(BackendException cause) {
        done.accept(cause);
    }
}
