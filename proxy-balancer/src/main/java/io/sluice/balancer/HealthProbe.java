package io.sluice.balancer;

import java.util.concurrent.CompletionStage;

/**
 * Checks one backend, asynchronously. The proxy implements it with its own connections; the balancer only times
 * and counts the outcomes, so it needs no network code.
 */
@FunctionalInterface
public interface HealthProbe {

    /**
     * Starts a check of {@code backend} and completes when it is over: normally when the server answered as a
     * healthy one, exceptionally (with a message worth logging) when not.
     *
     * @param timeoutMillis the check must complete within this time, successfully or not
     */
    CompletionStage<?> check(String backend, long timeoutMillis);
}
