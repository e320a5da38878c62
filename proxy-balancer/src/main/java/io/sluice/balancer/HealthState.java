package io.sluice.balancer;

/**
 * The rise/fall state machine of one backend: {@code fall} failed checks in a row take an up backend down,
 * {@code rise} successful checks in a row bring a down one up. A failure a session saw (a refused connect) takes it
 * down at once, as if {@code fall} checks had failed.
 *
 * <p>Checks and session reports arrive from different threads, so transitions are synchronized; {@link #isUp()} is a
 * volatile read, because every pick reads it.
 */
final class HealthState {
    private final int rise;
    private final int fall;
    private volatile boolean up;
    private int successes;
    private int failures;
    private CheckResult last;

    HealthState(int rise, int fall, boolean up) {
        this.rise = rise;
        this.fall = fall;
        this.up = up;
    }

    boolean isUp() {
        return up;
    }

    /**
     * Counts one check.
     *
     * @return whether the backend changed between up and down
     */
    synchronized boolean record(CheckResult result) {
        last = result;
        if (result.ok()) {
            failures = 0;
            successes++;
            if (!up && successes >= rise) {
                up = true;
                return true;
            }
        } else {
            successes = 0;
            failures++;
            if (up && failures >= fall) {
                up = false;
                return true;
            }
        }
        return false;
    }

    /**
     * Takes the backend down now, whatever the count: a session could not reach it.
     *
     * @return whether it was up
     */
    synchronized boolean markDown(CheckResult result) {
        last = result;
        successes = 0;
        failures = Math.max(failures + 1, fall);
        boolean wasUp = up;
        up = false;
        return wasUp;
    }

    synchronized CheckResult last() {
        return last;
    }

    synchronized int successes() {
        return successes;
    }

    synchronized int failures() {
        return failures;
    }
}
