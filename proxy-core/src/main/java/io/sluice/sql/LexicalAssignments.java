package io.sluice.sql;

import io.sluice.sql.SqlLexer.Kind;
import io.sluice.sql.SqlLexer.Source;

/**
 * What a text's SET statements change in how the server reads the session's later text (decision 204), read token by
 * token within {@link StatementScan}'s one pass: the client character set ({@code SET NAMES x},
 * {@code SET CHARACTER SET x}, {@code SET CHARSET x}, {@code character_set_client = x}) and the {@code sql_mode}
 * ({@code sql_mode = ...} in any scope). Allocates nothing.
 *
 * <p>A {@code sql_mode} value is read for the mode names its string literals and words give ({@link UnreadText}),
 * and whether it starts from the session's own ({@code @@sql_mode}, as MariaDB Connector/J's
 * {@code CONCAT(@@sql_mode, ',STRICT_TRANS_TABLES')} does). A value Sluice cannot read (a number, {@code DEFAULT},
 * another variable) counts as one with every mode that changes the reading.
 */
public final class LexicalAssignments {
    private static final String CLIENT_CHARSET = "CHARACTER_SET_CLIENT";
    private static final String SQL_MODE = "SQL_MODE";

    private int charsetSet;
    private boolean charsetValueNext; // the set's name is the next code token (after an '=')
    private boolean characterWord; // the last code token was CHARACTER (of CHARACTER SET)

    private boolean sqlModeSet;
    private int sqlModeUnread;
    private boolean sqlModeKept = true; // every assignment so far read @@sql_mode
    private boolean inSqlMode; // reading a sql_mode assignment, after its name
    private boolean sqlModeValueStarted; // its '=' was read
    private boolean keptThis; // its value read @@sql_mode
    private int depth;
    private boolean statementScoped; // SET STATEMENT ... FOR: the session's own values do not change

    /** A new text. */
    void reset() {
        charsetSet = ClientCharsets.NOT_SET;
        charsetValueNext = false;
        characterWord = false;
        sqlModeSet = false;
        sqlModeUnread = 0;
        sqlModeKept = true;
        inSqlMode = false;
        statementScoped = false;
    }

    /** The text ended: an assignment read to its end counts. */
    void finish() {
        endSqlMode();
    }

    private void endSqlMode() {
        if (inSqlMode && sqlModeValueStarted) {
            sqlModeKept &= keptThis;
        }
        inSqlMode = false;
    }

    /**
     * The client character set the text sets: {@link ClientCharsets#NOT_SET}, {@link ClientCharsets#SAFE}, or
     * {@link ClientCharsets#ASCII_TRAILS} when any of its statements names such a set or one Sluice cannot name.
     */
    public int charsetSet() {
        return charsetSet;
    }

    /** Whether the text assigns {@code sql_mode}. */
    public boolean sqlModeSet() {
        return sqlModeSet;
    }

    /** What the modes the text's {@code sql_mode} assignments name make unread ({@link UnreadText}). */
    public int sqlModeUnread() {
        return sqlModeUnread;
    }

    /** Whether every {@code sql_mode} assignment adds to the session's own modes, not replacing them. */
    public boolean sqlModeKept() {
        return sqlModeKept;
    }

    /** What the text's assignments make unread for what follows them in it. */
    int unreadAfter() {
        return (charsetSet == ClientCharsets.ASCII_TRAILS ? UnreadText.NON_ASCII : 0)
                | (sqlModeSet ? UnreadText.ANY_SQL_MODE : 0);
    }

    /**
     * A code token of a SET statement; {@code afterSet}: the first after the word SET (its {@code STATEMENT}, in
     * MariaDB's {@code SET STATEMENT ... FOR}, changes nothing of the session's).
     */
    <T> void token(Source<T> s, T text, Kind kind, int start, int end, boolean afterSet) {
        if (afterSet) {
            endSqlMode();
            statementScoped = kind == Kind.WORD && SqlLexer.is(s, text, start, end, "STATEMENT");
        }
        if (statementScoped) {
            return;
        }
        if (inSqlMode) {
            sqlModeValue(s, text, kind, start, end);
            return;
        }
        if (charsetValueNext) {
            if (kind == Kind.PUNCTUATION && (s.at(text, start) == '=' || s.at(text, start) == ':')) {
                return; // character_set_client = x, := x
            }
            charsetValueNext = false;
            charsetSet = Math.max(charsetSet, ClientCharsets.named(s, text, start, end, kind));
            return;
        }
        boolean character = characterWord;
        characterWord = kind == Kind.WORD && SqlLexer.is(s, text, start, end, "CHARACTER");
        boolean named = kind == Kind.WORD || kind == Kind.VARIABLE;
        charsetValueNext = kind == Kind.WORD && (SqlLexer.is(s, text, start, end, "NAMES")
                || SqlLexer.is(s, text, start, end, "CHARSET") || character && SqlLexer.is(s, text, start, end, "SET"))
                || named && endsWithName(s, text, start, end, CLIENT_CHARSET);
        if (named && endsWithName(s, text, start, end, SQL_MODE)) {
            sqlModeSet = true;
            inSqlMode = true;
            sqlModeValueStarted = false;
            depth = 0;
        }
    }

    /** A token of a {@code sql_mode} assignment, after the name: '=', then the value up to a ',' or ';' outside it. */
    private <T> void sqlModeValue(Source<T> s, T text, Kind kind, int start, int end) {
        int c = s.at(text, start);
        if (!sqlModeValueStarted) {
            if (kind == Kind.PUNCTUATION && (c == '=' || c == ':')) {
                sqlModeValueStarted = true;
                keptThis = false; // replaced, unless the value reads @@sql_mode
                return;
            }
            inSqlMode = false; // not an assignment (SET STATEMENT sql_mode ... FOR, a name in an expression)
            return;
        }
        if (kind == Kind.PUNCTUATION) {
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (depth <= 0 && (c == ',' || c == ';')) {
                endSqlMode();
            }
            return;
        }
        switch (kind) {
            case STRING, WORD -> {
                if (kind == Kind.WORD && SqlLexer.is(s, text, start, end, "DEFAULT")) {
                    sqlModeUnread |= UnreadText.ANY_SQL_MODE; // the server's global value, not known here
                } else {
                    sqlModeUnread |= UnreadText.ofSqlMode(s, text, start, end);
                }
            }
            case VARIABLE -> {
                if (endsWithName(s, text, start, end, SQL_MODE) && !SqlLexer.is(s, text, start, Math.min(end,
                        start + 9), "@@GLOBAL.")) {
                    keptThis = true; // CONCAT(@@sql_mode, ...): the session's own modes, and what is added
                } else {
                    sqlModeUnread |= UnreadText.ANY_SQL_MODE;
                }
            }
            default -> sqlModeUnread |= UnreadText.ANY_SQL_MODE; // a number (a bit mask), anything else
        }
    }

    /** Whether the token is {@code upper}, alone or after {@code @@}, a scope and a dot. */
    private static <T> boolean endsWithName(Source<T> s, T text, int start, int end, String upper) {
        int from = end - upper.length();
        return from >= start && SqlLexer.is(s, text, from, end, upper)
                && (from == start || s.at(text, from - 1) == '.' || s.at(text, from - 1) == '@');
    }
}
