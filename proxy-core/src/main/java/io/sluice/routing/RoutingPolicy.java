package io.sluice.routing;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendConnection;
import io.sluice.pooling.CommandPolicy;

/**
 * A policy that chooses, per transaction or statement, which server runs it (read/write splitting): the one call the
 * relay makes of it beside {@link CommandPolicy}'s, for a statement it held at the policy's request
 * ({@link Router#holdToRoute()}). The relay learns once per session whether its policy routes (decision 140).
 */
public interface RoutingPolicy extends CommandPolicy {

    /**
     * A statement the policy held to be routed ({@link Router#holdToRoute()}) is now first among the session's
     * commands, and {@code connection} (or {@code null}: none held) is between commands. Routes it.
     *
     * @return whether it needs a connection of its route: the session gives {@code connection} back and takes one;
     *     {@code false}: it runs on {@code connection}
     */
    boolean routeHeld(int command, ByteBuf frame, BackendConnection connection);
}
