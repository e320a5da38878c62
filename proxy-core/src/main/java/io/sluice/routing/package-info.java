/**
 * Where a statement goes: read/write splitting ({@link io.sluice.routing.ReadWriteSplitting}, the policy of a
 * session of a split group, over its {@link io.sluice.routing.ReadWriteGroup}), its causal reads
 * ({@link io.sluice.routing.CausalWaiter}), routing hints, and what query rules will add. The statement's class
 * comes from {@code readwrite}; this package decides with it.
 *
 * <p>Two small interfaces are its seam with the session (decision 140): {@link io.sluice.routing.Router} is what a
 * routing policy may ask of its session (the data source of its next connection, holding a statement until it can
 * be routed, a query on the primary), implemented by the frontend; {@link io.sluice.routing.RoutingPolicy} is what
 * the relay asks of such a policy (route the statement it held). A session that does not route (session or
 * transaction pooling alone) has neither, and pays nothing for them. {@link io.sluice.routing.SessionPolicies}
 * chooses a new session's policy.
 *
 * <p>Layer: above {@code pooling} (read/write splitting is transaction pooling whose every transaction chooses its
 * server), below {@code frontend} (which implements the router and picks the policy). See
 * docs/design/2026-11-27-read-write-splitting.md.
 */
package io.sluice.routing;
