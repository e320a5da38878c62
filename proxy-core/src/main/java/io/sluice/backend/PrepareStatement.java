package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * COM_STMT_PREPARE of Sluice's own: prepares, on the connection a session uses now, a statement the session prepared
 * on another one (transaction pooling). The response stays with Sluice; the client's own command waits for it.
 */
public final class PrepareStatement extends OwnCommand {

    /** What became of the prepare. */
    public interface Outcome {
        /** The server prepared it: its id on this connection and its parameter count. */
        void prepared(int serverId, int parameters);

        /**
         * The server refused it (a table dropped since), or the connection broke ({@code refusal.serverError()} is
         * then {@code null}).
         */
        void failed(BackendException refusal);
    }

    private final String sql;
    private final Outcome outcome;

    /** @param sql the statement text, ISO-8859-1 so that it carries the client's bytes unchanged */
    public PrepareStatement(String sql, Outcome outcome) {
        this.sql = sql;
        this.outcome = outcome;
    }

    @Override
    protected ByteBuf encode(ByteBufAllocator alloc) {
        byte[] text = sql.getBytes(StandardCharsets.ISO_8859_1);
        ByteBuf frame = Packets.startFrame(alloc, 1 + text.length);
        frame.writeByte(Command.COM_STMT_PREPARE);
        frame.writeBytes(text);
        return Packets.finishFrame(frame, 0);
    }

    @Override
    protected ResponseKind response() {
        return ResponseKind.PREPARE;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        BackendException refused = refusal("COM_STMT_PREPARE", packets);
        ByteBuf first = packets.isEmpty() ? null : Packets.payload(packets.get(0));
        if (refused != null || first.readableBytes() < 9
                || first.getUnsignedByte(first.readerIndex()) != Packets.OK_HEADER) {
            outcome.failed(refused != null ? refused : new BackendException("COM_STMT_PREPARE: malformed answer"));
            return;
        }
        int at = first.readerIndex();
        outcome.prepared(first.getIntLE(at + 1), first.getUnsignedShortLE(at + 7));
    }

    @Override
    protected void onFailure(BackendException cause) {
        outcome.failed(cause);
    }
}
