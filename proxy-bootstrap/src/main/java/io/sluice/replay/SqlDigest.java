package io.sluice.replay;

import java.util.Locale;
import java.util.Set;

/**
 * Statement digests and the read/write split of {@code --read-only}. A digest is the statement with literals
 * replaced by {@code ?}, value lists folded to {@code (...)}, comments dropped and white space collapsed, in lower
 * case: statements that differ only in their values share one.
 */
final class SqlDigest {
    private static final int MAX_LENGTH = 1024;

    /** First keywords of statements that change no data. Everything else counts as a write. */
    private static final Set<String> READS = Set.of("select", "show", "describe", "desc", "explain", "use", "begin",
            "start", "commit", "rollback", "savepoint", "release", "set", "do", "help", "handler", "lock", "unlock",
            "xa", "values", "table", "with", "checksum");

    private SqlDigest() {
    }

    /** The digest of a SQL text. */
    static String of(String sql) {
        StringBuilder out = new StringBuilder(Math.min(sql.length(), MAX_LENGTH));
        int i = 0;
        int n = sql.length();
        boolean space = false;
        while (i < n && out.length() < MAX_LENGTH) {
            char c = sql.charAt(i);
            if (c == '/' && i + 1 < n && sql.charAt(i + 1) == '*') {
                int end = sql.indexOf("*/", i + 2);
                i = end < 0 ? n : end + 2;
                space = true;
            } else if ((c == '-' && i + 2 < n && sql.charAt(i + 1) == '-' && Character.isWhitespace(sql.charAt(i + 2)))
                    || c == '#') {
                int end = sql.indexOf('\n', i);
                i = end < 0 ? n : end + 1;
                space = true;
            } else if (Character.isWhitespace(c)) {
                space = true;
                i++;
            } else if (c == '\'' || c == '"') {
                i = skipQuoted(sql, i, c);
                emit(out, "?", space);
                space = false;
            } else if (c == '`') {
                int end = skipQuoted(sql, i, c);
                emit(out, sql.substring(i, end), space);
                space = false;
                i = end;
            } else if (Character.isDigit(c) || (c == '.' && i + 1 < n && Character.isDigit(sql.charAt(i + 1)))) {
                boolean partOfWord = out.length() > 0 && !space && isWordChar(out.charAt(out.length() - 1));
                int end = i + 1;
                while (end < n && (Character.isLetterOrDigit(sql.charAt(end)) || sql.charAt(end) == '.')) {
                    end++;
                }
                emit(out, partOfWord ? sql.substring(i, end).toLowerCase(Locale.ROOT) : "?", space);
                space = false;
                i = end;
            } else {
                emit(out, String.valueOf(Character.toLowerCase(c)), space && !(c == ',' || c == ')'));
                space = false;
                i++;
            }
        }
        return foldLists(out.toString());
    }

    /** Whether a statement changes no data, judged by its first keyword. */
    static boolean isRead(String sql) {
        String digest = of(sql.length() > 4096 ? sql.substring(0, 4096) : sql);
        int start = 0;
        while (start < digest.length() && digest.charAt(start) == '(') {
            start++;
        }
        int end = start;
        while (end < digest.length() && Character.isLetter(digest.charAt(end))) {
            end++;
        }
        String first = digest.substring(start, end);
        if (!READS.contains(first)) {
            return false;
        }
        switch (first) {
            case "select":
                return !digest.contains(" into outfile") && !digest.contains(" into dumpfile");
            case "set":
                return !digest.startsWith("set global") && !digest.startsWith("set password")
                        && !digest.startsWith("set persist");
            case "with":
                return !digest.contains("update ") && !digest.contains("delete ") && !digest.contains("insert ");
            case "explain":
            case "describe":
            case "desc":
                return !digest.contains(" analyze");
            default:
                return true;
        }
    }

    private static void emit(StringBuilder out, String token, boolean space) {
        if (space && out.length() > 0 && out.charAt(out.length() - 1) != '(') {
            out.append(' ');
        }
        out.append(token);
    }

    private static boolean isWordChar(char c) {
        return Character.isLetterOrDigit(c) || c == '_' || c == '$';
    }

    private static int skipQuoted(String sql, int i, char quote) {
        int j = i + 1;
        while (j < sql.length()) {
            char c = sql.charAt(j);
            if (c == '\\' && quote != '`') {
                j += 2;
                continue;
            }
            if (c == quote) {
                if (j + 1 < sql.length() && sql.charAt(j + 1) == quote) {
                    j += 2; // a doubled quote stands for itself
                    continue;
                }
                return j + 1;
            }
            j++;
        }
        return sql.length();
    }

    /** {@code (?, ?, ?)} and {@code (?,?),(?,?)} lists become {@code (...)}, so row counts do not split digests. */
    private static String foldLists(String digest) {
        String folded = digest.replaceAll("\\(\\?(?:, ?\\?)+\\)", "(...)");
        return folded.replaceAll("\\(\\.\\.\\.\\)(?:, ?\\(\\.\\.\\.\\))+", "(...)")
                .replaceAll("\\(\\?\\)(?:, ?\\(\\?\\))+", "(...)");
    }
}
