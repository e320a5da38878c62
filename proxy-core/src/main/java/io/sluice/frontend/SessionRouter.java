package io.sluice.frontend;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendException;
import io.sluice.readwrite.Route;
import io.sluice.relay.ResponseKind;
import io.sluice.relay.ResponseObserver;
import io.sluice.routing.Router;
import io.sluice.routing.RoutingPolicy;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The {@link Router} of one session of a read/write split group, and the relay's part in routing: a statement its
 * policy asks to hold waits among the held commands until it is first and the connection is idle, then the policy
 * routes it (decision 109), on the connection held or on one of its route. Made only for a session whose policy
 * routes; the relay of any other session has none and pays nothing for it (decision 140). On the session's loop.
 */
final class SessionRouter implements Router {
    private final CommandRelayHandler relay;
    private final BackendLease lease;
    private final ClientSession session;
    private RoutingPolicy policy;

    SessionRouter(CommandRelayHandler relay, BackendLease lease, ClientSession session) {
        this.relay = relay;
        this.lease = lease;
        this.session = session;
    }

    /** The policy this router serves, made with it. */
    void serves(RoutingPolicy routing) {
        this.policy = routing;
    }

    @Override
    public Route ruleRoute(int command, ByteBuf frame) {
        return session.rules().routeOf(command, frame);
    }

    @Override
    public void ruleRouted(boolean applied) {
        session.rules().routed(applied);
    }

    // ---- the relay's part ------------------------------------------------------------------------------------

    /** Holds a command the policy routes once it is first and the connection is idle (read/write splitting). */
    void hold(ByteBuf frame, ResponseKind kind, int command, ResponseObserver captured) {
        HeldCommands held = relay.held();
        held.addToRoute(frame, kind, command, captured);
        if (held.peek().frame() != frame) {
            return; // routed once the commands before it went
        }
        BackendConnection connection = lease.connection();
        if (connection == null && !lease.isAcquiring()) {
            routedHere(held.peek(), null); // nothing before it, no connection: routed now
        } else if (connection != null && connection.isBetweenCommands() && !connection.runsOwnCommand()) {
            relay.sendHeld(); // a connection kept idle (a pin: the last statement's warnings), which no answer will wake
        }
    }

    /**
     * The first held command waits to be routed ({@link HeldCommands#addToRoute}): whether it runs on
     * {@code connection}, now. If not, it waits until the connection is between commands, or the policy routed it
     * elsewhere and a connection of its route is being taken (the one held given back).
     */
    boolean routedHere(HeldCommands.Held first, BackendConnection connection) {
        if (connection != null ? connection.runsOwnCommand() || !connection.isBetweenCommands()
                : lease.isAcquiring()) {
            return false;
        }
        relay.held().firstRouted();
        boolean elsewhere = policy.routeHeld(first.command(), first.frame(), connection);
        if (connection != null) {
            if (!elsewhere) {
                return true;
            }
            lease.giveBack();
        }
        relay.acquire();
        return false;
    }

    // ---- what the policy asks ----------------------------------------------------------------------------------

    @Override
    public void routeTo(String dataSource) {
        lease.routeTo(dataSource);
    }

    @Override
    public void holdToRoute() {
        relay.holdToRoute();
    }

    @Override
    public boolean holdsToRoute() {
        return relay.held().waitsToBeRouted();
    }

    @Override
    public void runAgainFirst(ByteBuf frame, int command) {
        relay.held().addFirstToRoute(frame, command, null); // the capture recorded the first try
    }

    @Override
    public void routeFirstAgain() {
        HeldCommands.Held first = relay.held().poll();
        relay.held().addFirstToRoute(first.frame(), first.command(), first.captured());
    }

    @Override
    public void refuseAccessModeOnReplica(int sequenceId, String group, String replica) {
        relay.answer(ClientErrors.accessModeOnReplica(session.channel().alloc(), sequenceId, group, replica,
                lease.policy().pinnedBy()));
    }

    @Override
    public void queryPrimary(String sql, Consumer<List<Map<String, String>>> rows, Consumer<BackendException> failed) {
        lease.queryPrimary(sql, rows, failed);
    }
}
