package io.sluice.sql;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import java.util.Set;
import java.util.TreeSet;

/**
 * The names of tables whose triggers, and of views whose definitions, run code that leaves state on the session (a
 * named lock, a sequence's last value, the next transaction's characteristics, a stored function's anything): a
 * statement that names one runs that code though its text does not show it (issue #38, decision 200).
 * {@link StatementScan} counts such a name as {@link SessionEffects#STORED_CODE}.
 *
 * <p>Matched by name alone, whatever the schema, and without regard to case: a name that is also another schema's
 * table, or a column's, errs towards keeping the session on its connection. Immutable; the lookup allocates nothing
 * and reads the text through the lexer's {@link SqlLexer.Source}, bytes of UTF-8 or characters alike.
 */
public final class HiddenCodeNames {

    /** No such names: what a scan without a catalogue, or a server without such code, uses. */
    public static final HiddenCodeNames NONE = new HiddenCodeNames(new TreeSet<>());

    private final Set<String> names;
    /** Open addressing over the hashes of {@link #units}; -1 for an empty slot. */
    private final int[] slots;
    /** Each name's code units, lower-cased ASCII: as characters and, where they differ, as bytes of UTF-8. */
    private final int[][] units;

    private HiddenCodeNames(TreeSet<String> names) {
        this.names = java.util.Collections.unmodifiableSet(names);
        java.util.List<int[]> all = new java.util.ArrayList<>();
        for (String name : names) {
            int[] chars = name.chars().toArray();
            all.add(chars);
            byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
            if (utf8.length != chars.length) {
                int[] bytes = new int[utf8.length];
                for (int k = 0; k < utf8.length; k++) {
                    bytes[k] = utf8[k] & 0xFF;
                }
                all.add(bytes);
            }
        }
        this.units = all.toArray(new int[0][]);
        this.slots = new int[Math.max(4, Integer.highestOneBit(Math.max(1, units.length) * 4) * 2)];
        Arrays.fill(slots, -1);
        for (int k = 0; k < units.length; k++) {
            int slot = hash(units[k]) & (slots.length - 1);
            while (slots[slot] >= 0) {
                slot = (slot + 1) & (slots.length - 1);
            }
            slots[slot] = k;
        }
    }

    /** The set of {@code names} (a table's or a view's, without schema; case does not matter). */
    public static HiddenCodeNames of(Collection<String> names) {
        if (names.isEmpty()) {
            return NONE;
        }
        TreeSet<String> lower = new TreeSet<>();
        for (String name : names) {
            StringBuilder ascii = new StringBuilder(name.length());
            name.chars().forEach(c -> ascii.append((char) lower(c))); // as the lookup folds: ASCII letters only
            lower.add(ascii.toString());
        }
        return new HiddenCodeNames(lower);
    }

    /** Whether there is no name: a scan then looks for none. */
    public boolean isEmpty() {
        return units.length == 0;
    }

    /** The names, lower case, sorted (for logs and the admin's view). */
    public Set<String> names() {
        return names;
    }

    /** Whether the text from {@code start} to {@code end} (a word, without quotes) is one of the names. */
    public <T> boolean contains(SqlLexer.Source<T> s, T text, int start, int end) {
        if (units.length == 0 || end <= start) {
            return false;
        }
        int h = 0;
        for (int i = start; i < end; i++) {
            h = 31 * h + lower(s.at(text, i));
        }
        for (int slot = spread(h) & (slots.length - 1); slots[slot] >= 0; slot = (slot + 1) & (slots.length - 1)) {
            int[] name = units[slots[slot]];
            if (name.length == end - start && same(name, s, text, start)) {
                return true;
            }
        }
        return false;
    }

    private static <T> boolean same(int[] name, SqlLexer.Source<T> s, T text, int start) {
        for (int k = 0; k < name.length; k++) {
            if (name[k] != lower(s.at(text, start + k))) {
                return false;
            }
        }
        return true;
    }

    private static int hash(int[] name) {
        int h = 0;
        for (int unit : name) {
            h = 31 * h + unit;
        }
        return spread(h);
    }

    private static int spread(int h) {
        return h ^ (h >>> 16);
    }

    private static int lower(int c) {
        return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
    }

    @Override
    public String toString() {
        return names.toString();
    }
}
