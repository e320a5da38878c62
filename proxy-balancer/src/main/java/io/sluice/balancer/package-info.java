/**
 * The backend group: which backend a new session goes to (one class per {@link io.sluice.balancer.Policy}), each
 * backend's health (the rise/fall state machine), drain and weight, and the health-check scheduler.
 *
 * <p>Layer: the foundation, in a module of its own. It depends on nothing of Sluice and has no Netty type in its API;
 * proxy-core implements its {@link io.sluice.balancer.HealthProbe} with its own connections.
 */
package io.sluice.balancer;
