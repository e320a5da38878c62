package io.sluice.config;

import java.time.Duration;

/**
 * A read/write split group's unplanned failover (issue #40 item 3, decision 175): off unless {@code autoFailover:
 * true}. The primary is declared gone when Sluice could not read it for {@code failoverAfterChecks} replica-watch
 * rounds in a row and every replica Sluice reaches says its IO thread cannot connect to it either; then the replicas
 * apply what they received (each for up to {@code failoverApplyTimeoutMilliseconds}), the most advanced is promoted
 * and the old primary is fenced until an operator rejoins it.
 *
 * @param enabled {@code autoFailover}
 * @param afterChecks {@code failoverAfterChecks}: failed readings of the primary in a row before it may be declared
 *     gone, 1 or more
 * @param applyTimeout {@code failoverApplyTimeoutMilliseconds}: how long each replica may take to apply its relay
 *     log before the candidate is chosen; past it the replica is chosen among by what it applied
 * @param dryRun {@code failoverDryRun}: declare the primary gone and plan (the candidate, the statements) into the
 *     log and the event history, once per outage, but change nothing on the servers
 */
public record AutoFailover(boolean enabled, int afterChecks, Duration applyTimeout, boolean dryRun) {
    public static final int DEFAULT_AFTER_CHECKS = 3;
    public static final Duration DEFAULT_APPLY_TIMEOUT = Duration.ofSeconds(10);
    /** Off. */
    public static final AutoFailover OFF = new AutoFailover(false, DEFAULT_AFTER_CHECKS, DEFAULT_APPLY_TIMEOUT,
            false);

    public AutoFailover {
        if (afterChecks < 1) {
            throw new IllegalArgumentException("failoverAfterChecks: " + afterChecks + " (expected: 1 or more)");
        }
        if (applyTimeout == null || applyTimeout.isNegative() || applyTimeout.isZero()) {
            throw new IllegalArgumentException("failoverApplyTimeoutMilliseconds: " + applyTimeout
                    + " (expected: above 0)");
        }
    }

    /** On, with the default checks and apply timeout. */
    public static AutoFailover on() {
        return new AutoFailover(true, DEFAULT_AFTER_CHECKS, DEFAULT_APPLY_TIMEOUT, false);
    }
}
