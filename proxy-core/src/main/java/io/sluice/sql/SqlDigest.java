package io.sluice.sql;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * A statement's shape without its values, the idea of MySQL's {@code performance_schema} statement digest: the same
 * for every statement that differs from another only in its literals, its lists' lengths, its comments, its white
 * space or the case of its keywords and names. The slow-query log and traffic replay both use it, so that a
 * slow-log line's digest is found in a replay report. Decision 063 says why the normal form is this one:
 *
 * <ul>
 *   <li>literals (strings, numbers, {@code X'..'}, {@code NULL} but in {@code IS [NOT] NULL}, a sign before a number
 *       where it cannot be a subtraction) and {@code ?} placeholders become {@code ?};
 *   <li>a parenthesised list of nothing but literals becomes {@code (...)} when its length is what varies: after
 *       {@code IN} or {@code VALUES}, or with two items or more; rows that follow each other
 *       ({@code VALUES (...), (...)}) become one. {@code SLEEP(?)} stays;
 *   <li>words and variables are in lower case; quoted identifiers are kept as written;
 *   <li>comments go, executable comments' code stays, and tokens are written one space apart, whatever the white space
 *       was, but for none inside parentheses, around a dot, or before a comma or semicolon; a trailing semicolon goes;
 *   <li>the text stops at {@value #MAX_LENGTH} characters, then {@code ...}, as MySQL's
 *       {@code performance_schema_max_digest_length}.
 * </ul>
 *
 * <p>A statement cut short (the slow-query log keeps only its first bytes) still has a digest: an unterminated
 * literal becomes {@code ?}, and a list of literals left open is closed, so that a long {@code INSERT ... VALUES} or
 * {@code IN} list cut in the middle has the digest of the whole statement.
 *
 * <p>It costs a pass over the statement and a string; it is meant for the slow-query log and replay, not for the
 * command path.
 */
public final class SqlDigest {

    /** The longest digest text, as MySQL's default {@code performance_schema_max_digest_length}. */
    public static final int MAX_LENGTH = 1024;

    private static final String FOLDED = "(...)";
    /** Two folded rows in a row, which become one. */
    private static final String ROWS = FOLDED + ", " + FOLDED;

    private final String text;
    private volatile String hash;

    private SqlDigest(String text) {
        this.text = text;
    }

    /** The digest of {@code sql}, which may be cut short. */
    public static SqlDigest of(String sql) {
        DigestText digest = new DigestText();
        int n = sql.length();
        for (int i = 0; i < n && !digest.full(); ) {
            long token = SqlLexer.next(SqlLexer.CHARS, sql, i, n);
            int end = SqlLexer.end(token);
            switch (SqlLexer.kind(token)) {
                case STRING, NUMBER -> digest.literal();
                case WORD -> digest.word(sql.substring(i, end).toLowerCase(Locale.ROOT));
                case VARIABLE -> digest.write(sql.substring(i, end).toLowerCase(Locale.ROOT), Shape.NAME);
                case QUOTED_IDENTIFIER -> digest.write(sql.substring(i, end), Shape.NAME);
                case PUNCTUATION -> digest.punctuation(sql.substring(i, end));
                default -> {
                    // white space, comments and an executable comment's marks: the canonical spacing replaces them
                }
            }
            i = end;
        }
        return new SqlDigest(digest.finish());
    }

    /** The normal form: {@code select * from t where id in (...)}. */
    public String text() {
        return text;
    }

    /** 16 hex digits of SHA-256 over {@link #text()}: the same for every statement of the same shape. */
    public String hash() {
        String result = hash;
        if (result == null) {
            try {
                byte[] sha = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
                result = HexFormat.of().formatHex(sha, 0, 8);
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("SHA-256 is part of every JDK", e);
            }
            hash = result;
        }
        return result;
    }

    /** The digest text. */
    @Override
    public String toString() {
        return text;
    }

    /** What was written last, for the spacing and for telling a sign from a subtraction. */
    private enum Shape {
        NONE, WORD, VALUE, NAME, OPEN, CLOSE, COMMA, DOT, SEMICOLON, OPERATOR
    }

    /** The digest text as it is written, token by token. */
    private static final class DigestText {
        private final StringBuilder out = new StringBuilder(64);
        private Shape previous = Shape.NONE;
        /** The last token written when it was a word, else "". */
        private String previousWord = "";
        /** A {@code -} or {@code +} held back: the sign of a number that follows, or else an operator. */
        private String sign;
        private boolean full;

        boolean full() {
            return full;
        }

        void word(String word) {
            if (word.equals("null") && !previousWord.equals("is") && !previousWord.equals("not")) {
                literal();
                return;
            }
            write(word, Shape.WORD);
            previousWord = word;
        }

        void literal() {
            sign = null; // a sign before a literal is part of its value
            int start = listStart(out.length() - 1);
            if (previous == Shape.COMMA && start >= 0 && literals(start) >= 2) {
                // A list already two literals long reads the same with more: (?, ? stands for any length.
                out.setLength(out.length() - 1);
                previous = Shape.VALUE;
                return;
            }
            write("?", Shape.VALUE);
        }

        void punctuation(String symbol) {
            switch (symbol) {
                case "?" -> literal();
                case "(" -> write(symbol, Shape.OPEN);
                case ")" -> write(symbol, Shape.CLOSE);
                case "," -> write(symbol, Shape.COMMA);
                case "." -> write(symbol, Shape.DOT);
                case ";" -> write(symbol, Shape.SEMICOLON);
                case "-", "+" -> {
                    boolean afterValue = previous == Shape.WORD || previous == Shape.VALUE || previous == Shape.NAME
                            || previous == Shape.CLOSE;
                    if (afterValue || sign != null) {
                        write(symbol, Shape.OPERATOR);
                    } else {
                        sign = symbol;
                    }
                }
                default -> write(symbol, Shape.OPERATOR);
            }
        }

        void write(String token, Shape shape) {
            writeSign();
            boolean spaced = previous != Shape.NONE && previous != Shape.OPEN && previous != Shape.DOT
                    && shape != Shape.CLOSE && shape != Shape.COMMA && shape != Shape.DOT && shape != Shape.SEMICOLON;
            if (spaced) {
                out.append(' ');
            }
            out.append(token);
            previous = shape;
            previousWord = "";
            if (shape == Shape.CLOSE) {
                fold(out.length() - 1);
            }
            if (out.length() > MAX_LENGTH) {
                out.setLength(MAX_LENGTH);
                out.append("...");
                full = true;
            }
        }

        /** A sign held back and not followed by a literal is an operator after all. */
        private void writeSign() {
            if (sign != null) {
                String operator = sign;
                sign = null;
                write(operator, Shape.OPERATOR);
            }
        }

        String finish() {
            writeSign();
            if (!full) {
                closeCutList();
                int end = out.length();
                while (end > 0 && out.charAt(end - 1) == ';') {
                    end--;
                }
                out.setLength(end);
            }
            return out.toString();
        }

        /** A statement cut inside a list of literals ends as if the list were closed, when closing folds it. */
        private void closeCutList() {
            if (previous == Shape.COMMA) {
                out.setLength(out.length() - 1);
            }
            int start = listStart(out.length() - 1);
            if ((previous == Shape.VALUE || previous == Shape.COMMA) && start >= 0 && folds(start)) {
                out.append(')');
                fold(out.length() - 1);
            } else if (previous == Shape.COMMA) {
                out.append(',');
            }
        }

        /** The {@code )} at {@code close} ends a list: folds it to {@code (...)}, and into the row before it. */
        private void fold(int close) {
            int start = listStart(close - 1);
            if (start < 0 || !folds(start)) {
                return;
            }
            out.setLength(start);
            out.append(FOLDED);
            if (endsWith(out.length(), ROWS)) {
                out.setLength(out.length() - ROWS.length() + FOLDED.length());
            }
        }

        /** Whether the list of literals opened at {@code start} folds: its length varies from one call to the next. */
        private boolean folds(int start) {
            int literals = literals(start);
            if (literals == 0) {
                return false;
            }
            int before = start;
            while (before > 0 && out.charAt(before - 1) == ' ') {
                before--;
            }
            return literals >= 2 || endsWithWord(before, "in") || endsWithWord(before, "values")
                    || endsWithWord(before, "value") || before > 0 && out.charAt(before - 1) == ',';
        }

        /** The {@code (} of a list of nothing but literals that runs to {@code last}, or -1. */
        private int listStart(int last) {
            for (int i = last; i >= 0; i--) {
                char c = out.charAt(i);
                if (c == '(') {
                    return i;
                }
                if (c != '?' && c != ',' && c != ' ') {
                    return -1;
                }
            }
            return -1;
        }

        private int literals(int start) {
            int count = 0;
            for (int i = start + 1; i < out.length() && out.charAt(i) != ')'; i++) {
                if (out.charAt(i) == '?') {
                    count++;
                }
            }
            return count;
        }

        /** Whether the text before {@code end} ends with {@code word}, a whole word. */
        private boolean endsWithWord(int end, String word) {
            int start = end - word.length();
            return endsWith(end, word) && (start == 0 || !SqlLexer.isWordChar(out.charAt(start - 1)));
        }

        private boolean endsWith(int end, String suffix) {
            int start = end - suffix.length();
            if (start < 0) {
                return false;
            }
            for (int k = 0; k < suffix.length(); k++) {
                if (out.charAt(start + k) != suffix.charAt(k)) {
                    return false;
                }
            }
            return true;
        }
    }
}
