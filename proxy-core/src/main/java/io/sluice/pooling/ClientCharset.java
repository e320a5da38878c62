package io.sluice.pooling;

import io.sluice.sql.ClientCharsets;

/**
 * Whether a session's client character set may end a character in an ASCII byte (sjis, cp932, gbk, gb18030, big5:
 * {@link ClientCharsets}), so that its statements are read completely only when they are all ASCII (decision 204).
 * From the handshake's collation until a statement sets another set, pessimistically when Sluice cannot name it
 * ({@code SET NAMES DEFAULT}); transaction pooling's tracker then reports the set the server took. On the session's
 * event loop.
 */
final class ClientCharset {
    private final SessionPort port;
    /** What statements or the tracker said since login; {@link ClientCharsets#NOT_SET}: the handshake's stands. */
    private int said = ClientCharsets.NOT_SET;

    ClientCharset(SessionPort port) {
        this.port = port;
    }

    /** Read once per statement scanned. */
    boolean asciiTrails() {
        return said == ClientCharsets.NOT_SET ? ClientCharsets.asciiTrails(port.clientCollationId())
                : said == ClientCharsets.ASCII_TRAILS;
    }

    /** A statement about to be sent sets this ({@code StatementScan#charsetSet}): assumed until the server says. */
    void statementSets(int set) {
        if (set != ClientCharsets.NOT_SET) {
            said = set;
        }
    }

    /** The server reported the session's {@code character_set_client}. */
    void reported(String charset) {
        said = ClientCharsets.asciiTrails(charset) ? ClientCharsets.ASCII_TRAILS : ClientCharsets.SAFE;
    }
}
