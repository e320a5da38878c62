package io.sluice.pooling;

import io.sluice.backend.BackendConnection;
import io.sluice.sql.ClientCharsets;
import io.sluice.sql.LexicalAssignments;
import io.sluice.sql.UnreadText;

/**
 * What in a session's text the server reads otherwise than Sluice's lexer (decision 204, {@link UnreadText}): its
 * client character set (sjis, gbk...: bytes above ASCII) and its {@code sql_mode} ({@code NO_BACKSLASH_ESCAPES}:
 * backslashes, {@code ANSI_QUOTES}: double quotes). The character set comes from the handshake's collation, the
 * {@code sql_mode} from the login values of the connections the session holds, until the session's statements set
 * their own; a value Sluice cannot read counts as the worst until transaction pooling's tracker reports what the
 * server took. On the session's event loop; read once per statement scanned.
 */
final class ClientReading {
    private final SessionPort port;
    /** What statements or the tracker said of the character set; {@link ClientCharsets#NOT_SET}: the handshake's. */
    private int charset = ClientCharsets.NOT_SET;
    /** What the session's own sql_mode makes unread; -1: it set none, its connections' login value stands. */
    private int sqlMode = -1;
    /**
     * Whether {@link #sqlMode} still lacks the login value it was built on: a {@code SET sql_mode =
     * CONCAT(@@sql_mode, ...)} sent on a cold pool, before any login told that value. The first login value known is
     * then added (that of the connection the assignment ran on); taking the worst at the assignment would keep both
     * modes for a session-pooled session's life, since no tracker corrects it there.
     */
    private boolean sqlModeOnLogin;
    /** The connection held when {@link #loginSqlMode} was read from it; {@code null} before one was. */
    private BackendConnection loginOf;
    /** Whether {@link #loginSqlMode} was read, from a connection held or from the pool's. */
    private boolean loginKnown;
    private int loginSqlMode;

    ClientReading(SessionPort port) {
        this.port = port;
    }

    /** {@link UnreadText}'s kinds that the server reads otherwise in this session now. */
    int unread() {
        boolean asciiTrails = charset == ClientCharsets.NOT_SET ? ClientCharsets.asciiTrails(port.clientCollationId())
                : charset == ClientCharsets.ASCII_TRAILS;
        return (asciiTrails ? UnreadText.NON_ASCII : 0) | (sqlMode < 0 ? loginSqlMode() : ownSqlMode());
    }

    /** The session's own modes, with the login value they were built on once it is known. */
    private int ownSqlMode() {
        if (sqlModeOnLogin) {
            int login = loginSqlMode();
            if (!loginKnown) {
                return UnreadText.ANY_SQL_MODE; // still a cold pool
            }
            sqlMode |= login;
            sqlModeOnLogin = false;
        }
        return sqlMode;
    }

    /**
     * What the server's sql_mode makes unread for a session that set none: the login value of its connection, or of
     * the pool's; both modes while no connection has logged in on the session's loop, since nothing says the server
     * runs neither.
     */
    private int loginSqlMode() {
        BackendConnection held = port.connection();
        if (held != null) {
            if (held != loginOf) {
                loginOf = held;
                loginKnown = true;
                loginSqlMode = UnreadText.ofSqlMode(held.state().loginValues().get("sql_mode"));
            }
        } else if (!loginKnown) {
            // no connection held yet: what the data source's connections logged in with, asked once it is known
            String pools = port.loginSqlMode();
            if (pools == null) {
                // none has logged in on this loop: the server's global sql_mode may have either mode (a cold pool)
                return UnreadText.ANY_SQL_MODE;
            }
            loginKnown = true;
            loginSqlMode = UnreadText.ofSqlMode(pools);
        }
        return loginSqlMode;
    }

    /** A statement about to be sent made these assignments (its scan's): assumed until the server says. */
    void statementSent(LexicalAssignments assignments) {
        if (assignments.charsetSet() != ClientCharsets.NOT_SET) {
            charset = assignments.charsetSet();
        }
        if (assignments.sqlModeSet()) {
            if (!assignments.sqlModeKept()) {
                sqlMode = assignments.sqlModeUnread();
                sqlModeOnLogin = false;
            } else if (sqlMode >= 0) {
                sqlMode |= assignments.sqlModeUnread();
            } else {
                int login = loginSqlMode();
                sqlMode = assignments.sqlModeUnread() | (loginKnown ? login : 0);
                sqlModeOnLogin = !loginKnown; // a cold pool: the login value is added once known
            }
        }
    }

    /**
     * COM_RESET_CONNECTION or COM_CHANGE_USER: the session starts afresh, with its (new) handshake's character set and
     * its connections' login sql_mode, which Sluice gives the connection it runs on.
     */
    void forget() {
        charset = ClientCharsets.NOT_SET;
        sqlMode = -1;
        sqlModeOnLogin = false;
    }

    /** The server reported the session's {@code character_set_client}. */
    void reportedCharset(String value) {
        charset = ClientCharsets.asciiTrails(value) ? ClientCharsets.ASCII_TRAILS : ClientCharsets.SAFE;
    }

    /** The server reported the session's {@code sql_mode}. */
    void reportedSqlMode(String value) {
        sqlMode = UnreadText.ofSqlMode(value);
        sqlModeOnLogin = false;
    }
}
