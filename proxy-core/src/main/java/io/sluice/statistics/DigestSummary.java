package io.sluice.statistics;

/**
 * One row of the statistics as read: a digest, user, schema and group over every event loop, as
 * performance_schema's {@code events_statements_summary_by_digest} and ProxySQL's {@code stats_mysql_query_digest}
 * have it. Times in microseconds; the percentiles are read from a fixed-bucket histogram (linear within a bucket,
 * never above the maximum). The {@code other} row ({@link #isOther()}) counts the statements of the shapes that found
 * the table full.
 *
 * @param digest 16 hex digits ({@link io.sluice.sql.SqlDigest#hash()}), or {@code other}
 * @param digestText the normal form, or {@code other}
 * @param firstSeenMillis when it was first seen (epoch milliseconds)
 * @param lastSeenMillis when a statement of it last ended (epoch milliseconds)
 * @param replica how many ran on a replica of a read/write split group (the rest ran on a primary or a plain backend)
 * @param pins how many times one of its statements pinned a session to its backend connection
 */
public record DigestSummary(String digest, String digestText, String user, String schema, String group, long count,
        long errors, long warnings, long rowsSent, long rowsAffected, long totalMicros, long minMicros,
        long maxMicros, long p50Micros, long p95Micros, long p99Micros, long firstSeenMillis, long lastSeenMillis,
        long replica, long pins) {

    /** The digest of the {@code other} row. */
    public static final String OTHER = "other";

    /** Whether this row counts what the cap on distinct digests left out. */
    public boolean isOther() {
        return OTHER.equals(digest);
    }

    /** The mean time, in microseconds. */
    public long avgMicros() {
        return count == 0 ? 0 : totalMicros / count;
    }

    /** How many ran on a primary or a plain backend. */
    public long primary() {
        return count - replica;
    }
}
