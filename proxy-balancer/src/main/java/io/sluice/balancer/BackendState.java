package io.sluice.balancer;

/**
 * What the balancer knows of one backend at one moment: for the admin API, metrics and logs.
 *
 * @param name the data source name
 * @param address {@code host:port}
 * @param status up, down or draining; a backend both down and drained reads {@link BackendStatus#DOWN}
 * @param draining whether an operator drained it (independent of health)
 * @param weight its share for the weighted policies; 0 takes no new sessions
 * @param activeSessions client sessions assigned to it now
 * @param totalSessions client sessions ever assigned to it
 * @param lastCheck the latest health check or session-reported failure, or {@code null} before the first
 * @param consecutiveSuccesses successful checks in a row
 * @param consecutiveFailures failed checks in a row
 */
public record BackendState(
        String name,
        String address,
        BackendStatus status,
        boolean draining,
        int weight,
        int activeSessions,
        long totalSessions,
        CheckResult lastCheck,
        int consecutiveSuccesses,
        int consecutiveFailures) {
}
