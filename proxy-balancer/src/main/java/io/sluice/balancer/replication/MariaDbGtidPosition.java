package io.sluice.balancer.replication;

import java.util.Arrays;

/**
 * A MariaDB GTID position: at most one GTID {@code domain-server-sequence} per replication domain, as in
 * {@code @@gtid_current_pos}, {@code @@gtid_slave_pos}, {@code @@gtid_binlog_pos}, {@code @@last_gtid}, the
 * session tracker's {@code last_gtid} and {@code Gtid_IO_Pos}: {@code 0-1-42,1-2-7}. Empty text is the empty position.
 *
 * <p>Within a domain the sequence number only grows (with {@code gtid_strict_mode} the server enforces it), so a
 * position is at or past another when, in each domain of the other, its sequence number is at least as high,
 * whatever server wrote it: the test {@code MASTER_GTID_WAIT} applies.
 */
public final class MariaDbGtidPosition implements GtidPosition {

    private static final MariaDbGtidPosition EMPTY = new MariaDbGtidPosition(new long[0], new long[0], new long[0]);

    /** Sorted by domain, one entry per domain. */
    private final long[] domains;
    private final long[] servers;
    private final long[] sequences;

    private MariaDbGtidPosition(long[] domains, long[] servers, long[] sequences) {
        this.domains = domains;
        this.servers = servers;
        this.sequences = sequences;
    }

    public static MariaDbGtidPosition empty() {
        return EMPTY;
    }

    /**
     * Parses {@code domain-server-seq[,domain-server-seq...]}; white space around the GTIDs is allowed, a domain
     * given twice keeps its highest sequence number.
     *
     * @throws IllegalArgumentException naming the text when it is not a GTID position
     */
    public static MariaDbGtidPosition parse(String text) {
        String trimmed = text.strip();
        if (trimmed.isEmpty()) {
            return EMPTY;
        }
        String[] gtids = trimmed.split(",", -1);
        MariaDbGtidPosition position = EMPTY;
        for (String gtid : gtids) {
            String[] parts = gtid.strip().split("-", -1);
            if (parts.length != 3) {
                throw new IllegalArgumentException("not a MariaDB GTID position: \"" + text
                        + "\" (expected: domain-server-sequence, comma-separated)");
            }
            long domain = number(parts[0], 0xFFFF_FFFFL, text);
            long server = number(parts[1], 0xFFFF_FFFFL, text);
            long sequence = number(parts[2], Long.MAX_VALUE, text);
            position = position.with(domain, server, sequence);
        }
        return position;
    }

    private static long number(String digits, long max, String text) {
        if (digits.isEmpty() || digits.length() > 20 || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            throw new IllegalArgumentException("not a MariaDB GTID position: \"" + text + "\" (\"" + digits
                    + "\" is not an unsigned number)");
        }
        try {
            long value = Long.parseLong(digits);
            if (value <= max) {
                return value;
            }
        } catch (NumberFormatException e) {
            // above a long: refused below
        }
        throw new IllegalArgumentException("not a MariaDB GTID position: \"" + text + "\" (" + digits
                + " is out of range)");
    }

    /** This position with {@code domain}'s GTID raised to {@code server-sequence} if that is further. */
    public MariaDbGtidPosition with(long domain, long server, long sequence) {
        int at = Arrays.binarySearch(domains, domain);
        if (at >= 0) {
            if (sequences[at] >= sequence) {
                return this;
            }
            long[] newServers = servers.clone();
            long[] newSequences = sequences.clone();
            newServers[at] = server;
            newSequences[at] = sequence;
            return new MariaDbGtidPosition(domains, newServers, newSequences);
        }
        int insert = -at - 1;
        return new MariaDbGtidPosition(inserted(domains, insert, domain), inserted(servers, insert, server),
                inserted(sequences, insert, sequence));
    }

    private static long[] inserted(long[] values, int at, long value) {
        long[] result = new long[values.length + 1];
        System.arraycopy(values, 0, result, 0, at);
        result[at] = value;
        System.arraycopy(values, at, result, at + 1, values.length - at);
        return result;
    }

    /** The sequence number reached in {@code domain}, or -1 when the position has none there. */
    public long sequence(long domain) {
        int at = Arrays.binarySearch(domains, domain);
        return at >= 0 ? sequences[at] : -1;
    }

    /** How many domains the position names. */
    public int domainCount() {
        return domains.length;
    }

    @Override
    public boolean isAtOrPast(GtidPosition target) {
        if (!(target instanceof MariaDbGtidPosition other)) {
            return false;
        }
        for (int i = 0; i < other.domains.length; i++) {
            if (sequence(other.domains[i]) < other.sequences[i]) {
                return false;
            }
        }
        return true;
    }

    @Override
    public long transactionsBehind(GtidPosition target) {
        if (!(target instanceof MariaDbGtidPosition other)) {
            return Long.MAX_VALUE;
        }
        long behind = 0;
        for (int i = 0; i < other.domains.length; i++) {
            long reached = Math.max(0, sequence(other.domains[i]));
            if (reached < other.sequences[i]) {
                behind = saturatedAdd(behind, other.sequences[i] - reached);
            }
        }
        return behind;
    }

    private static long saturatedAdd(long a, long b) {
        long sum = a + b;
        return sum < 0 ? Long.MAX_VALUE : sum;
    }

    @Override
    public MariaDbGtidPosition union(GtidPosition other) {
        if (!(other instanceof MariaDbGtidPosition position)) {
            throw new IllegalArgumentException("a MariaDB position and a MySQL GTID set cannot be joined");
        }
        MariaDbGtidPosition result = this;
        for (int i = 0; i < position.domains.length; i++) {
            result = result.with(position.domains[i], position.servers[i], position.sequences[i]);
        }
        return result;
    }

    @Override
    public boolean isEmpty() {
        return domains.length == 0;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof MariaDbGtidPosition other && Arrays.equals(domains, other.domains)
                && Arrays.equals(servers, other.servers) && Arrays.equals(sequences, other.sequences);
    }

    @Override
    public int hashCode() {
        return 31 * (31 * Arrays.hashCode(domains) + Arrays.hashCode(servers)) + Arrays.hashCode(sequences);
    }

    @Override
    public String toString() {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < domains.length; i++) {
            if (i > 0) {
                text.append(',');
            }
            text.append(domains[i]).append('-').append(servers[i]).append('-').append(sequences[i]);
        }
        return text.toString();
    }
}
