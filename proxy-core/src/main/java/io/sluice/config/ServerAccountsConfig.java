package io.sluice.config;

/**
 * {@code authority.users: FROM_BACKEND}: clients log in with the server's own accounts, which Sluice reads from the
 * server ({@code mysql.global_priv} on MariaDB, {@code mysql.user} on MySQL) with the data source's account, and each
 * session runs on the server as the account it logged in as (decision 146).
 *
 * @param refreshMilliseconds how often the accounts are read again
 * @param minRefreshIntervalMilliseconds the least time between two readings that logins of unknown users (or failed
 *     passwords) ask for: a client trying names cannot make Sluice query the server more often than this
 */
public record ServerAccountsConfig(long refreshMilliseconds, long minRefreshIntervalMilliseconds) {
    public static final long DEFAULT_REFRESH_MILLISECONDS = 60_000;
    public static final long DEFAULT_MIN_REFRESH_INTERVAL_MILLISECONDS = 1_000;

    public ServerAccountsConfig {
        if (refreshMilliseconds < 100) {
            throw new IllegalArgumentException("refreshMilliseconds: " + refreshMilliseconds + " (expected: >= 100)");
        }
        if (minRefreshIntervalMilliseconds < 0) {
            throw new IllegalArgumentException("minRefreshIntervalMilliseconds: " + minRefreshIntervalMilliseconds
                    + " (expected: >= 0)");
        }
    }

    /** Read every minute, and at most once a second more for unknown users. */
    public static ServerAccountsConfig defaults() {
        return new ServerAccountsConfig(DEFAULT_REFRESH_MILLISECONDS, DEFAULT_MIN_REFRESH_INTERVAL_MILLISECONDS);
    }
}
