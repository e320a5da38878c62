package io.sluice.balancer;

/**
 * How backends are checked: HAProxy's {@code check inter 2000 rise 2 fall 3}, plus the time a check may take.
 *
 * @param intervalMilliseconds time between two checks of one backend; 0 turns health checks off, and with them
 *     passive health (nothing would bring a backend marked down back)
 * @param timeoutMilliseconds how long one check may take before it counts as failed
 * @param rise consecutive successful checks that bring a down backend up
 * @param fall consecutive failed checks that take an up backend down
 */
public record HealthCheckConfig(long intervalMilliseconds, long timeoutMilliseconds, int rise, int fall) {

    public static final long DEFAULT_INTERVAL_MILLISECONDS = 2000;
    public static final long DEFAULT_TIMEOUT_MILLISECONDS = 2000;
    public static final int DEFAULT_RISE = 2;
    public static final int DEFAULT_FALL = 3;

    public HealthCheckConfig {
        if (intervalMilliseconds < 0) {
            throw new IllegalArgumentException("intervalMilliseconds: " + intervalMilliseconds + " (expected: >= 0)");
        }
        if (timeoutMilliseconds < 1) {
            throw new IllegalArgumentException("timeoutMilliseconds: " + timeoutMilliseconds + " (expected: >= 1)");
        }
        if (rise < 1) {
            throw new IllegalArgumentException("rise: " + rise + " (expected: >= 1)");
        }
        if (fall < 1) {
            throw new IllegalArgumentException("fall: " + fall + " (expected: >= 1)");
        }
    }

    /** The seeds' HAProxy settings: every 2000 ms, down after 3 failures, up after 2 successes. */
    public static HealthCheckConfig defaults() {
        return new HealthCheckConfig(DEFAULT_INTERVAL_MILLISECONDS, DEFAULT_TIMEOUT_MILLISECONDS, DEFAULT_RISE,
                DEFAULT_FALL);
    }

    /** No checks: every backend is always considered up. */
    public static HealthCheckConfig disabled() {
        return new HealthCheckConfig(0, DEFAULT_TIMEOUT_MILLISECONDS, DEFAULT_RISE, DEFAULT_FALL);
    }

    public boolean enabled() {
        return intervalMilliseconds > 0;
    }
}
