package io.sluice.frontend;

import io.sluice.config.LoginBackoff;
import java.net.InetAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Slows down password guessing ({@code server.loginBackoff}): after {@code afterFailures} failed logins in a row for
 * one account from one client address, each further attempt at that account from that address waits for its turn
 * before its password is checked. Turns are {@code delay} apart, the delay doubling with every further failure up to
 * the maximum, so many connections in parallel gain an attacker nothing over one. A successful login clears the
 * record of its account and address only: an attacker who owns an account cannot wipe out the guesses it made at
 * another by logging in between them (issue #42: COM_CHANGE_USER guesses ran at about 258 a second that way).
 * COM_CHANGE_USER is a login here, with the same records.
 *
 * <p>A turn is taken when an attempt is checked, not when it arrives, and one attempt per address waits at a time:
 * a connection that sends a HandshakeResponse and closes, or waits and is closed, uses up no turn, so it cannot push
 * a later login out. A further attempt while one waits, or one whose turn comes after what it may wait (the rest of
 * its handshake timeout), is refused at once ({@link #REFUSED}) and holds no connection. What an address's failures
 * can make a login from it wait is so bounded by {@code maxDelayMilliseconds} and by the handshake timeout.
 *
 * <p>Shared by every event loop. Only logins and COM_CHANGE_USER touch it (a map look-up each), never other
 * commands. Records are forgotten {@link #FORGET_AFTER_NANOS} after their last failure, and the map is bounded.
 */
public final class LoginThrottle {
    /** A failure this old no longer counts: an honest user's typos of last week do not slow them today. */
    static final long FORGET_AFTER_NANOS = TimeUnit.MINUTES.toNanos(10);
    /** Addresses tracked at most; past it, forgotten records are swept out before a new one is added. */
    static final int MAX_TRACKED = 100_000;
    /** What {@link #reserve} returns for an attempt that must not wait: refuse it without checking it. */
    public static final long REFUSED = -1;

    private final LoginBackoff backoff;
    private final LongSupplier nanoTime;
    /** The longest user name a record keeps (MariaDB's limit): longer ones are no account, and share a record. */
    static final int MAX_USER_LENGTH = 80;

    private final ConcurrentHashMap<Attempts, Record> records = new ConcurrentHashMap<>();

    /** Whose failures a record counts: an account, by the name the client gave, from an address. */
    private record Attempts(String user, InetAddress address) {
        static Attempts of(String user, InetAddress address) {
            String name = user == null ? "" : user;
            return new Attempts(name.length() > MAX_USER_LENGTH ? name.substring(0, MAX_USER_LENGTH) : name, address);
        }
    }

    /**
     * One address's failures; replaced, never changed, so a record read from the map is consistent.
     *
     * @param nextTurnNanos when the next attempt may be checked
     * @param waiting whether an attempt waits for that turn
     */
    private record Record(int failures, long lastFailureNanos, long nextTurnNanos, boolean waiting) {
        Record waiting(boolean value) {
            return new Record(failures, lastFailureNanos, nextTurnNanos, value);
        }

        /** An attempt is checked now: the turn after it is {@code delay} away. */
        Record turnTaken(long now, long delayNanos) {
            return new Record(failures, lastFailureNanos, now + delayNanos, false);
        }
    }

    public LoginThrottle(LoginBackoff backoff) {
        this(backoff, System::nanoTime);
    }

    LoginThrottle(LoginBackoff backoff, LongSupplier nanoTime) {
        this.backoff = backoff;
        this.nanoTime = nanoTime;
    }

    /**
     * A login attempt as {@code user} (the name the client gave) from {@code client} is ready to be checked: it may
     * be now, after a wait, or not at all.
     *
     * @param maxWaitMillis the longest the attempt may wait for its turn (what is left of its handshake timeout);
     *     {@link Long#MAX_VALUE} for no bound
     * @return 0 when it may be checked now (it has taken the address's turn); {@link #REFUSED} when it must not
     *     wait (another attempt from the address waits, or its turn is more than {@code maxWaitMillis} away); else
     *     how long it waits, in milliseconds, before it asks again with {@link #admit} (or gives up its place with
     *     {@link #abandon})
     */
    public long reserve(String user, InetAddress client, long maxWaitMillis) {
        if (!backoff.enabled() || client == null || records.isEmpty()) {
            return 0;
        }
        long now = nanoTime.getAsLong();
        long[] answer = new long[1];
        records.computeIfPresent(Attempts.of(user, client), (key, record) -> {
            if (now - record.lastFailureNanos() > FORGET_AFTER_NANOS) {
                return null;
            }
            if (record.failures() < backoff.afterFailures()) {
                return record;
            }
            if (record.waiting()) {
                answer[0] = REFUSED; // it could not be checked before the one that waits anyway
                return record;
            }
            long wait = record.nextTurnNanos() - now;
            if (wait <= 0) {
                return record.turnTaken(now, delayNanos(record.failures()));
            }
            long waitMillis = roundUpMillis(wait);
            if (waitMillis > maxWaitMillis) {
                answer[0] = REFUSED; // it would time out before its turn: no point holding its connection
                return record;
            }
            answer[0] = waitMillis;
            return record.waiting(true);
        });
        return answer[0];
    }

    /**
     * The wait {@link #reserve} set for an attempt from {@code client} is over.
     *
     * @return 0 when it may be checked now (it has taken the turn), else how much longer it waits (a failure
     *     checked meanwhile moved the turn), in milliseconds, before it asks again
     */
    public long admit(String user, InetAddress client) {
        if (client == null) {
            return 0;
        }
        long now = nanoTime.getAsLong();
        long[] answer = new long[1];
        records.computeIfPresent(Attempts.of(user, client), (key, record) -> {
            if (now - record.lastFailureNanos() > FORGET_AFTER_NANOS) {
                return null;
            }
            long wait = record.nextTurnNanos() - now;
            if (wait > 0) {
                answer[0] = roundUpMillis(wait);
                return record.waiting(true);
            }
            return record.turnTaken(now, delayNanos(record.failures()));
        });
        return answer[0];
    }

    /**
     * An attempt from {@code client} that waited for its turn was given up before it was checked (its connection
     * closed or timed out): the next attempt may wait in its place, and the turn is not used up.
     */
    public void abandon(String user, InetAddress client) {
        if (client != null && !records.isEmpty()) {
            records.computeIfPresent(Attempts.of(user, client),
                    (key, record) -> record.waiting() ? record.waiting(false) : record);
        }
    }

    /** Counts a failed login as {@code user} from {@code client}. */
    public void failed(String user, InetAddress client) {
        if (!backoff.enabled() || client == null) {
            return;
        }
        long now = nanoTime.getAsLong();
        Attempts key = Attempts.of(user, client);
        if (records.size() >= MAX_TRACKED && !records.containsKey(key)) {
            records.values().removeIf(record -> now - record.lastFailureNanos() > FORGET_AFTER_NANOS);
            if (records.size() >= MAX_TRACKED) {
                return; // still full of live records: the oldest attackers keep their delays, this one has none yet
            }
        }
        records.compute(key, (k, record) -> {
            int failures = record == null || now - record.lastFailureNanos() > FORGET_AFTER_NANOS
                    ? 1 : record.failures() + 1;
            long nextTurn = record == null ? now : record.nextTurnNanos();
            if (failures >= backoff.afterFailures()) {
                nextTurn = Math.max(nextTurn, now + delayNanos(failures));
            }
            return new Record(failures, now, nextTurn, record != null && record.waiting());
        });
    }

    /** A successful login as {@code user} from {@code client}: the failures at that account from there are forgiven. */
    public void succeeded(String user, InetAddress client) {
        if (client != null && !records.isEmpty()) {
            records.remove(Attempts.of(user, client));
        }
    }

    private static long roundUpMillis(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos + TimeUnit.MILLISECONDS.toNanos(1) - 1);
    }

    /** Consecutive failures counted for {@code client}, for tests. */
    int failures(String user, InetAddress client) {
        Record record = records.get(Attempts.of(user, client));
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
