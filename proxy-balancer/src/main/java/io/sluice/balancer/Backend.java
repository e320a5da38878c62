package io.sluice.balancer;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One server of a {@link BackendGroup}: its name, weight, health, drain flag and session counts. Read by every pick,
 * from every event loop, so each field is volatile or atomic.
 */
public final class Backend {
    private final String name;
    private final String address;
    private final HealthState health;
    private final AtomicInteger activeSessions = new AtomicInteger();
    private final AtomicLong totalSessions = new AtomicLong();
    private volatile int weight;
    private volatile boolean draining;
    /** At most one health check of a backend runs at a time. */
    final AtomicBoolean checkInFlight = new AtomicBoolean();
    /** The smooth weighted round-robin's running weight; guarded by that policy's lock. */
    long currentWeight;

    Backend(String name, String address, int weight, HealthState health) {
        this.name = name;
        this.address = address;
        this.health = health;
        setWeight(weight);
    }

    public String name() {
        return name;
    }

    /** {@code host:port}, for messages. */
    public String address() {
        return address;
    }

    public int weight() {
        return weight;
    }

    void setWeight(int newWeight) {
        if (newWeight < 0 || newWeight > BackendGroup.MAX_WEIGHT) {
            throw new IllegalArgumentException("weight: " + newWeight + " (expected: 0.." + BackendGroup.MAX_WEIGHT
                    + ")");
        }
        weight = newWeight;
    }

    public boolean isDraining() {
        return draining;
    }

    void setDraining(boolean value) {
        draining = value;
    }

    /** Whether its health checks pass (independent of drain and weight). */
    public boolean isUp() {
        return health.isUp();
    }

    /** Whether a new session may go here: up, not draining, and with a weight above 0. */
    public boolean acceptsSessions() {
        return health.isUp() && !draining && weight > 0;
    }

    public BackendStatus status() {
        if (!health.isUp()) {
            return BackendStatus.DOWN;
        }
        return draining ? BackendStatus.DRAINING : BackendStatus.UP;
    }

    /** Client sessions assigned here now. */
    public int activeSessions() {
        return activeSessions.get();
    }

    HealthState health() {
        return health;
    }

    void sessionStarted() {
        activeSessions.incrementAndGet();
        totalSessions.incrementAndGet();
    }

    void sessionEnded() {
        activeSessions.decrementAndGet();
    }

    /** A consistent-enough picture of this backend for the admin API and metrics. */
    public BackendState state() {
        return new BackendState(name, address, status(), draining, weight, activeSessions.get(), totalSessions.get(),
                health.last(), health.successes(), health.failures());
    }

    /**
     * Whether this backend is less loaded than {@code other}, by sessions per unit of weight. Compared by
     * cross-multiplying, so no division and no rounding.
     */
    boolean lessLoadedThan(Backend other) {
        return (long) activeSessions.get() * other.weight < (long) other.activeSessions.get() * weight;
    }

    @Override
    public String toString() {
        return name + " (" + address + ", " + status() + ")";
    }
}
