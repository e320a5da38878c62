package io.sluice.sql;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The tables and views whose statements a definition may make run code the text does not show (decision 203): the
 * table of a {@code CREATE TRIGGER ... ON t}, the view of a {@code CREATE VIEW v} or {@code ALTER VIEW v}, the new
 * name of a {@code RENAME TABLE a TO b} or {@code ALTER TABLE a RENAME TO b} (the table's triggers go with it). They
 * count from the moment the statement is sent until the catalogue has been read after it ran, so that no session's
 * statement on them runs uncounted in between. A {@code DROP} names none: what was counted stays counted until that
 * reading.
 *
 * <p>Read only for the statements {@link StatementScan} flags {@link SessionEffects#DEFINES_HIDDEN_CODE}, which are
 * rare: it allocates freely. Without schema, as {@link HiddenCodeNames} matches them; every statement of a
 * multi-statement is read.
 *
 * <p>Sluice does not know the character set a statement's bytes are in, so it reads them one character per byte
 * (ISO-8859-1), as it keeps a prepared statement's text. A name that is not ASCII then comes twice: as read, which is
 * its name for a client in latin1 and also, since {@link HiddenCodeNames} matches a name's characters against a
 * statement's bytes, for any client whose bytes are the same; and decoded as UTF-8 where its bytes are UTF-8, whose
 * characters and UTF-8 bytes match every other client's statements.
 */
public final class DefinedNames {

    private DefinedNames() {
    }

    /**
     * The names {@code sql} defines code for, in the order they appear; empty when it defines none. {@code sql} holds
     * the statement's bytes, one character each (see the class comment).
     */
    public static Set<String> in(CharSequence sql) {
        Set<String> names = new LinkedHashSet<>();
        List<String> statement = new ArrayList<>();
        int end = sql.length();
        for (int i = 0; i < end; ) {
            long token = SqlLexer.next(SqlLexer.CHARS, sql, i, end);
            int to = SqlLexer.end(token);
            SqlLexer.Kind kind = SqlLexer.kind(token);
            if (kind == SqlLexer.Kind.PUNCTUATION && sql.charAt(i) == ';') {
                definedBy(statement, names);
                statement.clear();
            } else if (kind == SqlLexer.Kind.QUOTED_IDENTIFIER) {
                // a quoted name is never a keyword: marked so, and its doubled back quotes made single
                statement.add("`" + sql.subSequence(i + 1, Math.max(i + 1, to - 1)).toString().replace("``", "`"));
            } else if (SqlLexer.isCode(kind)) {
                statement.add(sql.subSequence(i, to).toString());
            }
            i = to;
        }
        definedBy(statement, names);
        return names;
    }

    private static void definedBy(List<String> words, Set<String> names) {
        if (words.isEmpty()) {
            return;
        }
        boolean create = keyword(words, 0, "CREATE");
        if (create || keyword(words, 0, "ALTER")) {
            int trigger = indexOf(words, "TRIGGER");
            int view = indexOf(words, "VIEW");
            if (create && trigger > 0 && (view < 0 || trigger < view)) {
                int on = indexOf(words, "ON", trigger);
                add(words, on < 0 ? -1 : on + 1, names);
            } else if (view > 0) {
                int at = view + 1;
                if (keyword(words, at, "IF")) {
                    at += 3; // IF NOT EXISTS
                }
                add(words, at, names);
            } else if (!create && keyword(words, 1, "TABLE")) {
                int rename = indexOf(words, "RENAME");
                if (rename > 0 && !keyword(words, rename + 1, "COLUMN") && !keyword(words, rename + 1, "INDEX")
                        && !keyword(words, rename + 1, "KEY")) {
                    boolean to = keyword(words, rename + 1, "TO") || keyword(words, rename + 1, "AS");
                    add(words, rename + (to ? 2 : 1), names);
                }
            }
        } else if (keyword(words, 0, "RENAME")) {
            for (int at = indexOf(words, "TO"); at > 0; at = indexOf(words, "TO", at + 1)) {
                add(words, at + 1, names); // RENAME TABLE a TO b, c TO d
            }
        }
    }

    /** The name at {@code at}, or after its schema ({@code db.t}), without its back quotes. */
    private static void add(List<String> words, int at, Set<String> names) {
        if (at < 0 || at >= words.size()) {
            return;
        }
        if (at + 2 < words.size() && words.get(at + 1).equals(".")) {
            at += 2;
        }
        String word = words.get(at);
        String name = word.startsWith("`") ? word.substring(1) : word;
        names.add(name);
        String utf8 = asUtf8(name);
        if (utf8 != null) {
            names.add(utf8);
        }
    }

    /** {@code name}'s characters as bytes decoded as UTF-8, when they are such bytes, not all ASCII; else null. */
    private static String asUtf8(String name) {
        boolean ascii = true;
        for (int k = 0; k < name.length(); k++) {
            char c = name.charAt(k);
            if (c > 0xFF) {
                return null; // not bytes: a name given as text
            }
            ascii &= c < 0x80;
        }
        if (ascii) {
            return null;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .decode(ByteBuffer.wrap(name.getBytes(StandardCharsets.ISO_8859_1))).toString();
        } catch (CharacterCodingException e) {
            return null; // latin1 or another single-byte set: the name as read is the one
        }
    }

    private static int indexOf(List<String> words, String keyword) {
        return indexOf(words, keyword, 0);
    }

    private static int indexOf(List<String> words, String keyword, int from) {
        for (int k = Math.max(0, from); k < words.size(); k++) {
            if (keyword(words, k, keyword)) {
                return k;
            }
        }
        return -1;
    }

    /** Whether the word at {@code at} is the keyword (a quoted name never is). */
    private static boolean keyword(List<String> words, int at, String keyword) {
        return at >= 0 && at < words.size() && words.get(at).equalsIgnoreCase(keyword);
    }
}
