package io.sluice.config;

/**
 * How repeated failed logins from one client address are slowed down ({@code server.loginBackoff}). After
 * {@code afterFailures} failures in a row, every further login attempt from that address waits before it is
 * checked: {@code delayMilliseconds}, doubling with each further failure up to {@code maxDelayMilliseconds}. A
 * successful login clears the address's record.
 *
 * @param afterFailures failures in a row before attempts are delayed; 0 turns the back-off off
 * @param delayMilliseconds the first delay
 * @param maxDelayMilliseconds the largest delay
 */
public record LoginBackoff(int afterFailures, long delayMilliseconds, long maxDelayMilliseconds) {

    public static final int DEFAULT_AFTER_FAILURES = 5;
    public static final long DEFAULT_DELAY_MILLISECONDS = 1_000;
    public static final long DEFAULT_MAX_DELAY_MILLISECONDS = 30_000;

    public LoginBackoff {
        if (afterFailures < 0) {
            throw new IllegalArgumentException("afterFailures: " + afterFailures + " (expected: >= 0)");
        }
        if (delayMilliseconds < 1) {
            throw new IllegalArgumentException("delayMilliseconds: " + delayMilliseconds + " (expected: >= 1)");
        }
        if (maxDelayMilliseconds < delayMilliseconds) {
            throw new IllegalArgumentException("maxDelayMilliseconds: " + maxDelayMilliseconds + " (expected: >= "
                    + delayMilliseconds + ", the delayMilliseconds)");
        }
    }

    public static LoginBackoff defaults() {
        return new LoginBackoff(DEFAULT_AFTER_FAILURES, DEFAULT_DELAY_MILLISECONDS, DEFAULT_MAX_DELAY_MILLISECONDS);
    }

    /** Whether failed logins slow anything down. */
    public boolean enabled() {
        return afterFailures > 0;
    }
}
