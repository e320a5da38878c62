package io.sluice.balancer;

/**
 * The outcome of one health check, or of a failure a session saw.
 *
 * @param ok whether the backend answered as a healthy server does
 * @param latencyNanos how long the check took, 0 for a failure reported by a session
 * @param atEpochMillis when it finished, in milliseconds since the epoch
 * @param detail what failed, or {@code "ok"}
 */
public record CheckResult(boolean ok, long latencyNanos, long atEpochMillis, String detail) {

    /** The latency in milliseconds, for people and JSON. */
    public double latencyMillis() {
        return latencyNanos / 1_000_000.0;
    }
}
