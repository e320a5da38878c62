package io.sluice;

import io.sluice.backend.pool.BackendPool;
import io.sluice.balancer.replication.PromotionStatements;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.balancer.replication.Roles;
import io.sluice.balancer.replication.Topology;
import io.sluice.config.AutoFailover;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.JdbcUrl;
import io.sluice.config.ServerAccount;
import io.sluice.routing.ReadWriteGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides, after each replica-watch round of a group with {@code autoFailover: true}, whether its primary is gone
 * (decision 175), and keeps fenced servers read-only (decision 177):
 *
 * <ul>
 *   <li>the primary is declared gone when the group has no writable server, Sluice could not read the last primary
 *       for {@code failoverAfterChecks} rounds in a row, and every replica Sluice reaches (one at least) says its IO
 *       thread is not connected ({@code Slave_IO_Running} not {@code Yes}: {@code Connecting}, an IO error). One
 *       observer's view is not enough: a replica still connected to the primary means the primary lives and only
 *       Sluice's path to it is broken. Only replicas of that primary agree, by their status's source
 *       ({@code Master_Host}/{@code Source_Host} and port against the data source's URL, decision 185): one that
 *       cannot reach another source says nothing about it; one connected to any source still holds it back (that
 *       source may be the primary under another address). Then a {@link FailoverRun} runs on a thread of its own;</li>
 *   <li>once another server is the primary, the previous one is fenced if it was declared gone or does not answer,
 *       whoever promoted: this instance, another one (which may have promoted before this one declared anything)
 *       or an outside tool;</li>
 *   <li>a fenced server seen writable (the old primary restarted) is made read-only again at once; one seen
 *       read-only and replicating again was rejoined (here or through another instance) and is taken back.</li>
 * </ul>
 *
 * Rounds run one at a time on the health-check loop; this only reads and counts there.
 */
final class FailoverWatch {
    private static final Logger log = LoggerFactory.getLogger(FailoverWatch.class);

    private final ReadWriteGroup group;
    private final Topology topology;
    private final Function<String, BackendPool> pools;
    private final Map<String, DataSourceConfig> dataSources;
    private final long readTimeoutMillis;
    private final AutoFailover settings;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicBoolean fencing = new AtomicBoolean();
    private int missed;
    private String declaredGone;
    /** The primary of the last round that had one that took writes. */
    private String lastPrimary;
    private String lastHeldBack = "";

    FailoverWatch(ReadWriteGroup group, Function<String, BackendPool> pools, Map<String, DataSourceConfig> dataSources,
            long readTimeoutMillis) {
        this.group = group;
        this.topology = group.topology();
        this.pools = pools;
        this.dataSources = dataSources;
        this.readTimeoutMillis = readTimeoutMillis;
        this.settings = group.config().autoFailover();
    }

    /** One round's readings and the roles they led to. */
    void afterRound(List<ReplicationReading> readings, Roles roles) {
        keepFenced(readings);
        if (roles.takesWrites()) {
            // Another server took over from one that is gone: this instance's failover, another instance's (which
            // may have promoted before this one declared anything) or an outside tool's. The old one is fenced.
            String before = lastPrimary;
            ReplicationReading old = before == null ? null : find(readings, before);
            if (before != null && !before.equals(roles.primary())
                    && (before.equals(declaredGone) || old != null && !old.reachable())) {
                topology.fence(before, "unreachable when " + roles.primary() + " took over as the primary");
            }
            declaredGone = null;
            lastPrimary = roles.primary();
        }
        ReplicationReading primary = find(readings, roles.primary());
        if (roles.state() != Roles.State.NO_PRIMARY || primary == null || primary.reachable()
                || topology.isFenced(roles.primary())) {
            missed = 0;
            lastHeldBack = "";
            return;
        }
        missed++;
        if (missed < settings.afterChecks() || running.get() || settings.dryRun() && declaredGone != null) {
            return; // a dry run plans once per outage
        }
        List<String> connected = new ArrayList<>();
        List<String> elsewhere = new ArrayList<>();
        int replicas = 0;
        JdbcUrl lost = address(roles.primary());
        for (ReplicationReading reading : readings) {
            if (reading.server().equals(roles.primary()) || !reading.reachable() || !reading.replica()
                    || topology.isFenced(reading.server())) {
                continue;
            }
            boolean ours = lost != null && reading.replicatesFrom(lost.host(), lost.port());
            if (reading.ioRunning()) {
                // Connected, to the primary or to an address that may be the primary's under another name: alive.
                connected.add(ours ? reading.server() : reading.server() + " (from " + reading.source() + ")");
            } else if (ours) {
                replicas++;
            } else {
                // Its IO thread cannot reach another source: that says nothing of the lost primary.
                elsewhere.add(reading.server() + " (from " + reading.source() + ")");
            }
        }
        if (replicas == 0 || !connected.isEmpty()) {
            heldBack(!connected.isEmpty() ? String.join(", ", connected) + " still receive(s) from "
                    + roles.primary() + ": it is alive and only Sluice cannot reach it"
                    : "no replica of " + roles.primary() + (lost == null ? "" : " (" + lost.host() + ":" + lost.port()
                    + ")") + " answers: the primary's loss cannot be confirmed" + (elsewhere.isEmpty() ? ""
                    : "; " + String.join(", ", elsewhere) + " replicate(s) from elsewhere"));
            return;
        }
        declaredGone = roles.primary();
        String gone = declaredGone;
        topology.record("failover_begin", gone + " unreachable for " + missed + " checks and no replica's IO thread"
                + " is connected to it: declared gone");
        log.warn("read/write group {}: primary {} declared gone ({} checks, the replicas agree): failing over",
                group.name(), gone, missed);
        running.set(true);
        missed = 0; // one that promotes nothing (yields, fails) is tried again after as many rounds, not every round
        Thread thread = new Thread(() -> {
            try {
                new FailoverRun(group, pools, dataSources, readTimeoutMillis, gone, settings.dryRun()).run();
            } finally {
                running.set(false);
            }
        }, "sluice-failover-" + group.name());
        thread.setDaemon(true);
        thread.start();
    }

    private void heldBack(String why) {
        if (!why.equals(lastHeldBack)) { // once per cause, not every round
            lastHeldBack = why;
            topology.record("failover_held_back", why);
            log.warn("read/write group {}: no failover: {}", group.name(), why);
        }
    }

    /** Fenced servers that are writable made read-only; fenced ones that replicate again taken back. */
    private void keepFenced(List<ReplicationReading> readings) {
        for (String server : topology.fenced()) {
            ReplicationReading reading = find(readings, server);
            if (reading == null || !reading.reachable()) {
                continue;
            }
            if (!reading.readOnly()) {
                fence(server, PromotionStatements.of(reading));
            } else if (reading.replica() && reading.ioRunning() && reading.sqlRunning()) {
                topology.rejoined(server, "read-only and replicating again");
            }
        }
    }

    private void fence(String server, PromotionStatements statements) {
        ServerAccount admin = group.config().administration();
        BackendPool pool = pools.apply(server);
        if (pool == null || !fencing.compareAndSet(false, true)) {
            return;
        }
        String readOnly = statements.fence().get(0);
        pool.ownConnections().runAs(admin.username(), admin.password(), List.of(readOnly), readTimeoutMillis).whenComplete((r, e) -> {
            fencing.set(false);
            String outcome = e == null ? "made read-only (" + readOnly + ")" : "could not be made read-only: "
                    + (e.getCause() != null ? e.getCause().getMessage() : e.getMessage());
            topology.record("fenced", server + " came back writable and " + outcome);
            log.warn("read/write group {}: fenced server {} came back writable and {}", group.name(), server,
                    outcome);
        });
    }

    /** The address a data source's URL names, which its replicas name as their source; {@code null} if none. */
    private JdbcUrl address(String server) {
        DataSourceConfig dataSource = dataSources.get(server);
        return dataSource == null ? null : JdbcUrl.parse(dataSource.url());
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
