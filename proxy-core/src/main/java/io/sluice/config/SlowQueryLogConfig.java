package io.sluice.config;

/**
 * The slow-query log: commands whose response took at least {@code thresholdMilliseconds}, logged to the
 * {@code sluice.slowlog} logger with their SQL text cut to {@code maxSqlLength} characters and a digest with the
 * literals replaced.
 *
 * @param enabled whether slow commands are logged
 * @param thresholdMilliseconds the time from forwarding a command to the end of its response from which it counts as
 *     slow
 * @param maxSqlLength the most characters of SQL text kept and logged
 */
public record SlowQueryLogConfig(boolean enabled, long thresholdMilliseconds, int maxSqlLength) {

    public static final long DEFAULT_THRESHOLD_MILLISECONDS = 1000;
    public static final int DEFAULT_MAX_SQL_LENGTH = 1024;

    public SlowQueryLogConfig {
        if (thresholdMilliseconds < 0) {
            throw new IllegalArgumentException("thresholdMilliseconds: " + thresholdMilliseconds + " (expected: >= 0)");
        }
        if (maxSqlLength < 16 || maxSqlLength > 1024 * 1024) {
            throw new IllegalArgumentException("maxSqlLength: " + maxSqlLength + " (expected: 16..1048576)");
        }
    }

    /** Off; 1000 ms and 1024 characters once turned on. */
    public static SlowQueryLogConfig defaults() {
        return new SlowQueryLogConfig(false, DEFAULT_THRESHOLD_MILLISECONDS, DEFAULT_MAX_SQL_LENGTH);
    }
}
