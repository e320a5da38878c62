package io.sluice.pooling;

import io.netty.buffer.ByteBuf;
import io.sluice.sql.SessionEffects;
import io.sluice.state.PreparedStatement;
import java.nio.charset.StandardCharsets;

/**
 * A session's statements that define a trigger or a view, or rename a table ({@link SessionEffects#DEFINES_HIDDEN_CODE},
 * decisions 200 and 203): told to the port when sent, so that what they name counts at once for every session, and
 * again once their responses have ended, so that the catalogue is read after they ran. Rare: the text is decoded only
 * for them.
 */
final class CodeDefinitions {
    private final SessionPort port;
    /** The definitions sent whose responses have not all ended, joined by {@code ;}; {@code null} when none. */
    private String running;

    CodeDefinitions(SessionPort port) {
        this.port = port;
    }

    /**
     * A COM_QUERY with these {@link SessionEffects} flags is about to be sent. Its bytes are read one character each,
     * as a prepared statement's text is kept: the client's character set is not known here, and
     * {@link io.sluice.sql.DefinedNames} reads the names both ways (a latin1 client's name read as UTF-8 was no name at all).
     */
    void sent(int flags, ByteBuf frame, int base, int end) {
        if ((flags & SessionEffects.DEFINES_HIDDEN_CODE) != 0) {
            sent(frame.toString(base + 1, end - base - 1, StandardCharsets.ISO_8859_1));
        }
    }

    /** An execute of {@code statement} (which may be {@code null}) is about to be sent. */
    void sent(PreparedStatement statement) {
        if (statement != null && (statement.sniffed() & SessionEffects.DEFINES_HIDDEN_CODE) != 0) {
            sent(statement.sql());
        }
    }

    private void sent(String sql) {
        port.hiddenCodeDefining(sql);
        running = running == null ? sql : running + ";" + sql;
    }

    /**
     * The session ended, perhaps before a definition's response: the catalogue is read now, so that what it named
     * does not count for good (a definition the server finishes later counts from the next scheduled reading).
     */
    void ended() {
        if (running != null) {
            String sent = running;
            running = null;
            port.hiddenCodeDefined(sent);
        }
    }

    /** The session's responses may have ended: if they have, the definitions sent have run. */
    void answered() {
        if (running != null && port.isQuiet()) {
            ended();
        }
    }
}
