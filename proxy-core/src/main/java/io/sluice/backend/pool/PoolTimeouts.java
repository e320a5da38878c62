package io.sluice.backend.pool;

import io.sluice.backend.BackendConnection;
import java.util.concurrent.TimeUnit;

/**
 * The bounds a {@link BackendPool} sets on its connections beyond its data source's settings, from the health checks'
 * configuration: how long one connect and login may take, and when an idle connection is pinged before it is lent.
 * Set from any thread (start, config reload), read on the event loops.
 */
public final class PoolTimeouts {
    /** One connect and login at most, when shorter than connectionTimeoutMilliseconds; 0: no bound of its own. */
    private volatile long loginAttemptMillis;
    /** A connection idle longer than this is pinged before it is lent; 0: never. */
    private volatile long idleCheckAfterNanos;
    private volatile long idleCheckTimeoutMillis;

    /**
     * Bounds one connect and login to this backend ({@code 0}: no bound but {@code connectionTimeoutMilliseconds}).
     * With another backend to fail over to, a server that accepts connections and never answers (hung, stopped)
     * must not use up a session's whole {@code connectionTimeoutMilliseconds} on one attempt, or the session fails
     * although another backend is up.
     */
    public void loginAttempt(long millis) {
        loginAttemptMillis = millis;
    }

    /**
     * Pings a connection idle for longer than {@code afterMillis} (COM_PING, answered within {@code timeoutMillis})
     * before it is lent, and closes it instead when the server does not answer; {@code afterMillis} 0: never.
     */
    public void idleCheck(long afterMillis, long timeoutMillis) {
        idleCheckTimeoutMillis = timeoutMillis;
        idleCheckAfterNanos = TimeUnit.MILLISECONDS.toNanos(afterMillis);
    }

    /** Whether {@code connection}, taken from the idle list, has been idle long enough to be pinged first. */
    boolean needsCheckBeforeLending(BackendConnection connection) {
        long after = idleCheckAfterNanos;
        return after > 0 && System.nanoTime() - connection.idleSinceNanos() > after;
    }

    long idleCheckTimeoutMillis() {
        return idleCheckTimeoutMillis;
    }

    /** How long one connect and login may take: the attempt bound, within {@code wholeMillis}. */
    long loginMillis(long wholeMillis) {
        long attempt = loginAttemptMillis;
        return attempt > 0 ? Math.min(attempt, wholeMillis) : wholeMillis;
    }
}
