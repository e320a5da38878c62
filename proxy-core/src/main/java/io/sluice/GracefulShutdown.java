package io.sluice;

import io.sluice.frontend.SessionRegistry;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stopping without cutting transactions: {@code /health} answers 503 first, then new connections are refused and
 * each session is closed at its first idle moment outside a transaction, and what is left after the timeout is cut.
 * Blocks the calling thread; the proxy closes its listener and loops afterwards.
 */
final class GracefulShutdown {
    private static final Logger log = LoggerFactory.getLogger(GracefulShutdown.class);
    /** How often sessions that went idle without a response ending (a login finishing) are asked again to close. */
    private static final long NUDGE_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

    private final SessionRegistry sessions;
    private volatile boolean draining;

    GracefulShutdown(SessionRegistry sessions) {
        this.sessions = sessions;
    }

    /** Whether graceful shutdown (or a close) has begun: {@code /health} then answers 503. */
    boolean isDraining() {
        return draining;
    }

    /** A close without the graceful part: only the flag, for {@code /health} and reload. */
    void markDraining() {
        draining = true;
    }

    /**
     * Drains the sessions; see {@link Sluice#shutdownGracefully(Duration, Duration)}.
     *
     * @return true when every session ended on its own, false when some are left to be cut
     */
    boolean drain(Duration waitBeforeRefusing, Duration closeTimeout) {
        draining = true;
        log.info("Graceful shutdown: /health answers 503; new connections are refused in {} ms, then sessions get"
                + " up to {} ms to finish their transactions", waitBeforeRefusing.toMillis(), closeTimeout.toMillis());
        sleep(waitBeforeRefusing.toMillis());
        sessions.startClosing();
        log.info("Refusing new connections; {} session(s) open", sessions.open());
        long deadline = System.nanoTime() + closeTimeout.toNanos();
        long nextNudge = System.nanoTime() + NUDGE_NANOS;
        while (sessions.open() > 0 && System.nanoTime() - deadline < 0) {
            sleep(20);
            if (System.nanoTime() - nextNudge >= 0) {
                sessions.startClosing();
                nextNudge = System.nanoTime() + NUDGE_NANOS;
            }
        }
        int cut = sessions.open();
        if (cut > 0) {
            log.warn("Graceful shutdown: closing {} session(s) still in a transaction or a command after {} ms",
                    cut, closeTimeout.toMillis());
        } else {
            log.info("Graceful shutdown: every session ended");
        }
        return cut == 0;
    }

    private static void sleep(long millis) {
        if (millis <= 0) {
            return;
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
