package io.sluice.config;

/**
 * Graceful shutdown on SIGTERM, {@code bin/stop.sh} or {@code Sluice.shutdownGracefully()}: first {@code /health}
 * answers 503 while new connections are still served, so that load balancers stop sending any; then new connections
 * are refused, and each session is closed at its first idle moment outside a transaction.
 *
 * @param gracefulWaitBeforeShutdownMilliseconds how long {@code /health} says 503 before new connections are refused
 * @param gracefulCloseTimeoutMilliseconds how long sessions then get to finish their transactions before the rest are
 *     closed anyway
 */
public record ShutdownConfig(long gracefulWaitBeforeShutdownMilliseconds, long gracefulCloseTimeoutMilliseconds) {

    public static final long DEFAULT_GRACEFUL_WAIT_BEFORE_SHUTDOWN_MILLISECONDS = 0;
    public static final long DEFAULT_GRACEFUL_CLOSE_TIMEOUT_MILLISECONDS = 15_000;

    public ShutdownConfig {
        if (gracefulWaitBeforeShutdownMilliseconds < 0) {
            throw new IllegalArgumentException("gracefulWaitBeforeShutdownMilliseconds: "
                    + gracefulWaitBeforeShutdownMilliseconds + " (expected: >= 0)");
        }
        if (gracefulCloseTimeoutMilliseconds < 0) {
            throw new IllegalArgumentException("gracefulCloseTimeoutMilliseconds: " + gracefulCloseTimeoutMilliseconds
                    + " (expected: >= 0)");
        }
    }

    /** TiProxy's defaults: no wait, 15 s for transactions to finish. */
    public static ShutdownConfig defaults() {
        return new ShutdownConfig(DEFAULT_GRACEFUL_WAIT_BEFORE_SHUTDOWN_MILLISECONDS,
                DEFAULT_GRACEFUL_CLOSE_TIMEOUT_MILLISECONDS);
    }
}
