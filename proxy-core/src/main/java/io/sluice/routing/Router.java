package io.sluice.routing;

import io.netty.buffer.ByteBuf;
import io.sluice.backend.BackendException;
import io.sluice.readwrite.Route;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * What a routing policy ({@link RoutingPolicy}) may ask of the session it routes, beside what every policy may ask
 * ({@link io.sluice.pooling.SessionPort}). A capability of its own, given to the policy when the session is made
 * (decision 140): a session that does not route has none. Implemented by the frontend; every method runs on the
 * session's event loop.
 */
public interface Router {

    /**
     * The session's next connection comes from this data source ({@code null}: the one the session is assigned to,
     * the group's primary). Called between transactions, before the acquire.
     */
    void routeTo(String dataSource);

    /**
     * The command being looked at waits, held, until the commands before it are answered and the connection is
     * between commands; then {@link RoutingPolicy#routeHeld} routes it. Commands behind it wait behind it, in order.
     */
    void holdToRoute();

    /** Whether a command held by {@link #holdToRoute()} still waits to be routed. */
    boolean holdsToRoute();

    /**
     * Runs {@code frame} (taken), a statement a replica refused as a write, again, before any command held behind
     * it; {@link RoutingPolicy#routeHeld} routes it (decision 110).
     */
    void runAgainFirst(ByteBuf frame, int command);

    /**
     * The first held command (taken from its place) waits to be routed again; {@link RoutingPolicy#routeHeld} routes
     * it (decision 110).
     */
    void routeFirstAgain();

    /**
     * Answers the statement being looked at with ERR 1792: it would make the session's replica connection read-write
     * (decision 110).
     */
    void refuseAccessModeOnReplica(int sequenceId, String group, String replica);

    /**
     * Runs one text query of Sluice's own on a connection of the group's primary, taken for it alone and given back
     * ({@code causalReads: GLOBAL}); the session's own connection is not involved. Exactly one of {@code rows} and
     * {@code failed} is told, on the session's event loop.
     */
    void queryPrimary(String sql, Consumer<List<Map<String, String>>> rows, Consumer<BackendException> failed);

    /**
     * The route a query rule gives the statement the policy is routing ({@code frame} borrowed), or {@code null}:
     * no rule routes it. {@link #ruleRouted} is told next what became of it.
     */
    Route ruleRoute(int command, ByteBuf frame);

    /** Whether the statement {@link #ruleRoute} gave a route went where the rule says (else it could not). */
    void ruleRouted(boolean applied);
}
