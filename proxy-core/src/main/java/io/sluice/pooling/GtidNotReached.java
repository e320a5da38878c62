package io.sluice.pooling;

import io.sluice.backend.BackendException;

/**
 * A session moved to another server, and that server had not applied the session's last write (its GTID) within
 * the wait: the connection, matched and clean, is given back unused, and the session stays where it was (or, when
 * that server is gone, is closed: its next read there could miss its own write).
 */
public final class GtidNotReached extends BackendException {
    private static final long serialVersionUID = 1L;

    /** @param message what was not reached, and where; the client reads it */
    public GtidNotReached(String message) {
        super(message);
    }
}
