package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import java.util.List;
import java.util.function.Consumer;

/**
 * COM_PING: asks an idle connection whether its server still answers before it is lent, one round trip and no
 * change to the session.
 */
public final class Ping extends OwnCommand {
    private final Consumer<BackendException> done;

    /** @param done receives {@code null} once the server answered OK, else its refusal or the failure */
    public Ping(Consumer<BackendException> done) {
        this.done = done;
    }

    @Override
    protected ByteBuf encode(ByteBufAllocator alloc) {
        return Packets.command(alloc, Command.COM_PING, null);
    }

    @Override
    protected ResponseKind response() {
        return ResponseKind.SINGLE;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        done.accept(refusal("COM_PING", packets));
    }

    @Override
    protected void onFailure(BackendException cause) {
        done.accept(cause);
    }
}
