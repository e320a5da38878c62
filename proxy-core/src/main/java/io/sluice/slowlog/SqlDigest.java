package io.sluice.slowlog;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * A statement's shape without its values: literals become {@code ?}, comments go, runs of white space become one
 * space, and a parenthesised list of nothing but literals becomes {@code (...)}, so that {@code IN (1, 2, 3)} and
 * {@code IN (4)} have the same digest. The idea is MySQL's {@code performance_schema} statement digest; the lexer is
 * Sluice's own and deliberately small: it needs to group statements, not parse them.
 *
 * <p>Run only for statements the slow-query log writes, never on the command path.
 */
public final class SqlDigest {

    private final String text;
    private final String hash;

    private SqlDigest(String text, String hash) {
        this.text = text;
        this.hash = hash;
    }

    /** The digest of {@code sql}, which may be cut short (an unterminated literal still becomes {@code ?}). */
    public static SqlDigest of(String sql) {
        String normalized = normalize(sql);
        return new SqlDigest(normalized, hash(normalized));
    }

    /** The statement with its literals replaced: {@code SELECT * FROM t WHERE id = ?}. */
    public String text() {
        return text;
    }

    /** 16 hex digits of SHA-256 over {@link #text()}: the same for every statement of the same shape. */
    public String hash() {
        return hash;
    }

    /**
     * Whether the statement may carry a password ({@code CREATE USER … IDENTIFIED BY}, {@code SET PASSWORD},
     * {@code CHANGE MASTER … MASTER_PASSWORD}): its text must then never be logged, only {@link #text()}.
     */
    public boolean mayCarryPassword() {
        String upper = text.toUpperCase(Locale.ROOT);
        return upper.contains("IDENTIFIED") || upper.contains("PASSWORD");
    }

    static String normalize(String sql) {
        StringBuilder out = new StringBuilder(Math.min(sql.length(), 4096));
        int n = sql.length();
        int i = 0;
        while (i < n) {
            char c = sql.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
                space(out);
            } else if (c == '-' && i + 1 < n && sql.charAt(i + 1) == '-'
                    && (i + 2 == n || Character.isWhitespace(sql.charAt(i + 2)))) {
                i = skipLine(sql, i);
                space(out);
            } else if (c == '#') {
                i = skipLine(sql, i);
                space(out);
            } else if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int end = sql.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
                space(out);
            } else if (c == '\'' || c == '"') {
                i = skipQuoted(sql, i, c);
                literal(out);
            } else if (c == '`') {
                int end = sql.indexOf('`', i + 1);
                int stop = end < 0 ? n : end + 1;
                out.append(sql, i, stop);
                i = stop;
            } else if ((c == 'x' || c == 'X' || c == 'b' || c == 'B' || c == 'n' || c == 'N') && i + 1 < n
                    && sql.charAt(i + 1) == '\'' && !identifierBefore(out)) {
                i = skipQuoted(sql, i + 1, '\''); // X'0A', B'01', N'text'
                literal(out);
            } else if (Character.isDigit(c) && !identifierBefore(out)) {
                i = skipNumber(sql, i);
                literal(out);
            } else if (c == '.' && i + 1 < n && Character.isDigit(sql.charAt(i + 1)) && !identifierBefore(out)) {
                i = skipNumber(sql, i);
                literal(out);
            } else if (c == ')') {
                out.append(c);
                i++;
                collapseList(out);
            } else {
                out.append(c);
                i++;
            }
        }
        int end = out.length();
        while (end > 0 && out.charAt(end - 1) == ' ') {
            end--;
        }
        out.setLength(end);
        return out.toString();
    }

    private static void space(StringBuilder out) {
        if (out.length() > 0 && out.charAt(out.length() - 1) != ' ') {
            out.append(' ');
        }
    }

    private static void literal(StringBuilder out) {
        out.append('?');
    }

    /** Whether the last character written continues an identifier, so that a digit is part of a name ({@code t1}). */
    private static boolean identifierBefore(StringBuilder out) {
        if (out.length() == 0) {
            return false;
        }
        char last = out.charAt(out.length() - 1);
        return Character.isLetterOrDigit(last) || last == '_' || last == '$' || last == '?';
    }

    private static int skipLine(String sql, int i) {
        int end = sql.indexOf('\n', i);
        return end < 0 ? sql.length() : end + 1;
    }

    /** Past a quoted literal; both {@code \'} and {@code ''} stay inside it. */
    private static int skipQuoted(String sql, int start, char quote) {
        int i = start + 1;
        int n = sql.length();
        while (i < n) {
            char c = sql.charAt(i);
            if (c == '\\') {
                i += 2;
            } else if (c == quote) {
                if (i + 1 < n && sql.charAt(i + 1) == quote) {
                    i += 2;
                } else {
                    return i + 1;
                }
            } else {
                i++;
            }
        }
        return n;
    }

    private static int skipNumber(String sql, int start) {
        int n = sql.length();
        int i = start;
        if (sql.startsWith("0x", i) || sql.startsWith("0X", i) || sql.startsWith("0b", i) || sql.startsWith("0B", i)) {
            i += 2;
            while (i < n && Character.isLetterOrDigit(sql.charAt(i))) {
                i++;
            }
            return i;
        }
        while (i < n && (Character.isDigit(sql.charAt(i)) || sql.charAt(i) == '.')) {
            i++;
        }
        if (i < n && (sql.charAt(i) == 'e' || sql.charAt(i) == 'E')) {
            int j = i + 1;
            if (j < n && (sql.charAt(j) == '+' || sql.charAt(j) == '-')) {
                j++;
            }
            if (j < n && Character.isDigit(sql.charAt(j))) {
                i = j;
                while (i < n && Character.isDigit(sql.charAt(i))) {
                    i++;
                }
            }
        }
        return i;
    }

    /**
     * Just after a {@code )}: a list of only literals becomes {@code (...)} when its length is what varies from one
     * call to the next: after {@code IN} or {@code VALUES} (or another row of VALUES), or with two items or more.
     * {@code SLEEP(?)} stays as it is.
     */
    private static void collapseList(StringBuilder out) {
        int close = out.length() - 1;
        int i = close - 1;
        int literals = 0;
        while (i >= 0) {
            char c = out.charAt(i);
            if (c == '(') {
                break;
            }
            if (c == '?') {
                literals++;
            } else if (c != ',' && c != ' ') {
                return;
            }
            i--;
        }
        if (i < 0 || literals == 0) {
            return;
        }
        String before = out.substring(0, i).stripTrailing().toUpperCase(java.util.Locale.ROOT);
        boolean variable = before.endsWith(" IN") || before.endsWith("VALUES") || before.endsWith("VALUE")
                || before.endsWith(",") || literals > 1;
        if (variable) {
            out.setLength(i + 1);
            out.append("...)");
        }
    }

    private static String hash(String text) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
