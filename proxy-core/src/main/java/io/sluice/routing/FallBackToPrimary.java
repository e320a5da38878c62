package io.sluice.routing;

import io.sluice.backend.BackendException;

/**
 * A replica connection taken for a read may not serve it (its causal wait timed out or failed): the session gives
 * it back as it is and takes a connection of the primary for the read instead.
 */
public final class FallBackToPrimary extends BackendException {
    private static final long serialVersionUID = 1L;

    FallBackToPrimary(String message) {
        super(message);
    }
}
