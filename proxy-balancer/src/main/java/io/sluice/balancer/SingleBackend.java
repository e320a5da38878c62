package io.sluice.balancer;

import java.util.Objects;
import java.util.Optional;

/** Every session goes to the one backend there is. */
public final class SingleBackend implements LoadBalancer {
    private final Optional<String> backend;

    public SingleBackend(String backend) {
        this.backend = Optional.of(Objects.requireNonNull(backend, "backend"));
    }

    @Override
    public Optional<String> pick() {
        return backend;
    }

    @Override
    public void sessionEnded(String name) {
        // nothing to account for with a single backend
    }
}
