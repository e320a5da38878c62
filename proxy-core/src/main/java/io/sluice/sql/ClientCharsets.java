package io.sluice.sql;

import io.sluice.sql.SqlLexer.Source;

/**
 * The client character sets whose multi-byte characters may end in an ASCII byte: big5, cp932, gbk, gb18030 and
 * sjis (MySQL's own list of sets in which escaping with a backslash is dangerous). In sjis the server reads
 * {@code '予'} (0x27 0x97 0x5C 0x27) as a one-character string, where a reader of bytes that does not know the set
 * reads a backslash that escapes the closing quote, and takes the code after it for text; a trailing 0x60 does the
 * same to a back-quoted name. Sluice's {@link SqlLexer} reads bytes so, and a statement in such a set is therefore
 * read completely only when it is all ASCII (every byte of these sets' multi-byte characters but the last is 0x81 or
 * above): {@link StatementScan} counts any other as code the text does not show (decision 204).
 */
public final class ClientCharsets {

    /** A statement sets no client character set. */
    public static final int NOT_SET = 0;
    /** It sets one whose characters never end in an ASCII byte (utf8mb4, latin1...). */
    public static final int SAFE = 1;
    /** It sets one whose characters may, or one Sluice cannot name ({@code DEFAULT}, a variable). */
    public static final int ASCII_TRAILS = 2;

    private static final String[] NAMES = {"BIG5", "CP932", "GBK", "GB18030", "SJIS"};

    private ClientCharsets() {
    }

    /** Whether {@code charset} (a name, as the tracker reports it) may end characters in an ASCII byte. */
    public static boolean asciiTrails(String charset) {
        if (charset == null) {
            return false;
        }
        for (String name : NAMES) {
            if (name.equalsIgnoreCase(charset.trim())) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether the collation a handshake or a COM_CHANGE_USER names belongs to such a set: big5 (1, 84), sjis (13,
     * 88), gbk (28, 87), cp932 (95, 96), and MySQL's gb18030 (248 to 250); MariaDB's other collations of these sets
     * have ids above 255, which no handshake carries.
     */
    public static boolean asciiTrails(int collationId) {
        switch (collationId) {
            case 1, 84, 13, 88, 28, 87, 95, 96, 248, 249, 250:
                return true;
            default:
                return false;
        }
    }

    /**
     * What the value token of {@code SET NAMES x}, {@code SET CHARACTER SET x} or {@code character_set_client = x}
     * sets: {@link #SAFE} for a named set that is not one of these, else {@link #ASCII_TRAILS}.
     */
    static <T> int named(Source<T> s, T text, int start, int end, SqlLexer.Kind kind) {
        if (kind == SqlLexer.Kind.STRING || kind == SqlLexer.Kind.QUOTED_IDENTIFIER) {
            if (end - start < 3 || s.at(text, start) != s.at(text, end - 1)) {
                return ASCII_TRAILS; // a prefixed or unclosed string: not a plain name
            }
            start++;
            end--;
        } else if (kind != SqlLexer.Kind.WORD || SqlLexer.is(s, text, start, end, "DEFAULT")) {
            return ASCII_TRAILS; // a variable, an expression, the server's default: not known here
        }
        for (String name : NAMES) {
            if (SqlLexer.is(s, text, start, end, name)) {
                return ASCII_TRAILS;
            }
        }
        return SAFE;
    }
}
