package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.backend.OwnCommand;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.protocol.TextRows;
import io.sluice.relay.ResponseKind;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads a session's user variables back from MariaDB, as SQL literals that give another connection the same values
 * with the same types, so that they move with the session instead of pinning it (issue #27). Two queries of Sluice's
 * own: the names and types ({@code information_schema.USER_VARIABLES}, a MariaDB plugin on by default), then the
 * values themselves, exact: that table converts them to utf8mb3, losing what it cannot show.
 *
 * <p>Strings come back as {@code _charset X'hex' COLLATE collation}, integers and decimals as their text, doubles as
 * their text with an exponent, NULLs as a NULL cast to the variable's type.
 */
public final class ReadUserVariables extends OwnCommand {
    static final String NAMES = "SELECT VARIABLE_NAME, VARIABLE_TYPE FROM information_schema.USER_VARIABLES";

    /** What was read, or why not. */
    public interface Outcome {
        /** @param literals the literals by name (lower case, without {@code @}); empty when there are none */
        void read(Map<String, String> literals);

        /** The server refused a query (the table is missing: the plugin was uninstalled). */
        void refused();

        /** The connection broke. */
        void lost(BackendException cause);
    }

    private final BackendConnection on;
    private final boolean deprecateEof;
    private final Outcome outcome;

    /**
     * @param on the connection whose user variables are read (transaction pooling; a session-pooling move)
     * @param deprecateEof whether the connection negotiated CLIENT_DEPRECATE_EOF
     */
    public ReadUserVariables(BackendConnection on, boolean deprecateEof, Outcome outcome) {
        this.on = on;
        this.deprecateEof = deprecateEof;
        this.outcome = outcome;
    }

    @Override
    protected ByteBuf encode(ByteBufAllocator alloc) {
        return Packets.command(alloc, Command.COM_QUERY, NAMES);
    }

    @Override
    protected ResponseKind response() {
        return ResponseKind.RESULT;
    }

    @Override
    protected void onResponse(List<ByteBuf> packets) {
        List<String[]> names = TextRows.all(packets, deprecateEof, 2);
        if (names == null) {
            outcome.refused();
        } else if (names.isEmpty()) {
            outcome.read(Map.of());
        } else {
            on.run(new Values(names));
        }
    }

    @Override
    protected void onFailure(BackendException cause) {
        outcome.lost(cause);
    }

    /** The second query: each variable's value, character set and collation. */
    private final class Values extends OwnCommand {
        private static final int COLUMNS_EACH = 4;
        private final List<String[]> names;

        Values(List<String[]> names) {
            this.names = names;
        }

        @Override
        protected ByteBuf encode(ByteBufAllocator alloc) {
            StringBuilder sql = new StringBuilder("SELECT ");
            for (int i = 0; i < names.size(); i++) {
                String v = "@`" + names.get(i)[0].replace("`", "``") + "`";
                sql.append(i == 0 ? "" : ", ").append(v).append(", HEX(").append(v).append("), CHARSET(").append(v)
                        .append("), COLLATION(").append(v).append(')');
            }
            return Packets.command(alloc, Command.COM_QUERY, sql.toString());
        }

        @Override
        protected ResponseKind response() {
            return ResponseKind.RESULT;
        }

        @Override
        protected void onResponse(List<ByteBuf> packets) {
            String[] row = TextRows.single(packets, deprecateEof, names.size() * COLUMNS_EACH);
            if (row == null) {
                outcome.refused();
                return;
            }
            Map<String, String> literals = new HashMap<>();
            for (int i = 0; i < names.size(); i++) {
                String literal = literal(names.get(i)[1], row[i * COLUMNS_EACH], row[i * COLUMNS_EACH + 1],
                        row[i * COLUMNS_EACH + 2], row[i * COLUMNS_EACH + 3]);
                literals.put(names.get(i)[0].toLowerCase(Locale.ROOT), literal);
            }
            outcome.read(literals);
        }

        @Override
        protected void onFailure(BackendException cause) {
            outcome.lost(cause);
        }
    }

    /**
     * The SQL literal that gives a variable this value and type; a NULL keeps its type too (MariaDB reports a
     * variable that held an integer and was set to NULL as an integer), through a CAST.
     *
     * @param type {@code INT}, {@code INT UNSIGNED}, {@code DECIMAL}, {@code DOUBLE} or {@code VARCHAR}
     */
    static String literal(String type, String text, String hex, String charset, String collation) {
        boolean isNull = text == null || hex == null;
        switch (type == null ? "" : type) {
            case "INT":
                return isNull ? "CAST(NULL AS SIGNED)" : text;
            case "INT UNSIGNED":
                return "CAST(" + (isNull ? "NULL" : text) + " AS UNSIGNED)"; // a bare 20000 would be signed
            case "DECIMAL":
                return isNull ? "CAST(NULL AS DECIMAL(65,30))" : text;
            case "DOUBLE":
                return isNull ? "CAST(NULL AS DOUBLE)"
                        : text.indexOf('e') >= 0 || text.indexOf('E') >= 0 ? text : text + "e0";
            default:
                boolean binary = charset == null || charset.equals("binary");
                if (isNull) {
                    return binary ? "NULL" : "CAST(NULL AS CHAR CHARACTER SET " + charset + ")";
                }
                String bytes = "X'" + hex + "'";
                if (binary) {
                    return "_binary " + bytes;
                }
                return "_" + charset + " " + bytes + (collation == null ? "" : " COLLATE " + collation);
        }
    }
}
