package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.relay.ColumnDefinitionsDigest;
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
    private long definitions = ColumnDefinitionsDigest.NONE;

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
        int parameters = first.getUnsignedShortLE(at + 7);
        definitions = digest(packets, parameters, first.getUnsignedShortLE(at + 5));
        outcome.prepared(first.getIntLE(at + 1), parameters);
    }

    /**
     * The {@link ColumnDefinitionsDigest} of the result column definitions the server answered with, as the
     * {@link io.sluice.relay.ResponseTracker} digests them for a client (MariaDB's metadata caching, issue #31): what
     * the server takes a client of this connection to have. Valid from {@link Outcome#prepared} on.
     */
    public long definitions() {
        return definitions;
    }

    /** After the OK: the parameter definitions, an EOF unless CLIENT_DEPRECATE_EOF, then the column definitions. */
    private static long digest(List<ByteBuf> packets, int parameters, int columns) {
        ColumnDefinitionsDigest digest = new ColumnDefinitionsDigest();
        int i = 1 + parameters;
        if (parameters > 0 && i < packets.size() && isEof(Packets.payload(packets.get(i)))) {
            i++;
        }
        for (int end = Math.min(i + columns, packets.size()); i < end; i++) {
            digest.packet(Packets.payload(packets.get(i)));
        }
        return digest.value();
    }

    private static boolean isEof(ByteBuf payload) {
        return payload.readableBytes() < 9 && payload.getUnsignedByte(payload.readerIndex()) == Packets.EOF_HEADER;
    }

    @Override
    protected void onFailure(BackendException cause) {
        outcome.failed(cause);
    }
}
