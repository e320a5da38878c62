package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseKind;
import java.util.List;
import java.util.function.Consumer;

/**
 * COM_RESET_CONNECTION: the server session back to a fresh login's, same user, before a connection is pooled again.
 * It is always followed by the session trackers (transaction pooling), a replica's {@code READ ONLY} and a
 * {@link SessionCheck}, whose callback judges the whole reset.
 */
public final class ResetConnection extends OwnCommand {

    private ResetConnection() {
    }

    /**
     * Resets {@code connection} and checks that it is as it was at login (same character sets), pipelined in one
     * round trip: COM_RESET_CONNECTION, the session trackers when it follows session state, then the session check.
     *
     * @param done receives whether the connection is clean and matches its key; on false it must be closed
     */
    public static void run(BackendConnection connection, Consumer<Boolean> done) {
        ResetConnection reset = new ResetConnection();
        ConnectionState state = connection.state();
        SetSessionVariables trackers = state.tracksState() ? SetSessionVariables.sessionTrackers(state.isMySql(),
                connection.key().deprecateEof())
                : null;
        // COM_RESET_CONNECTION puts the access mode back to the server's default: a replica's connection runs READ ONLY
        // again, and the check fails it (the connection is closed) unless it reads READ ONLY (decision 110).
        SetSessionVariables readOnly = state.readOnly() ? SetSessionVariables.readOnly() : null;
        SessionCheck check = new SessionCheck(connection.key().deprecateEof(), trackers != null, state.isMySql(),
                readOnly != null, row -> done.accept(row != null && reset.succeeded()
                        && (trackers == null || trackers.succeeded()) && (readOnly == null || readOnly.succeeded())
                        && state.reset(row)));
        OwnCommand[] after = BackendLogin.commands(trackers, readOnly, check);
        OwnCommand[] all = new OwnCommand[after.length + 1];
        all[0] = reset;
        System.arraycopy(after, 0, all, 1, after.length);
        connection.run(all);
    }

    @Override
    protected ByteBuf encode(ByteBufAllocator alloc) {
        return Packets.command(alloc, Command.COM_RESET_CONNECTION, null);
    }

    @Override
    protected ResponseKind response() {
        return ResponseKind.SINGLE;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        // judged by the session check that follows
    }

    @Override
    protected void onFailure(BackendException cause) {
        // so is a failure: the check fails with it
    }
}
