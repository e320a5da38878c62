package io.sluice.balancer.replication;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * A MySQL GTID set, as in {@code @@gtid_executed}, {@code Retrieved_Gtid_Set} and the session tracker's
 * {@code OWN_GTID} report: source UUIDs each with intervals of transaction numbers,
 * {@code 3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7,5d2f...:1-3}; MySQL 8.4's tagged GTIDs ({@code uuid:tag:1-5}) are
 * kept per UUID and tag. Empty text is the empty set. Immutable; intervals are kept merged and sorted.
 */
public final class MySqlGtidSet implements GtidPosition {

    private static final MySqlGtidSet EMPTY = new MySqlGtidSet(Collections.emptyNavigableMap());

    /** {@code uuid} or {@code uuid:tag}, lower case, to its intervals as {@code [start, end]} pairs, sorted. */
    private final Map<String, long[]> intervals;

    private MySqlGtidSet(Map<String, long[]> intervals) {
        this.intervals = intervals;
    }

    public static MySqlGtidSet empty() {
        return EMPTY;
    }

    /**
     * Parses a GTID set; white space and line breaks (MySQL puts one after each comma) are allowed.
     *
     * @throws IllegalArgumentException naming the text when it is not a GTID set
     */
    public static MySqlGtidSet parse(String text) {
        String compact = text.replaceAll("\\s+", "");
        if (compact.isEmpty()) {
            return EMPTY;
        }
        TreeMap<String, List<long[]>> bySource = new TreeMap<>();
        for (String member : compact.split(",", -1)) {
            String[] parts = member.split(":", -1);
            if (parts.length < 2 || !isUuid(parts[0])) {
                throw invalid(text, "\"" + member + "\" does not start with a source UUID and a colon");
            }
            String source = parts[0].toLowerCase(Locale.ROOT);
            for (int i = 1; i < parts.length; i++) {
                String part = parts[i];
                if (!part.isEmpty() && !Character.isDigit(part.charAt(0))) {
                    source = parts[0].toLowerCase(Locale.ROOT) + ":" + part.toLowerCase(Locale.ROOT); // a tag
                    continue;
                }
                bySource.computeIfAbsent(source, key -> new ArrayList<>()).add(interval(part, text));
            }
        }
        TreeMap<String, long[]> merged = new TreeMap<>();
        bySource.forEach((source, list) -> merged.put(source, merge(list)));
        return new MySqlGtidSet(Collections.unmodifiableNavigableMap(merged));
    }

    private static long[] interval(String part, String text) {
        int dash = part.indexOf('-');
        long start = number(dash < 0 ? part : part.substring(0, dash), text);
        long end = dash < 0 ? start : number(part.substring(dash + 1), text);
        if (start < 1 || end < start) {
            throw invalid(text, "\"" + part + "\" is not an interval of transaction numbers from 1");
        }
        return new long[] {start, end};
    }

    private static long number(String digits, String text) {
        if (digits.isEmpty() || digits.length() > 19 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw invalid(text, "\"" + digits + "\" is not a transaction number");
        }
        return Long.parseLong(digits);
    }

    private static boolean isUuid(String text) {
        if (text.length() != 36) {
            return false;
        }
        for (int i = 0; i < 36; i++) {
            char c = text.charAt(i);
            boolean dash = i == 8 || i == 13 || i == 18 || i == 23;
            if (dash ? c != '-' : Character.digit(c, 16) < 0) {
                return false;
            }
        }
        return true;
    }

    private static IllegalArgumentException invalid(String text, String why) {
        return new IllegalArgumentException("not a MySQL GTID set: \"" + text + "\" (" + why + ")");
    }

    /** Sorts and joins overlapping or adjacent intervals. */
    private static long[] merge(List<long[]> list) {
        list.sort((a, b) -> Long.compare(a[0], b[0]));
        List<long[]> out = new ArrayList<>();
        for (long[] each : list) {
            long[] last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && each[0] <= last[1] + 1) {
                last[1] = Math.max(last[1], each[1]);
            } else {
                out.add(new long[] {each[0], each[1]});
            }
        }
        long[] flat = new long[out.size() * 2];
        for (int i = 0; i < out.size(); i++) {
            flat[2 * i] = out.get(i)[0];
            flat[2 * i + 1] = out.get(i)[1];
        }
        return flat;
    }

    /** Whether the set holds transaction {@code number} of {@code source} ({@code uuid} or {@code uuid:tag}). */
    public boolean contains(String source, long number) {
        long[] ranges = intervals.get(source.toLowerCase(Locale.ROOT));
        if (ranges == null) {
            return false;
        }
        for (int i = 0; i < ranges.length; i += 2) {
            if (number >= ranges[i] && number <= ranges[i + 1]) {
                return true;
            }
        }
        return false;
    }

    @Override
    public boolean isAtOrPast(GtidPosition target) {
        return target instanceof MySqlGtidSet other && transactionsBehind(other) == 0;
    }

    /** The number of transactions of {@code target} this set lacks. */
    @Override
    public long transactionsBehind(GtidPosition target) {
        if (!(target instanceof MySqlGtidSet other)) {
            return Long.MAX_VALUE;
        }
        long missing = 0;
        for (Map.Entry<String, long[]> entry : other.intervals.entrySet()) {
            long[] mine = intervals.getOrDefault(entry.getKey(), new long[0]);
            long[] theirs = entry.getValue();
            for (int i = 0; i < theirs.length; i += 2) {
                long size = theirs[i + 1] - theirs[i] + 1;
                long covered = 0;
                for (int j = 0; j < mine.length; j += 2) {
                    long from = Math.max(theirs[i], mine[j]);
                    long to = Math.min(theirs[i + 1], mine[j + 1]);
                    if (from <= to) {
                        covered += to - from + 1;
                    }
                }
                missing += size - covered;
                if (missing < 0) {
                    return Long.MAX_VALUE;
                }
            }
        }
        return missing;
    }

    @Override
    public MySqlGtidSet union(GtidPosition other) {
        if (!(other instanceof MySqlGtidSet set)) {
            throw new IllegalArgumentException("a MySQL GTID set and a MariaDB position cannot be joined");
        }
        if (set.isEmpty()) {
            return this;
        }
        return parse(isEmpty() ? set.toString() : this + "," + set);
    }

    @Override
    public boolean isEmpty() {
        return intervals.isEmpty();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MySqlGtidSet other && toString().equals(other.toString());
    }

    @Override
    public int hashCode() {
        return toString().hashCode();
    }

    /** Canonical: sources in order, intervals merged, one member per source and tag. */
    @Override
    public String toString() {
        StringBuilder text = new StringBuilder();
        for (Map.Entry<String, long[]> entry : intervals.entrySet()) {
            if (text.length() > 0) {
                text.append(',');
            }
            text.append(entry.getKey());
            long[] ranges = entry.getValue();
            for (int i = 0; i < ranges.length; i += 2) {
                text.append(':').append(ranges[i]);
                if (ranges[i + 1] != ranges[i]) {
                    text.append('-').append(ranges[i + 1]);
                }
            }
        }
        return text.toString();
    }
}
