package io.sluice.pooling;

import io.sluice.sql.ClientCharsets;
import io.sluice.sql.LexicalAssignments;
import io.sluice.sql.UnreadText;

/**
 * What in a session's text the server reads otherwise than Sluice's lexer (decision 204, {@link UnreadText}): its
 * client character set (sjis, gbk...: bytes above ASCII) and its {@code sql_mode} ({@code NO_BACKSLASH_ESCAPES}:
 * backslashes, {@code ANSI_QUOTES}: double quotes). The character set comes from the handshake's collation, the
 * {@code sql_mode} from the login values of the connections the session's statement runs on, until the session's
 * statements set their own; a value Sluice cannot read counts as the worst until transaction pooling's tracker reports
 * what the server took. On the session's event loop; read once per statement scanned.
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
    /** The value {@link SessionPort#loginSqlMode} gave when {@link #loginSqlMode} was read from it. */
    private String loginRead;
    private int loginSqlMode;

    ClientReading(SessionPort port) {
        this.port = port;
    }

    /** {@link UnreadText}'s kinds that the server reads otherwise in this session now. */
    int unread() {
        boolean asciiTrails = charset == ClientCharsets.NOT_SET ? ClientCharsets.asciiTrails(port.clientCollationId())
                : charset == ClientCharsets.ASCII_TRAILS;
        return (asciiTrails ? UnreadText.NON_ASCII : 0) | sqlModeUnread();
    }

    /** What the session's sql_mode makes unread: its own, its login value's, or both modes while neither is known. */
    private int sqlModeUnread() {
        if (sqlMode >= 0 && !sqlModeOnLogin) {
            return sqlMode;
        }
        int login = loginSqlMode();
        if (login < 0) {
            return UnreadText.ANY_SQL_MODE; // a cold pool: the server's global sql_mode may have either mode
        } else if (sqlMode < 0) {
            return login;
        }
        sqlMode |= login; // the login value the session's own assignment built on, known now
        sqlModeOnLogin = false;
        return sqlMode;
    }

    /**
     * What the login value makes unread of the connections the session's statement may run on
     * ({@link SessionPort#loginSqlMode}), asked for each statement: it changes when the session takes another
     * connection or moves to another data source; -1 while Sluice has not logged in to its server yet.
     */
    private int loginSqlMode() {
        String value = port.loginSqlMode();
        if (value == null) {
            return -1;
        } else if (!value.equals(loginRead)) { // the same value again, mostly (a held connection's, the pool's)
            loginRead = value;
            loginSqlMode = UnreadText.ofSqlMode(value);
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
                sqlMode = assignments.sqlModeUnread() | Math.max(login, 0);
                sqlModeOnLogin = login < 0; // a cold pool: the login value is added once known
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

    /** The server reported the session's {@code sql_mode} (or a move set it on the session's new connection). */
    void reportedSqlMode(String value) {
        sqlMode = UnreadText.ofSqlMode(value);
        sqlModeOnLogin = false;
    }
}
