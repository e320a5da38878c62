package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import java.util.ArrayList;
import java.util.List;

/**
 * A command Sluice itself sends on a backend connection: its response is read whole and handed to it instead of
 * being relayed to a client. One subclass per command, in the manner of vertx-mysql-client's command codecs; they
 * sit in the connection's in-flight queue like a client's commands ({@link BackendConnection#run}).
 *
 * <p>Ownership: the response's packets belong to the command while it collects them and are released once
 * {@link #onResponse} returns; subclasses only borrow them.
 */
public abstract class OwnCommand {
    private List<ByteBuf> packets;
    private boolean answered;
    private boolean refused;

    /** The command frame (sequence id 0), allocated from {@code alloc}; the connection writes and releases it. */
    protected abstract ByteBuf encode(ByteBufAllocator alloc);

    /** The shape of the response, for the tracker. */
    protected abstract ResponseKind response();

    /**
     * The whole response arrived (borrowed: released after this returns).
     *
     * @param packets its frames, header included, in order; the first is an ERR when the server refused
     */
    protected abstract void onResponse(List<ByteBuf> packets);

    /** The response will never arrive: the connection broke or was closed first. */
    protected abstract void onFailure(BackendException cause);

    /** Whether the server answered, and not with ERR; valid once the response arrived. */
    public final boolean succeeded() {
        return answered && !refused;
    }

    /**
     * Whether {@link #onResponse} is handed the whole response; {@code false}: only its first packet (enough to tell
     * an OK from an ERR), the rest released as it arrives, for a command whose result nobody reads.
     */
    protected boolean keepsResponse() {
        return true;
    }

    /** One more packet of the response (taken). */
    final void add(ByteBuf packet) {
        if (packets == null) {
            packets = new ArrayList<>(4);
        } else if (!keepsResponse()) {
            packet.release();
            return;
        }
        packets.add(packet);
    }

    /** The response is complete: hands it over, then releases it. */
    final void complete() {
        List<ByteBuf> response = packets == null ? List.of() : packets;
        packets = null;
        answered = true;
        refused = !response.isEmpty() && Packets.isErr(Packets.payload(response.get(0)));
        try {
            onResponse(response);
        } finally {
            response.forEach(ByteBuf::release);
        }
    }

    /** The connection failed before the response was complete: releases what arrived and says so. */
    final void fail(BackendException cause) {
        if (packets != null) {
            packets.forEach(ByteBuf::release);
            packets = null;
        }
        onFailure(cause);
    }

    /**
     * The server's refusal in a response answered by OK or ERR, as the exception callers pass on, or {@code null} for
     * OK.
     */
    protected static BackendException refusal(String what, List<ByteBuf> packets) {
        if (packets.isEmpty()) {
            return new BackendException(what + ": no answer");
        }
        ByteBuf first = Packets.payload(packets.get(0));
        return Packets.isErr(first) ? new BackendException(what + " refused", Packets.parseErr(first)) : null;
    }

    @Override
    public String toString() {
        return getClass().getSimpleName();
    }
}
