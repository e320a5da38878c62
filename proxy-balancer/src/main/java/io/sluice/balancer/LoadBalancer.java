package io.sluice.balancer;

import java.util.Optional;

/**
 * Chooses the backend a new session goes to. Implementations are called from many event-loop threads at once and
 * must be thread-safe; a pick must cost far less than a network round trip.
 *
 * <p>The API speaks of backends by their data-source name only, so it carries no Netty or protocol types.
 */
public interface LoadBalancer {

    /** The backend for a new session, or empty when none can take one. */
    Optional<String> pick();

    /** A session that {@link #pick() picked} {@code backend} has ended. */
    void sessionEnded(String backend);
}
