package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import java.util.List;
import java.util.function.Consumer;

/** COM_INIT_DB: selects the schema a session asked for on an idle connection that has another one. */
public final class InitDb extends OwnCommand {
    private final String schema;
    private final Consumer<BackendException> done;

    /** @param done receives {@code null} once the schema is selected, else the server's refusal or the failure */
    public InitDb(String schema, Consumer<BackendException> done) {
        this.schema = schema;
        this.done = done;
    }

    @Override
    protected ByteBuf encode(ByteBufAllocator alloc) {
        return Packets.command(alloc, Command.COM_INIT_DB, schema);
    }

    @Override
    protected ResponseKind response() {
        return ResponseKind.SINGLE;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        done.accept(refusal("COM_INIT_DB", packets));
    }

    @Override
    protected void onFailure(BackendException cause) {
        done.accept(cause);
    }
}
