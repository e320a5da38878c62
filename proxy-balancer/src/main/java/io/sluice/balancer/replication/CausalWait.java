package io.sluice.balancer.replication;

import java.time.Duration;

/**
 * The statement a causal read sends to a replica before the read, and how its one-column result reads. The replica
 * waits until it has applied the session's last write, up to a timeout:
 *
 * <ul>
 *   <li>MariaDB: {@code SELECT MASTER_GTID_WAIT('0-1-42', 0.25)}: {@code 0} once {@code @@gtid_slave_pos} is at or
 *       past the position in every domain it names, {@code -1} at the timeout, {@code NULL} for a NULL position;
 *       a malformed position is an error (ERR 1105 or 1210). The timeout is in seconds, fractions allowed.</li>
 *   <li>MySQL: {@code SELECT WAIT_FOR_EXECUTED_GTID_SET('uuid:1-5', 1)}: {@code 0} once {@code @@gtid_executed}
 *       holds the set, {@code 1} at the timeout, {@code NULL} for a NULL set; an error when GTID mode is off or the
 *       set is malformed. The timeout is taken in whole seconds here (older servers truncate fractions), so it is
 *       rounded up.</li>
 * </ul>
 *
 * <p>An empty position needs no wait ({@link #sql} returns {@code null}): the session has written nothing.
 */
public final class CausalWait {

    /** What the wait's result says. */
    public enum Outcome {
        /** The replica has applied the position: the read may run there. */
        REACHED,
        /** The timeout passed first: the read goes to the primary. */
        TIMED_OUT,
        /** NULL, or a value neither function returns: treated as a failed wait (the primary reads). */
        FAILED
    }

    private CausalWait() {
    }

    /**
     * The statement that waits for {@code position} on a replica of its flavour, or {@code null} when the position
     * is empty.
     *
     * @param timeout how long the replica may wait, above 0
     */
    public static String sql(GtidPosition position, Duration timeout) {
        if (position.isEmpty()) {
            return null;
        }
        if (timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout: " + timeout + " (expected: above 0)");
        }
        // The text comes from the parser, which accepts digits, '-', ',', ':', hexadecimal UUIDs and tag letters
        // only: nothing in it needs quoting.
        if (position instanceof MariaDbGtidPosition) {
            return "SELECT MASTER_GTID_WAIT('" + position + "', " + seconds(timeout) + ")";
        }
        long whole = (timeout.toMillis() + 999) / 1000;
        return "SELECT WAIT_FOR_EXECUTED_GTID_SET('" + position + "', " + whole + ")";
    }

    /** Seconds with millisecond precision: {@code 0.25}, {@code 2}. */
    private static String seconds(Duration timeout) {
        long millis = Math.max(1, timeout.toMillis());
        if (millis % 1000 == 0) {
            return Long.toString(millis / 1000);
        }
        String fraction = Long.toString(1000 + millis % 1000).substring(1);
        while (fraction.endsWith("0")) {
            fraction = fraction.substring(0, fraction.length() - 1);
        }
        return millis / 1000 + "." + fraction;
    }

    /**
     * Reads the wait's result, the text of its one column ({@code null} for SQL NULL), as the function of
     * {@code flavour}'s position returns it.
     */
    public static Outcome read(GtidPosition flavour, String value) {
        if (value == null) {
            return Outcome.FAILED;
        }
        String result = value.strip();
        if (result.equals("0")) {
            return Outcome.REACHED;
        }
        boolean timedOut = flavour instanceof MariaDbGtidPosition ? result.equals("-1") : result.equals("1");
        return timedOut ? Outcome.TIMED_OUT : Outcome.FAILED;
    }
}
