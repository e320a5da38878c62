package io.sluice.frontend;

import io.sluice.backend.BackendException;
import io.sluice.balancer.replication.Roles;

/**
 * A statement of a read/write split session needed the group's primary and the group had none that took writes for
 * {@code primaryWaitMilliseconds}: no server writable, two or more writable (a split brain), or a switchover that did
 * not release in time. The client gets ERR 1290 ({@link ClientErrors#noPrimary}); the session goes on.
 */
final class NoPrimary extends BackendException {
    private static final long serialVersionUID = 1L;

    private final transient Roles roles;

    NoPrimary(String group, Roles roles, long waitedMillis) {
        super("read/write group '" + group + "' has no primary that takes writes after " + waitedMillis + " ms: "
                + roles.detail());
        this.roles = roles;
    }

    Roles roles() {
        return roles;
    }
}
