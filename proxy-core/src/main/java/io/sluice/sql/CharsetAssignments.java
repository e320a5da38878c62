package io.sluice.sql;

import io.sluice.sql.SqlLexer.Kind;
import io.sluice.sql.SqlLexer.Source;

/**
 * The client character set a SET statement names, read token by token within {@link StatementScan}'s one pass
 * (decision 204): {@code SET NAMES x}, {@code SET CHARACTER SET x}, {@code SET CHARSET x} and an assignment of
 * {@code character_set_client} in any scope. Allocates nothing.
 */
final class CharsetAssignments {
    private static final String CLIENT_CHARSET = "CHARACTER_SET_CLIENT";

    private int set;
    private boolean valueNext; // the set's name is the next code token (after an '=')
    private boolean characterWord; // the last code token was CHARACTER (of CHARACTER SET)

    /** A new text. */
    void reset() {
        set = ClientCharsets.NOT_SET;
        valueNext = false;
        characterWord = false;
    }

    /**
     * What the text read so far sets: {@link ClientCharsets#NOT_SET}, {@link ClientCharsets#SAFE}, or
     * {@link ClientCharsets#ASCII_TRAILS} when any of its statements names such a set or one Sluice cannot name.
     */
    int set() {
        return set;
    }

    /** A code token of a SET statement. */
    <T> void token(Source<T> s, T text, Kind kind, int start, int end) {
        if (valueNext) {
            if (kind == Kind.PUNCTUATION && (s.at(text, start) == '=' || s.at(text, start) == ':')) {
                return; // character_set_client = x, := x
            }
            valueNext = false;
            set = Math.max(set, ClientCharsets.named(s, text, start, end, kind));
            return;
        }
        boolean character = characterWord;
        characterWord = kind == Kind.WORD && SqlLexer.is(s, text, start, end, "CHARACTER");
        valueNext = kind == Kind.WORD && (SqlLexer.is(s, text, start, end, "NAMES")
                || SqlLexer.is(s, text, start, end, "CHARSET") || character && SqlLexer.is(s, text, start, end, "SET"))
                || (kind == Kind.WORD || kind == Kind.VARIABLE) && endsWithName(s, text, start, end);
    }

    /** Whether the token is {@code character_set_client}, alone or after {@code @@}, a scope and a dot. */
    private static <T> boolean endsWithName(Source<T> s, T text, int start, int end) {
        int from = end - CLIENT_CHARSET.length();
        return from >= start && SqlLexer.is(s, text, from, end, CLIENT_CHARSET)
                && (from == start || s.at(text, from - 1) == '.' || s.at(text, from - 1) == '@');
    }
}
