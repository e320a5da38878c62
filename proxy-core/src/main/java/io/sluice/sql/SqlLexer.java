package io.sluice.sql;

/**
 * MySQL's lexical rules, for reading SQL text without parsing it: one call gives the token that starts at an index,
 * and tokens tile the text (white space and comments are tokens too), so a caller walks a statement with
 *
 * <pre>{@code
 * for (int i = from; i < to; ) {
 *     long token = SqlLexer.next(SqlLexer.CHARS, sql, i, to);
 *     ... SqlLexer.kind(token), the text from i to SqlLexer.end(token) ...
 *     i = SqlLexer.end(token);
 * }
 * }</pre>
 *
 * <p>It allocates nothing, so that transaction pooling can run it on the event loop for every COM_QUERY: a token is a
 * {@code long} (its {@link Kind} and its end), the text is read through a {@link Source} (a {@code String}, or bytes of
 * UTF-8 in a Netty buffer, which this package does not know), and keywords are compared in place. Code units at or
 * above 0x80 (the bytes of a multi-byte UTF-8 character, or a non-ASCII {@code char}) are identifier characters, as
 * in MySQL, so bytes and characters lex alike.
 *
 * <p>What it assumes where MySQL depends on the session: backslash escapes in strings (no
 * {@code NO_BACKSLASH_ESCAPES}) and double quotes around strings (no {@code ANSI_QUOTES}). An executable comment
 * ({@code /*!50101 ...}{@code *}{@code /}, MariaDB's {@code /*M!...}) is code: only its opening and closing marks
 * are tokens of their own, and a {@code *}{@code /} outside any comment is taken for a closing mark, since it is
 * nothing else in valid SQL.
 */
public final class SqlLexer {

    /** What a token is. The kinds that are not code come first (see {@link #isCode}). */
    public enum Kind {
        /** A run of white space. */
        SPACE,
        /** {@code -- } or {@code #} to the end of the line, or {@code /*...}{@code *}{@code /}. */
        COMMENT,
        /** {@code /*!}, {@code /*M!}, with the version that follows: what follows up to the closing mark is code. */
        EXECUTABLE_COMMENT_START,
        /** {@code *}{@code /} outside a comment: the end of an executable comment. */
        EXECUTABLE_COMMENT_END,
        /** A keyword or an unquoted identifier: letters, digits, {@code _}, {@code $}, non-ASCII. */
        WORD,
        /** A name in back quotes. */
        QUOTED_IDENTIFIER,
        /** A string literal in single or double quotes, with its prefix: {@code X'0A'}, {@code B'01'}, {@code N'a'}. */
        STRING,
        /** A number: {@code 42}, {@code 1.5e3}, {@code .5}, {@code 0xFF}, {@code 0b01}. */
        NUMBER,
        /** A user variable ({@code @name}, {@code @'name'}) or a system variable ({@code @@name}, {@code @@session.name}). */
        VARIABLE,
        /** An operator or other sign: {@code (}, {@code ,}, {@code =}, {@code <=>}, {@code :=}, {@code ->>}, {@code ?}... */
        PUNCTUATION
    }

    /**
     * How the lexer reads one code unit of a text. Sluice has two sources, {@link #CHARS} and the UTF-8 bytes of a
     * packet; a third would make the lexer's calls through this interface megamorphic on the hot path.
     *
     * @param <T> the text's type
     */
    @FunctionalInterface
    public interface Source<T> {
        /** The code unit at {@code index}, from 0 (a byte is read unsigned). */
        int at(T text, int index);
    }

    /** Reads a {@code String} (or any {@link CharSequence}) by {@code char}. */
    public static final Source<CharSequence> CHARS = CharSequence::charAt;

    private static final Kind[] KINDS = Kind.values();

    private SqlLexer() {
    }

    /**
     * The token that starts at {@code index}, which must be below {@code end}. A token cut by {@code end} (an
     * unterminated string or comment) ends there.
     */
    public static <T> long next(Source<T> source, T text, int index, int end) {
        int c = source.at(text, index);
        int following = index + 1 < end ? source.at(text, index + 1) : -1;
        if (isSpace(c)) {
            int i = index + 1;
            while (i < end && isSpace(source.at(text, i))) {
                i++;
            }
            return token(Kind.SPACE, i);
        }
        switch (c) {
            case '\'', '"':
                return token(Kind.STRING, quotedEnd(source, text, index + 1, end, c));
            case '`':
                return token(Kind.QUOTED_IDENTIFIER, quotedEnd(source, text, index + 1, end, c));
            case '#':
                return token(Kind.COMMENT, lineEnd(source, text, index + 1, end));
            case '-':
                // MySQL wants white space or a control character after the two dashes: 1--1 is 1 - (-1).
                if (following == '-' && (index + 2 == end || source.at(text, index + 2) <= ' ')) {
                    return token(Kind.COMMENT, lineEnd(source, text, index + 2, end));
                }
                break;
            case '/':
                if (following == '*') {
                    return comment(source, text, index, end);
                }
                break;
            case '*':
                // "*/*" is a "*" before a comment, never an executable comment's end before a "*".
                if (following == '/' && (index + 2 == end || source.at(text, index + 2) != '*')) {
                    return token(Kind.EXECUTABLE_COMMENT_END, index + 2);
                }
                break;
            case '@':
                return variable(source, text, index, end, following);
            case '.':
                if (isDigit(following)) {
                    return number(source, text, index, end);
                }
                break;
            default:
                if (isDigit(c)) {
                    return number(source, text, index, end);
                }
                if (isWordChar(c)) {
                    int letter = c | 0x20;
                    if (following == '\'' && (letter == 'x' || letter == 'b' || letter == 'n')) {
                        return token(Kind.STRING, quotedEnd(source, text, index + 2, end, '\''));
                    }
                    return token(Kind.WORD, wordEnd(source, text, index + 1, end));
                }
        }
        return token(Kind.PUNCTUATION, operatorEnd(source, text, index, end, c, following));
    }

    /** What the token is. */
    public static Kind kind(long token) {
        return KINDS[(int) (token >>> 32)];
    }

    /** Where the token ends: the index after its last code unit, where the next token starts. */
    public static int end(long token) {
        return (int) token;
    }

    /** Whether a token is code: neither white space, nor a comment, nor an executable comment's marks. */
    public static boolean isCode(Kind kind) {
        return kind.ordinal() >= Kind.WORD.ordinal();
    }

    /** Where the next code token starts from {@code index}: past white space, comments and executable comment marks. */
    public static <T> int skipToCode(Source<T> source, T text, int index, int end) {
        while (index < end) {
            long token = next(source, text, index, end);
            if (isCode(kind(token))) {
                return index;
            }
            index = end(token);
        }
        return end;
    }

    /**
     * Whether the text from {@code start} to {@code end} is {@code upperCaseWord}, ignoring the case of ASCII letters
     * as MySQL does for keywords.
     */
    public static <T> boolean is(Source<T> source, T text, int start, int end, String upperCaseWord) {
        if (end - start != upperCaseWord.length()) {
            return false;
        }
        for (int k = 0; k < upperCaseWord.length(); k++) {
            int c = source.at(text, start + k);
            if (c >= 'a' && c <= 'z') {
                c -= 'a' - 'A';
            }
            if (c != upperCaseWord.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    private static long token(Kind kind, int end) {
        return (long) kind.ordinal() << 32 | end;
    }

    /** {@code /*} at {@code index}: a comment, or an executable comment's opening mark with its version number. */
    private static <T> long comment(Source<T> source, T text, int index, int end) {
        int i = index + 2;
        if (i < end && source.at(text, i) == 'M' && i + 1 < end && source.at(text, i + 1) == '!') {
            i++; // MariaDB's /*M!: executed by MariaDB only
        }
        if (i < end && source.at(text, i) == '!') {
            i++;
            while (i < end && isDigit(source.at(text, i))) {
                i++;
            }
            return token(Kind.EXECUTABLE_COMMENT_START, i);
        }
        i = index + 2;
        while (i + 1 < end && !(source.at(text, i) == '*' && source.at(text, i + 1) == '/')) {
            i++;
        }
        return token(Kind.COMMENT, Math.min(i + 2, end));
    }

    /** Past the closing quote; a doubled quote stands for itself, and a backslash escapes in strings only. */
    private static <T> int quotedEnd(Source<T> source, T text, int i, int end, int quote) {
        while (i < end) {
            int c = source.at(text, i++);
            if (c == '\\' && quote != '`') {
                i++;
            } else if (c == quote) {
                if (i < end && source.at(text, i) == quote) {
                    i++;
                } else {
                    return i;
                }
            }
        }
        return end;
    }

    /** The end of a line comment: its newline is white space, not comment. */
    private static <T> int lineEnd(Source<T> source, T text, int i, int end) {
        while (i < end && source.at(text, i) != '\n') {
            i++;
        }
        return i;
    }

    private static <T> int wordEnd(Source<T> source, T text, int i, int end) {
        while (i < end && isWordChar(source.at(text, i))) {
            i++;
        }
        return i;
    }

    private static <T> int digitsEnd(Source<T> source, T text, int i, int end) {
        while (i < end && isDigit(source.at(text, i))) {
            i++;
        }
        return i;
    }

    /**
     * A number at {@code index}; a run of digits (or a hexadecimal or binary number) that goes on with letters is a
     * word, as MySQL allows identifiers such as {@code 1st}, while {@code 1.5e3abc} is a number and a word.
     */
    private static <T> long number(Source<T> source, T text, int index, int end) {
        int i = index;
        int second = index + 1 < end ? source.at(text, index + 1) | 0x20 : -1;
        if (source.at(text, index) == '0' && (second == 'x' || second == 'b')) {
            i = index + 2;
            while (i < end && (second == 'x' ? isHexDigit(source.at(text, i)) : isBinaryDigit(source.at(text, i)))) {
                i++;
            }
            if (i == index + 2) {
                i = index + 1; // "0x" with no digits: 0, or the start of a word such as 0xyz
            }
        } else {
            i = digitsEnd(source, text, i, end);
            boolean integer = true;
            if (i < end && source.at(text, i) == '.') {
                i = digitsEnd(source, text, i + 1, end);
                integer = false;
            }
            if (i < end && (source.at(text, i) | 0x20) == 'e') {
                int j = i + 1;
                if (j < end && (source.at(text, j) == '+' || source.at(text, j) == '-')) {
                    j++;
                }
                if (j < end && isDigit(source.at(text, j))) {
                    i = digitsEnd(source, text, j, end);
                    integer = false;
                }
            }
            if (!integer) {
                return token(Kind.NUMBER, i);
            }
        }
        if (i < end && isWordChar(source.at(text, i))) {
            return token(Kind.WORD, wordEnd(source, text, i, end));
        }
        return token(Kind.NUMBER, i);
    }

    /** {@code @} at {@code index}: a variable, or a lone {@code @} (punctuation). */
    private static <T> long variable(Source<T> source, T text, int index, int end, int following) {
        if (following == '\'' || following == '"' || following == '`') {
            return token(Kind.VARIABLE, quotedEnd(source, text, index + 2, end, following));
        }
        int i = following == '@' ? index + 2 : index + 1;
        while (i < end && (isWordChar(source.at(text, i)) || source.at(text, i) == '.')) {
            i++; // the dot of @@session.name; user variable names may hold dots too
        }
        return token(i == index + 1 ? Kind.PUNCTUATION : Kind.VARIABLE, i);
    }

    /** MySQL's operators of two and three characters are one token each; anything else is one character. */
    private static <T> int operatorEnd(Source<T> source, T text, int index, int end, int c, int following) {
        int third = index + 2 < end ? source.at(text, index + 2) : -1;
        switch (c) {
            case '<':
                if (following == '=') {
                    return third == '>' ? index + 3 : index + 2; // <=>, <=
                }
                return following == '>' || following == '<' ? index + 2 : index + 1;
            case '-':
                if (following == '>') {
                    return third == '>' ? index + 3 : index + 2; // ->>, ->
                }
                return index + 1;
            case '>':
                return following == '=' || following == '>' ? index + 2 : index + 1;
            case '!', ':':
                return following == '=' ? index + 2 : index + 1;
            case '|', '&':
                return following == c ? index + 2 : index + 1;
            default:
                return index + 1;
        }
    }

    private static boolean isSpace(int c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x0B || c == '\f';
    }

    private static boolean isDigit(int c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isHexDigit(int c) {
        return isDigit(c) || (c | 0x20) >= 'a' && (c | 0x20) <= 'f';
    }

    private static boolean isBinaryDigit(int c) {
        return c == '0' || c == '1';
    }

    /** Letters, digits, {@code _}, {@code $}, and everything past ASCII, as MySQL's unquoted identifiers. */
    static boolean isWordChar(int c) {
        return (c | 0x20) >= 'a' && (c | 0x20) <= 'z' || isDigit(c) || c == '_' || c == '$' || c >= 0x80;
    }
}
