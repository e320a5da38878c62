package io.sluice.routing;

import io.sluice.backend.SessionKey;
import io.sluice.pooling.CommandPolicy;
import io.sluice.pooling.PinnedSession;
import io.sluice.pooling.SessionPort;

/** Chooses the {@link CommandPolicy} of a new session, routing ones included. */
public final class SessionPolicies {

    private SessionPolicies() {
    }

    /**
     * The policy of a new session: that of {@link CommandPolicy#of} or, for a session of a read/write split group
     * ({@code split}, else {@code null}), read/write splitting: such a session takes a connection per transaction
     * from the group's primary or a replica, whatever the pooling mode, when the server can report session state
     * (else it stays on the primary, pinned).
     *
     * @param router what the policy may ask of the session to route it; used only with {@code split}
     */
    public static CommandPolicy of(boolean transactionPooling, SessionKey key, boolean clientTracksState,
            boolean mariaDb, ReadWriteGroup split, SessionPort port, Router router) {
        if (split == null) {
            return CommandPolicy.of(transactionPooling, key, clientTracksState, mariaDb, port);
        }
        if (!CommandPolicy.followsState(true, key)) {
            return new PinnedSession(port);
        }
        return new ReadWriteSplitting(port, router, split, key.deprecateEof(), clientTracksState, mariaDb);
    }
}
