package io.sluice.frontend;

import io.sluice.config.LoginBackoff;
import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Slows down password guessing ({@code server.loginBackoff}): after {@code afterFailures} failed logins in a row from
 * one client address, each further login attempt from it waits for a time slot before its password is checked. Slots
 * are {@code delay} apart, the delay doubling with every further failure up to the maximum, so many connections in
 * parallel gain an attacker nothing over one. A successful login from the address clears its record.
 *
 * <p>Shared by every event loop. Only logins touch it (a map look-up per login), never the command phase. Records
 * are forgotten {@link #FORGET_AFTER_NANOS} after their last failure, and the map is bounded.
 */
public final class LoginThrottle {
    /** A failure this old no longer counts: an honest user's typos of last week do not slow them today. */
    static final long FORGET_AFTER_NANOS = TimeUnit.MINUTES.toNanos(10);
    /** Addresses tracked at most; past it, forgotten records are swept out before a new one is added. */
    static final int MAX_TRACKED = 100_000;

    private final LoginBackoff backoff;
    private final LongSupplier nanoTime;
    private final ConcurrentHashMap<InetAddress, Record> records = new ConcurrentHashMap<>();

    /** One address's failures; replaced, never changed, so a record read from the map is consistent. */
    private record Record(int failures, long lastFailureNanos, long nextSlotNanos) {
    }

    public LoginThrottle(LoginBackoff backoff) {
        this(backoff, System::nanoTime);
    }

    LoginThrottle(LoginBackoff backoff, LongSupplier nanoTime) {
        this.backoff = backoff;
        this.nanoTime = nanoTime;
    }

    /**
     * Takes the next time slot for a login attempt from {@code client}.
     *
     * @return how long the attempt must wait before it is checked, in milliseconds; 0 when the address is not
     *     backing off
     */
    public long reserve(InetAddress client) {
        if (!backoff.enabled() || client == null || records.isEmpty()) {
            return 0;
        }
        long now = nanoTime.getAsLong();
        long[] wait = new long[1];
        records.computeIfPresent(client, (address, record) -> {
            if (now - record.lastFailureNanos() > FORGET_AFTER_NANOS) {
                return null;
            }
            if (record.failures() < backoff.afterFailures()) {
                return record;
            }
            long slot = Math.max(now, record.nextSlotNanos());
            wait[0] = slot - now;
            return new Record(record.failures(), record.lastFailureNanos(), slot + delayNanos(record.failures()));
        });
        return TimeUnit.NANOSECONDS.toMillis(wait[0] + TimeUnit.MILLISECONDS.toNanos(1) - 1); // round up
    }

    /** Counts a failed login from {@code client}. */
    public void failed(InetAddress client) {
        if (!backoff.enabled() || client == null) {
            return;
        }
        long now = nanoTime.getAsLong();
        if (records.size() >= MAX_TRACKED && !records.containsKey(client)) {
            records.values().removeIf(record -> now - record.lastFailureNanos() > FORGET_AFTER_NANOS);
            if (records.size() >= MAX_TRACKED) {
                return; // still full of live records: the oldest attackers keep their delays, this one has none yet
            }
        }
        records.compute(client, (address, record) -> {
            int failures = record == null || now - record.lastFailureNanos() > FORGET_AFTER_NANOS
                    ? 1 : record.failures() + 1;
            long nextSlot = record == null ? now : record.nextSlotNanos();
            if (failures >= backoff.afterFailures()) {
                nextSlot = Math.max(nextSlot, now + delayNanos(failures));
            }
            return new Record(failures, now, nextSlot);
        });
    }

    /** A successful login from {@code client}: its failures are forgiven. */
    public void succeeded(InetAddress client) {
        if (client != null && !records.isEmpty()) {
            records.remove(client);
        }
    }

    /** Consecutive failures counted for {@code client}, for tests. */
    int failures(InetAddress client) {
        Record record = records.get(client);
        return record == null ? 0 : record.failures();
    }

    /** The delay after {@code failures} failures: doubling from the threshold on, up to the maximum. */
    private long delayNanos(int failures) {
        int doublings = Math.min(30, Math.max(0, failures - backoff.afterFailures()));
        long millis = Math.min(backoff.maxDelayMilliseconds(), backoff.delayMilliseconds() << doublings);
        if (millis < 0) { // the shift overflowed
            millis = backoff.maxDelayMilliseconds();
        }
        return TimeUnit.MILLISECONDS.toNanos(millis);
    }
}
