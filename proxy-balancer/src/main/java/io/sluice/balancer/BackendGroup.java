package io.sluice.balancer;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The backends one proxy spreads its sessions over (the {@code dataSources} of config.yaml), with the policy that
 * chooses among them and each one's health and drain state.
 *
 * <p>Every new session calls {@link #pick()} and, when it ends, {@link #sessionEnded(Backend)}; both are lock-free
 * except under the weighted round-robin policy. Membership changes (config reload) replace the backend array
 * copy-on-write, so a pick never sees a half-built one.
 */
public final class BackendGroup {

    /** The largest weight, as HAProxy's. */
    public static final int MAX_WEIGHT = 256;

    /** Told when a backend changes between up, down and draining. Called on whichever thread made the change. */
    @FunctionalInterface
    public interface Listener {
        /**
         * @param before the status it had, or {@code null} for a backend just added in rotation (a config reload):
         *     sessions may move to it as to one that came back up
         */
        void statusChanged(BackendState now, BackendStatus before);
    }

    private static final Predicate<Backend> ACCEPTS_SESSIONS = Backend::acceptsSessions;

    private final HealthCheckConfig healthCheck;
    private final LongSupplier epochMillis;
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private volatile Backend[] backends = new Backend[0];
    private volatile BalancePolicy policy;
    private volatile Policy policyType;
    private volatile Consumer<Backend> confirmCheck;

    public BackendGroup(Policy policy, HealthCheckConfig healthCheck) {
        this(policy, healthCheck, System::currentTimeMillis);
    }

    /** For tests: {@code epochMillis} stamps session-reported failures. */
    BackendGroup(Policy policy, HealthCheckConfig healthCheck, LongSupplier epochMillis) {
        this.policyType = Objects.requireNonNull(policy, "policy");
        this.policy = policy.create();
        this.healthCheck = Objects.requireNonNull(healthCheck, "healthCheck");
        this.epochMillis = epochMillis;
    }

    // ---- membership -----------------------------------------------------------------------------------------

    /**
     * Adds a backend.
     *
     * @param up whether it starts in rotation; one that starts down needs {@code rise} successful checks. With
     *     health checks off every backend starts, and stays, up. One that starts up is announced to the listeners
     *     added so far (with no status before).
     * @throws IllegalArgumentException when the name is taken or the weight is outside 0..{@value #MAX_WEIGHT}
     */
    public synchronized Backend add(String name, String address, int weight, boolean up) {
        Objects.requireNonNull(name, "name");
        if (backend(name) != null) {
            throw new IllegalArgumentException("backend: " + name + " (expected: a name not already in the group)");
        }
        Backend added = new Backend(name, address, weight,
                new HealthState(healthCheck.rise(), healthCheck.fall(), up || !healthCheck.enabled()));
        Backend[] grown = Arrays.copyOf(backends, backends.length + 1);
        grown[grown.length - 1] = added;
        backends = grown;
        if (added.status() == BackendStatus.UP) {
            fireIfChanged(added, null);
        }
        return added;
    }

    /**
     * Takes a backend out of the group. Its open sessions keep their connections; it takes no new one.
     *
     * @return the backend removed, or {@code null} when there is none of that name
     */
    public synchronized Backend remove(String name) {
        Backend removed = backend(name);
        if (removed == null) {
            return null;
        }
        removed.setDraining(true); // sessions still holding it must not count it as a place to fail over to
        backends = Arrays.stream(backends).filter(b -> b != removed).toArray(Backend[]::new);
        return removed;
    }

    /** The backend of that name, or {@code null}. */
    public Backend backend(String name) {
        for (Backend backend : backends) {
            if (backend.name().equals(name)) {
                return backend;
            }
        }
        return null;
    }

    /** The backends in configuration order. */
    public List<Backend> backends() {
        return List.of(backends);
    }

    /** Switches the policy, for config reload. */
    public void setPolicy(Policy newPolicy) {
        if (newPolicy != policyType) {
            policy = newPolicy.create();
            policyType = newPolicy;
        }
    }

    public Policy policy() {
        return policyType;
    }

    public HealthCheckConfig healthCheck() {
        return healthCheck;
    }

    // ---- sessions -------------------------------------------------------------------------------------------

    /**
     * Chooses the backend for a new session and counts the session on it.
     *
     * @return the backend, or {@code null} when none is up, undrained and weighted
     */
    public Backend pick() {
        Backend[] now = backends;
        return now.length == 0 ? null : started(policy.choose(now, ACCEPTS_SESSIONS));
    }

    /**
     * As {@link #pick()}, leaving out backends a session has already failed on: failover.
     */
    public Backend pick(Collection<String> excluding) {
        Backend[] now = backends;
        if (excluding.isEmpty() || now.length == 0) {
            return pick();
        }
        return started(policy.choose(now, b -> b.acceptsSessions() && !excluding.contains(b.name())));
    }

    /**
     * Counts a session on the backend named, chosen by name rather than by the policy: a session moved there to
     * spread the group's sessions.
     *
     * @return the backend, or {@code null} when there is none of that name or it takes no sessions
     */
    public Backend claim(String name) {
        Backend backend = backend(name);
        return backend != null && backend.acceptsSessions() ? started(backend) : null;
    }

    /**
     * The primary of a read/write split group for a session that logs in while it is down (its replicas serve the
     * session's reads meanwhile, decision 103): counted as {@link #claim} counts, so that {@link #sessionEnded}
     * balances it. {@code null} when there is no such backend, or it is drained or weighted out on purpose: only a
     * backend that health checks took out is taken anyway.
     */
    public Backend claimDown(String name) {
        Backend backend = backend(name);
        return backend != null && !backend.isUp() && !backend.isDraining() ? started(backend) : null;
    }

    /**
     * Counts a session back on the backend it just left, if that backend is still up (drained is fine: the session
     * only returns to what it has not left yet). A move that could not complete is undone this way.
     *
     * @return the backend, or {@code null} when it is down or gone
     */
    public Backend reclaim(String name) {
        Backend backend = backend(name);
        return backend != null && backend.status() != BackendStatus.DOWN ? started(backend) : null;
    }

    private static Backend started(Backend chosen) {
        if (chosen != null) {
            chosen.sessionStarted();
        }
        return chosen;
    }

    /** A session that {@link #pick() picked} {@code backend} ended, or moved to another backend. */
    public void sessionEnded(Backend backend) {
        backend.sessionEnded();
    }

    /** Why no backend takes sessions, for the error a client sees: "ds_0 is down (…), ds_1 is draining". */
    public String describeUnavailable() {
        Backend[] now = backends;
        if (now.length == 0) {
            return "the backend group is empty";
        }
        return Arrays.stream(now).map(BackendGroup::describe).collect(Collectors.joining(", "));
    }

    private static String describe(Backend backend) {
        if (!backend.isUp()) {
            CheckResult last = backend.health().last();
            return backend.name() + " is down" + (last == null || last.ok() ? "" : " (" + last.detail() + ")");
        }
        if (backend.isDraining()) {
            return backend.name() + " is draining";
        }
        return backend.weight() == 0 ? backend.name() + " has weight 0" : backend.name() + " is up";
    }

    // ---- drain and weight -----------------------------------------------------------------------------------

    /**
     * Takes a backend out of rotation: its sessions finish, no new session comes.
     *
     * @return whether a backend of that name exists
     */
    public boolean drain(String name) {
        return setDraining(name, true);
    }

    /** Puts a drained backend back into rotation (once healthy). */
    public boolean undrain(String name) {
        return setDraining(name, false);
    }

    private boolean setDraining(String name, boolean draining) {
        Backend backend = backend(name);
        if (backend == null) {
            return false;
        }
        BackendStatus before = backend.status();
        backend.setDraining(draining);
        fireIfChanged(backend, before);
        return true;
    }

    /** Changes a backend's weight, for config reload. */
    public boolean setWeight(String name, int weight) {
        Backend backend = backend(name);
        if (backend == null) {
            return false;
        }
        backend.setWeight(weight);
        return true;
    }

    // ---- health ---------------------------------------------------------------------------------------------

    /**
     * A session could not connect to {@code name}: passive health takes it down at once, so the next sessions go
     * elsewhere without waiting for {@code fall} checks. With health checks off this changes nothing, since no check
     * would ever bring the backend back.
     */
    public void reportConnectFailure(String name, String detail) {
        Backend backend = backend(name);
        if (backend == null || !healthCheck.enabled()) {
            return;
        }
        BackendStatus before = backend.status();
        backend.health().markDown(new CheckResult(false, 0, epochMillis.getAsLong(), "session: " + detail));
        fireIfChanged(backend, before);
    }

    /**
     * A session's connection to {@code name} broke. One broken connection does not prove the server dead (an
     * operator may have killed it), so it asks for a check now; if that check fails the backend goes down at once.
     */
    public void reportConnectionLost(String name) {
        Backend backend = backend(name);
        Consumer<Backend> check = confirmCheck;
        if (backend != null && check != null) {
            check.accept(backend);
        }
    }

    /** Counts a health check's result. */
    void recordCheck(Backend backend, CheckResult result, boolean confirming) {
        BackendStatus before = backend.status();
        if (confirming && !result.ok()) {
            backend.health().markDown(result);
        } else {
            backend.health().record(result);
        }
        fireIfChanged(backend, before);
    }

    void onConfirmCheck(Consumer<Backend> check) {
        this.confirmCheck = check;
    }

    // ---- observation ----------------------------------------------------------------------------------------

    public void addListener(Listener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
    }

    /** Every backend's state, in configuration order. */
    public List<BackendState> states() {
        Backend[] now = backends;
        List<BackendState> states = new ArrayList<>(now.length);
        for (Backend backend : now) {
            states.add(backend.state());
        }
        return states;
    }

    private void fireIfChanged(Backend backend, BackendStatus before) {
        BackendStatus after = backend.status();
        if (after != before) {
            BackendState state = backend.state();
            for (Listener listener : listeners) {
                listener.statusChanged(state, before);
            }
        }
    }
}
