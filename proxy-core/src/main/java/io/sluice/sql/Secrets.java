package io.sluice.sql;

import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * The one redaction of credentials in SQL text, applied before Sluice writes a statement anywhere (traffic capture,
 * the slow-query log, its own logs): every literal that may be a password becomes {@value #MASK}, as MySQL writes
 * {@code <secret>} in its general log, and the rest of the statement stays as it was, so that it still reads (and
 * replays) as the statement it was. See decision 130. What it hides:
 *
 * <ul>
 *   <li>after {@code IDENTIFIED}: the literals of the clause, to the next {@code ,} or {@code ;} at the same depth
 *       ({@code CREATE USER}, {@code ALTER USER}, {@code GRANT ... IDENTIFIED BY 'x'}, {@code IDENTIFIED WITH plugin
 *       BY|AS 'x'}, MariaDB's {@code IDENTIFIED VIA plugin USING 'x' | PASSWORD('x')}, MySQL's {@code REPLACE 'old'}
 *       and {@code INITIAL AUTHENTICATION}), but for the plugin name right after {@code WITH} or {@code VIA};
 *   <li>after the word {@code PASSWORD} or a word ending in {@code _PASSWORD}: likewise ({@code PASSWORD('x')},
 *       {@code CHANGE MASTER TO MASTER_PASSWORD='x'}, {@code CHANGE REPLICATION SOURCE TO SOURCE_PASSWORD='x'},
 *       {@code START SLAVE|REPLICA ... PASSWORD='x'}, {@code CREATE SERVER ... OPTIONS (PASSWORD 'x')}); after
 *       {@code SET PASSWORD [FOR user]}, from the {@code =} on, so that the user's name stays;
 *   <li>any string literal whose text holds {@code password} or {@code identified}, whole (a statement in a string:
 *       {@code SET @s = '...'}, {@code PREPARE s FROM '...'});
 *   <li>in a statement that runs SQL text ({@code EXECUTE IMMEDIATE}, {@code PREPARE ... FROM}), every string and hex
 *       literal once any of its text, or of its hex literals read as text, holds one of those words: the statement
 *       may be assembled from pieces ({@code CONCAT('... IDENTIFIED BY ', '''x''')}).
 * </ul>
 *
 * <p>Literals are string literals (with their {@code _charset}, {@code N} or {@code X} prefix) and hex and bit
 * numbers ({@code 0x..}, {@code 0b..}); other numbers stay ({@code PASSWORD HISTORY 5}). It errs on the side of hiding:
 * a column called {@code password} hides the literals of its clause too. It reads the text as MySQL's lexer does
 * ({@link SqlLexer}), so a quote inside a password ends nothing early; a session in {@code NO_BACKSLASH_ESCAPES} mode
 * may make a literal look longer than it is, which hides more, not less.
 *
 * <p>It costs nothing but a scan for the few words above ({@link #mayHold}) when the statement has none of them, and a
 * pass of the lexer and a copy when it has: meant for where statements are written, never the command path.
 */
public final class Secrets {

    /** What a hidden literal becomes: a string literal, so the statement still parses. */
    public static final String MASK = "'<secret>'";

    /** Words whose presence, anywhere in a statement, makes it worth a closer look (lower case). */
    private static final String[] CLUES = {"password", "identified", "execute", "prepare"};

    private Secrets() {
    }

    /**
     * Whether {@code sql} may hold a credential: it has one of the words that {@link #redact(String)} looks for (in
     * any case, in code or in a literal). False means {@code redact} would return it unchanged.
     */
    public static boolean mayHold(CharSequence sql) {
        int n = sql.length();
        for (int i = 0; i < n; i++) {
            char c = (char) (sql.charAt(i) | 0x20);
            if ((c == 'p' || c == 'i' || c == 'e') && clueAt(sql, i)) {
                return true;
            }
        }
        return false;
    }

    /** {@link #mayHold(CharSequence)} for UTF-8 (or any ASCII-compatible) bytes. */
    public static boolean mayHold(byte[] sql) {
        for (int i = 0; i < sql.length; i++) {
            int c = sql[i] | 0x20;
            if ((c == 'p' || c == 'i' || c == 'e') && clueAt(sql, i)) {
                return true;
            }
        }
        return false;
    }

    private static boolean clueAt(byte[] sql, int index) {
        for (String clue : CLUES) {
            if (index + clue.length() <= sql.length && matches(sql, index, clue)) {
                return true;
            }
        }
        return false;
    }

    private static boolean matches(byte[] sql, int index, String lowerCase) {
        for (int k = 0; k < lowerCase.length(); k++) {
            int c = sql[index + k];
            if (c >= 'A' && c <= 'Z') {
                c += 'a' - 'A';
            }
            if (c != lowerCase.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@code sql} with every literal that may be a credential replaced by {@value #MASK}; {@code sql} itself when it
     * has none. The text may be cut short (an unterminated literal is hidden to the end).
     */
    public static String redact(String sql) {
        if (!mayHold(sql)) {
            return sql;
        }
        boolean runsText = runsTextWithClues(sql);
        StringBuilder out = null;
        int copied = 0;
        Clause clause = new Clause();
        int n = sql.length();
        for (int i = 0; i < n; ) {
            long token = SqlLexer.next(SqlLexer.CHARS, sql, i, n);
            int end = SqlLexer.end(token);
            SqlLexer.Kind kind = SqlLexer.kind(token);
            if (SqlLexer.isCode(kind)) {
                boolean literal = isLiteral(sql, kind, i, end);
                boolean plugin = literal && clause.isPluginNext(); // 'caching_sha2_password' is a name
                boolean hide = literal && (clause.onLiteral() || runsText
                        || !plugin && kind == SqlLexer.Kind.STRING && hasClue(sql, i, end, false));
                if (!literal) {
                    clause.onToken(sql, kind, i, end);
                }
                if (hide) {
                    if (out == null) {
                        out = new StringBuilder(sql.length() + 16);
                    }
                    out.append(sql, copied, i).append(MASK);
                    copied = end;
                }
            }
            i = end;
        }
        if (out == null) {
            return sql;
        }
        return out.append(sql, copied, n).toString();
    }

    /**
     * {@link #redact(String)} for the UTF-8 bytes of a statement (which may be cut inside a character): the same
     * array when nothing is hidden, else a new one. Bytes are read one to a {@code char}, as the lexer reads them, so
     * what is not hidden comes back byte for byte.
     */
    public static byte[] redact(byte[] sql) {
        String text = new String(sql, StandardCharsets.ISO_8859_1);
        String redacted = redact(text);
        return redacted == text ? sql : redacted.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static boolean isLiteral(String sql, SqlLexer.Kind kind, int start, int end) {
        if (kind == SqlLexer.Kind.STRING) {
            return true;
        }
        if (kind != SqlLexer.Kind.NUMBER || end - start < 2 || sql.charAt(start) != '0') {
            return false;
        }
        char radix = (char) (sql.charAt(start + 1) | 0x20);
        return radix == 'x' || radix == 'b';
    }

    /** Whether the statement runs SQL text (EXECUTE IMMEDIATE, PREPARE) and anything in it holds a clue. */
    private static boolean runsTextWithClues(String sql) {
        boolean runsText = false;
        boolean clue = false;
        int n = sql.length();
        for (int i = 0; i < n; ) {
            long token = SqlLexer.next(SqlLexer.CHARS, sql, i, n);
            int end = SqlLexer.end(token);
            switch (SqlLexer.kind(token)) {
                case WORD -> {
                    runsText |= SqlLexer.is(SqlLexer.CHARS, sql, i, end, "EXECUTE")
                            || SqlLexer.is(SqlLexer.CHARS, sql, i, end, "PREPARE");
                    clue |= hasClue(sql, i, end, false);
                }
                case STRING -> clue |= hasClue(sql, i, end, isHexString(sql, i));
                case NUMBER -> clue |= end - i > 2 && (sql.charAt(i + 1) | 0x20) == 'x'
                        && hasClue(sql, i + 2, end, true);
                default -> {
                }
            }
            i = end;
        }
        return runsText && clue;
    }

    private static boolean isHexString(String sql, int start) {
        return (sql.charAt(start) | 0x20) == 'x' && start + 1 < sql.length() && sql.charAt(start + 1) == '\'';
    }

    /**
     * Whether the text from {@code start} to {@code end} holds {@code password} or {@code identified}; with
     * {@code hex}, read as hex digits (of an {@code X'..'} or {@code 0x..} literal) that spell text.
     */
    private static boolean hasClue(String sql, int start, int end, boolean hex) {
        String text = sql.substring(start, end);
        if (hex) {
            StringBuilder decoded = new StringBuilder(text.length() / 2);
            int digits = 0;
            int value = 0;
            for (int k = 0; k < text.length(); k++) {
                int digit = Character.digit(text.charAt(k), 16);
                if (digit < 0 || k == 0 && (text.charAt(k) | 0x20) == 'x') {
                    continue; // the X prefix and the quotes
                }
                value = value << 4 | digit;
                if (++digits % 2 == 0) {
                    decoded.append((char) value);
                    value = 0;
                }
            }
            text = decoded.toString();
        }
        String lower = text.toLowerCase(Locale.ROOT);
        return lower.contains("password") || lower.contains("identified");
    }

    private static boolean clueAt(CharSequence sql, int index) {
        for (String clue : CLUES) {
            if (index + clue.length() <= sql.length() && matches(sql, index, clue)) {
                return true;
            }
        }
        return false;
    }

    private static boolean matches(CharSequence sql, int index, String lowerCase) {
        for (int k = 0; k < lowerCase.length(); k++) {
            char c = sql.charAt(index + k);
            if (c >= 'A' && c <= 'Z') {
                c += 'a' - 'A';
            }
            if (c != lowerCase.charAt(k)) {
                return false;
            }
        }
        return true;
    }

    /** Where the literals of a clause that carries a credential start and end, token by token. */
    private static final class Clause {
        /** Literals are hidden: an {@code IDENTIFIED} or {@code PASSWORD} clause is open. */
        private boolean armed;
        /** The parentheses' depth the clause opened at; it ends at a {@code ,} there, or a {@code )} below it. */
        private int armedDepth;
        private int depth;
        /** {@code SET PASSWORD [FOR user]}: armed at the {@code =}. */
        private boolean armAtEquals;
        /** The token after {@code WITH} or {@code VIA} in an {@code IDENTIFIED} clause: the plugin, kept. */
        private boolean pluginNext;
        /** The statement's code so far is the single word {@code SET}. */
        private boolean afterSet;
        /** Code tokens seen in the statement. */
        private int tokens;

        boolean isPluginNext() {
            return pluginNext;
        }

        /** @return whether this literal is hidden */
        boolean onLiteral() {
            tokens++;
            afterSet = false;
            if (pluginNext) {
                pluginNext = false;
                return false;
            }
            return armed;
        }

        void onToken(String sql, SqlLexer.Kind kind, int start, int end) {
            boolean first = tokens++ == 0;
            boolean set = afterSet;
            afterSet = false;
            pluginNext = false;
            if (kind == SqlLexer.Kind.WORD) {
                if (first && SqlLexer.is(SqlLexer.CHARS, sql, start, end, "SET")) {
                    afterSet = true;
                } else if (SqlLexer.is(SqlLexer.CHARS, sql, start, end, "IDENTIFIED")) {
                    arm();
                } else if (SqlLexer.is(SqlLexer.CHARS, sql, start, end, "PASSWORD")) {
                    if (set) {
                        armAtEquals = true; // SET PASSWORD FOR 'user'@'host' = ...: the user's name stays
                    } else {
                        arm();
                    }
                } else if (endsWithPassword(sql, start, end)) {
                    arm();
                } else if (armed && (SqlLexer.is(SqlLexer.CHARS, sql, start, end, "WITH")
                        || SqlLexer.is(SqlLexer.CHARS, sql, start, end, "VIA"))) {
                    pluginNext = true;
                }
                return;
            }
            if (kind != SqlLexer.Kind.PUNCTUATION) {
                return;
            }
            char c = sql.charAt(start);
            if (end - start == 1 && c == '(') {
                depth++;
            } else if (end - start == 1 && c == ')') {
                depth--;
                if (armed && depth < armedDepth) {
                    armed = false;
                }
            } else if (end - start == 1 && c == ',' && depth <= armedDepth) {
                armed = false;
            } else if (end - start == 1 && c == ';') {
                armed = false;
                armAtEquals = false;
                depth = 0;
                tokens = 0;
            } else if (armAtEquals && (c == '=' || c == ':')) {
                armAtEquals = false;
                arm();
            }
        }

        private void arm() {
            if (!armed) {
                armed = true;
                armedDepth = depth;
            }
        }

        private static boolean endsWithPassword(String sql, int start, int end) {
            String suffix = "_password";
            return end - start > suffix.length() && matches(sql, end - suffix.length(), suffix);
        }
    }
}
