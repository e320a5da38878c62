package io.sluice.backend;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.TextRows;
import io.sluice.relay.ResponseKind;
import io.sluice.state.SessionVariables;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Reads the session variables that COM_RESET_CONNECTION may leave changed, after login and again after each reset:
 * if the character sets differ from login, the connection no longer matches its {@link SessionKey} and is closed;
 * the schema tells which sessions it can serve without COM_INIT_DB.
 */
final class SessionCheck extends OwnCommand {
    static final String QUERY = "SELECT DATABASE(), @@character_set_client, @@character_set_connection, "
            + "@@character_set_results, @@collation_connection, @@sql_mode, @@wait_timeout";
    private static final int COLUMNS = 7;

    /**
     * The row read.
     *
     * @param handshakeVariables the values of {@link SessionVariables#HANDSHAKE_VARIABLES}, by name
     */
    record Row(String schema, String characterSets, Map<String, String> handshakeVariables) {
    }

    private final boolean deprecateEof;
    private final Consumer<Row> done;

    /** @param done receives the row, or {@code null} when the query failed or the connection broke */
    SessionCheck(boolean deprecateEof, Consumer<Row> done) {
        this.deprecateEof = deprecateEof;
        this.done = done;
    }

    @Override
    protected ByteBuf encode(ByteBufAllocator alloc) {
        return Packets.command(alloc, Command.COM_QUERY, QUERY);
    }

    @Override
    protected ResponseKind response() {
        return ResponseKind.RESULT;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        String[] row = TextRows.single(packets, deprecateEof, COLUMNS);
        if (row == null) {
            done.accept(null);
            return;
        }
        Map<String, String> handshake = new HashMap<>(8);
        for (int i = 0; i < SessionVariables.HANDSHAKE_VARIABLES.size(); i++) {
            handshake.put(SessionVariables.HANDSHAKE_VARIABLES.get(i), row[i + 1]);
        }
        done.accept(new Row(row[0], row[1] + "/" + row[2] + "/" + row[3] + "/" + row[4], handshake));
    }

    @Override
    protected void onFailure(BackendException cause) {
        done.accept(null);
    }
}
