package io.sluice.balancer.replication;

import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Which server of a read/write split group is its primary, found from the servers themselves (issue #40): each
 * replica-watch round hands in every server's {@link ReplicationReading}, and the one server that is writable
 * ({@code read_only} off; on MySQL {@code super_read_only} off too) is the primary. None writable: writes wait for
 * one. Two or more: a split brain, and writes go to neither; Sluice never guesses which one is right.
 *
 * <p>A planned switchover {@link #hold holds} the roles while it changes them itself: readings are not followed
 * until it {@link #release releases} them. A server {@link #fence fenced} after an unplanned failover (the old
 * primary) is never taken for the primary, whatever its {@code read_only}, until it is {@link #rejoined}. Every change is kept in a short history ({@link #events}) and told to the
 * listeners, on the thread that made it. Plain Java: proxy-core reads the servers and applies the roles.
 */
public final class Topology {
    /** How many events the history keeps. */
    public static final int HISTORY = 200;

    private final String group;
    private final List<String> servers;
    private final boolean follows;
    private final Clock clock;
    private final Deque<TopologyEvent> events = new ArrayDeque<>();
    private final List<Consumer<Roles>> listeners = new CopyOnWriteArrayList<>();
    private volatile Roles roles;
    private long primaryChanges;
    private long splitBrains;
    private long switchovers;
    private long switchoversNotDone;
    private long lastWritesHeldMillis = -1;
    private final java.util.Set<String> fenced = new java.util.concurrent.CopyOnWriteArraySet<>();
    private long failovers;
    private long failoversNotDone;
    private long lastFailoverMillis = -1;
    /** How many times the roles changed since start: a round's readings are followed only if none happened since. */
    private long version;

    /**
     * @param group the group's name, for logs and events
     * @param servers every server of the group in configuration order
     * @param preferred the server taken for the primary until a reading says otherwise ({@code writeDataSourceName})
     * @param follows whether readings decide the primary ({@code primaryDiscovery: READ_ONLY}); if not, the
     *     preferred server is the primary for good and {@link #observe} changes nothing
     */
    public Topology(String group, List<String> servers, String preferred, boolean follows) {
        this(group, servers, preferred, follows, Clock.systemUTC());
    }

    Topology(String group, List<String> servers, String preferred, boolean follows, Clock clock) {
        this.group = Objects.requireNonNull(group, "group");
        this.servers = List.copyOf(servers);
        this.follows = follows;
        this.clock = clock;
        if (!this.servers.contains(preferred)) {
            throw new IllegalArgumentException("preferred: " + preferred + " (expected: one of " + servers + ")");
        }
        // Never guess: a group that follows read_only takes no write before its servers were read once.
        this.roles = follows
                ? new Roles(Roles.State.NO_PRIMARY, preferred, others(preferred), List.of(), "not read yet")
                : new Roles(Roles.State.PRIMARY, preferred, others(preferred), List.of(preferred),
                        "writeDataSourceName");
        record("start", roles.detail() + " (" + roles.state().label() + ")");
    }

    /** The group's roles now: one volatile read. */
    public Roles roles() {
        return roles;
    }

    /** Whether readings decide the primary. */
    public boolean follows() {
        return follows;
    }

    public String group() {
        return group;
    }

    /** Every server of the group, in configuration order. */
    public List<String> servers() {
        return servers;
    }

    /**
     * How many times the roles changed since start. A replica-watch round takes it before it reads the servers and
     * gives it to {@link #observe(List, long)}: readings taken across a change are stale.
     */
    public synchronized long version() {
        return version;
    }

    /** Tells {@code listener} each new roles, on the thread that changed them. */
    public void onChange(Consumer<Roles> listener) {
        listeners.add(listener);
    }

    /**
     * {@link #onChange}, told before the listeners added so far: for what applies the roles (pools, which servers
     * take reads), which must be done before statements waiting for a primary are woken.
     */
    public void onChangeFirst(Consumer<Roles> listener) {
        listeners.add(0, listener);
    }

    /**
     * One replica-watch round: every server's reading, in any order. Changes the roles when they differ from what
     * the readings say, unless a switchover holds them or the group does not follow its servers.
     *
     * @return the roles after the round
     */
    public synchronized Roles observe(List<ReplicationReading> readings) {
        return Objects.requireNonNull(observe(readings, version));
    }

    /**
     * {@link #observe(List)} for readings begun at roles {@link #version} {@code readSince}: when the roles changed
     * since (a switchover held and released them while the servers were read), the readings may show the old primary
     * still writable and are not followed; the next round reads the servers afresh.
     *
     * @return the roles after the round, or {@code null} when the readings are stale and nothing may be judged by them
     */
    public synchronized Roles observe(List<ReplicationReading> readings, long readSince) {
        if (readSince != version) {
            record("stale_round", "the roles changed while the servers were read: the next round reads them again");
            return null;
        }
        Roles now = roles;
        if (!follows || now.state() == Roles.State.SWITCHING) {
            return now;
        }
        List<String> writable = new ArrayList<>(2);
        StringBuilder others = new StringBuilder();
        for (String server : servers) {
            ReplicationReading reading = find(readings, server);
            if (reading == null) {
                continue;
            }
            if (fenced.contains(server)) {
                others.append(others.isEmpty() ? "" : ", ").append(server).append(" fenced");
            } else if (reading.reachable() && !reading.readOnly()) {
                writable.add(server);
            } else {
                others.append(others.isEmpty() ? "" : ", ").append(server).append(reading.reachable()
                        ? " read-only" : " unreachable (" + reading.error() + ")");
            }
        }
        Roles next;
        if (writable.size() == 1) {
            String primary = writable.get(0);
            next = new Roles(Roles.State.PRIMARY, primary, others(primary), writable, primary.equals(now.primary())
                    ? primary + " is the one writable server" : primary + " is the one writable server (was "
                    + now.primary() + "); " + others);
        } else if (writable.isEmpty()) {
            next = new Roles(Roles.State.NO_PRIMARY, now.primary(), now.replicas(), writable,
                    "no server is writable: " + others);
        } else {
            next = new Roles(Roles.State.SPLIT_BRAIN, now.primary(), now.replicas(), writable,
                    "split brain: " + String.join(" and ", writable) + " are all writable; writes go to none");
        }
        if (next.state() == now.state() && next.primary().equals(now.primary())
                && next.writable().equals(now.writable())) {
            return now;
        }
        change(next, kind(now, next));
        return next;
    }

    private static String kind(Roles before, Roles after) {
        return switch (after.state()) {
            case PRIMARY -> after.primary().equals(before.primary()) ? "primary_writable" : "primary_changed";
            case NO_PRIMARY -> "no_primary";
            case SPLIT_BRAIN -> "split_brain";
            case SWITCHING -> "switchover_hold";
        };
    }

    /**
     * A switchover holds writes: the roles stay as they are, writes wait, readings are not followed.
     *
     * @return false, and no change, when the group has no single primary now or a switchover holds it already
     */
    public synchronized boolean hold(String why) {
        Roles now = roles;
        if (now.state() != Roles.State.PRIMARY) {
            return false;
        }
        change(new Roles(Roles.State.SWITCHING, now.primary(), now.replicas(), now.writable(), why),
                "switchover_hold");
        return true;
    }

    /**
     * A switchover ends: {@code primary} takes writes (the old one when it was abandoned), and readings are followed
     * again.
     */
    public synchronized void release(String primary, String why) {
        if (!servers.contains(primary)) {
            throw new IllegalArgumentException("primary: " + primary + " (expected: one of " + servers + ")");
        }
        Roles now = roles;
        change(new Roles(Roles.State.PRIMARY, primary, others(primary), List.of(primary), why),
                primary.equals(now.primary()) ? "switchover_released" : "primary_changed");
    }

    /**
     * The primary {@code server} refused a write as read-only (ERR 1290): it was fenced or demoted by an outside tool
     * or another Sluice instance since the last round. Writes wait for the next round rather than go to it again; a
     * no-op unless it is still taken for the primary of a group that follows its servers.
     */
    public synchronized void refusedWrites(String server) {
        Roles now = roles;
        if (follows && now.state() == Roles.State.PRIMARY && now.primary().equals(server)) {
            change(new Roles(Roles.State.NO_PRIMARY, now.primary(), now.replicas(), List.of(), server
                    + " refused a write as read-only: writes wait for the next round"), "no_primary");
        }
    }

    /**
     * Keeps {@code server} out of the group after an unplanned failover: never the primary, whatever its
     * {@code read_only}, until {@link #rejoined}. The old primary, which may come back with writes no replica has.
     */
    public synchronized void fence(String server, String why) {
        if (servers.contains(server) && fenced.add(server)) {
            record("fenced", server + ": " + why);
        }
    }

    /** Takes {@code server} back into the group (an operator's rejoin); false when it was not fenced. */
    public synchronized boolean rejoined(String server, String why) {
        boolean was = fenced.remove(server);
        if (was) {
            record("rejoined", server + ": " + why);
        }
        return was;
    }

    /** Whether {@code server} is fenced; one lookup in a small copy-on-write set. */
    public boolean isFenced(String server) {
        return fenced.contains(server);
    }

    /** The fenced servers, in configuration order. */
    public List<String> fenced() {
        return servers.stream().filter(fenced::contains).toList();
    }

    /** An unplanned failover ended: {@code promoted} a replica or not (yielded, refused, failed), in {@code millis}. */
    public synchronized void failoverEnded(boolean promoted, long millis) {
        if (promoted) {
            failovers++;
            lastFailoverMillis = millis;
        } else {
            failoversNotDone++;
        }
    }

    /** Unplanned failovers that promoted ({@code true}) or that began and did not, since start. */
    public synchronized long failovers(boolean promoted) {
        return promoted ? failovers : failoversNotDone;
    }

    /** How long the last failover that promoted took, from the primary declared gone to writes released; -1 before. */
    public synchronized long lastFailoverMillis() {
        return lastFailoverMillis;
    }

    /** Adds an event to the history without changing the roles: a switchover step, a refusal. */
    public synchronized void record(String kind, String detail) {
        events.addLast(new TopologyEvent(clock.instant(), kind, roles == null ? "" : roles.primary(), detail));
        while (events.size() > HISTORY) {
            events.removeFirst();
        }
    }

    /** The history, oldest first, at most {@link #HISTORY} events. */
    public synchronized List<TopologyEvent> events() {
        return List.copyOf(events);
    }

    /** How many times the primary changed to another server since start. */
    public synchronized long primaryChanges() {
        return primaryChanges;
    }

    /**
     * A switchover that held writes ended: {@code switched} or not (abandoned, rolled back), after holding them
     * {@code heldMillis}.
     */
    public synchronized void switchoverEnded(boolean switched, long heldMillis) {
        if (switched) {
            switchovers++;
        } else {
            switchoversNotDone++;
        }
        lastWritesHeldMillis = heldMillis;
    }

    /** Switchovers that switched ({@code true}) or that held writes and did not, since start. */
    public synchronized long switchovers(boolean switched) {
        return switched ? switchovers : switchoversNotDone;
    }

    /** How long the last switchover held writes, in milliseconds; -1 before any. */
    public synchronized long lastWritesHeldMillis() {
        return lastWritesHeldMillis;
    }

    /** How many times a split brain began since start. */
    public synchronized long splitBrains() {
        return splitBrains;
    }

    private void change(Roles next, String kind) {
        Roles before = roles;
        if (!next.primary().equals(before.primary())) {
            primaryChanges++;
        }
        if (next.state() == Roles.State.SPLIT_BRAIN && before.state() != Roles.State.SPLIT_BRAIN) {
            splitBrains++;
        }
        roles = next;
        version++;
        record(kind, next.detail());
        for (Consumer<Roles> listener : listeners) {
            listener.accept(next);
        }
    }

    private List<String> others(String primary) {
        return servers.stream().filter(s -> !s.equals(primary)).toList();
    }

    private static ReplicationReading find(List<ReplicationReading> readings, String server) {
        for (ReplicationReading reading : readings) {
            if (reading.server().equals(server)) {
                return reading;
            }
        }
        return null;
    }
}
