package io.sluice;

import io.sluice.backend.pool.AdministrationSession;
import io.sluice.backend.pool.BackendPool;
import io.sluice.balancer.replication.GtidPosition;
import io.sluice.balancer.replication.PromotionStatements;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.balancer.replication.Topology;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.JdbcUrl;
import io.sluice.config.ServerAccount;
import io.sluice.routing.ReadWriteGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One unplanned failover of a read/write split group whose primary was declared gone ({@link FailoverWatch}; issue #40
 * item 3, decisions 175-177), on a thread of its own, with the group's {@code administration} account:
 *
 * <ol>
 *   <li>each reachable replica applies what its IO thread received ({@code MASTER_GTID_WAIT} on its received
 *       position, up to {@code failoverApplyTimeoutMilliseconds});</li>
 *   <li>the candidate: the replica that applied the most, the first in configuration order on a tie;</li>
 *   <li>agreement between instances: a named lock ({@code GET_LOCK}, no wait) on every reachable replica, in
 *       configuration order, each on a connection kept open; an instance that cannot take one yields (another is
 *       failing over);</li>
 *   <li>with the locks held, the servers read again: the old primary still unreachable, no server writable, the
 *       candidate still read-only; else it yields (another instance or an outside tool promoted already);</li>
 *   <li>the old primary fenced ({@link Topology#fence}), the candidate promoted, writes released to it;</li>
 *   <li>the other replicas pointed at it by GTID; the locks released.</li>
 * </ol>
 *
 * An instance that yields changes nothing on the servers: it follows the promotion by discovery, and its
 * {@link FailoverWatch} fences the old primary once another server is the primary.
 */
final class FailoverRun {
    private static final Logger log = LoggerFactory.getLogger(FailoverRun.class);
    /** MariaDB and MySQL take lock names of up to 64 characters. */
    private static final int LOCK_NAME_LIMIT = 64;

    private final ReadWriteGroup group;
    private final Topology topology;
    private final Function<String, BackendPool> pools;
    private final Map<String, DataSourceConfig> dataSources;
    private final long readTimeoutMillis;
    private final String gone;
    private final boolean dryRun;
    private final List<AdministrationSession> sessions = new ArrayList<>();

    FailoverRun(ReadWriteGroup group, Function<String, BackendPool> pools, Map<String, DataSourceConfig> dataSources,
            long readTimeoutMillis, String gone, boolean dryRun) {
        this.dryRun = dryRun;
        this.group = group;
        this.topology = group.topology();
        this.pools = pools;
        this.dataSources = dataSources;
        this.readTimeoutMillis = readTimeoutMillis;
        this.gone = gone;
    }

    /** The named lock every instance takes on the replicas before it promotes one of this group's servers. */
    static String lockName(String group) {
        String name = "sluice_failover." + group;
        return name.length() <= LOCK_NAME_LIMIT ? name : name.substring(0, LOCK_NAME_LIMIT);
    }

    /**
     * Runs it; blocks until done.
     *
     * @return the server promoted, or {@code null} when this instance promoted none (it yielded or failed)
     */
    String run() {
        long start = System.nanoTime();
        ServerAccount admin = group.config().administration();
        long applyMillis = group.config().autoFailover().applyTimeout().toMillis();
        try {
            // 1. Each replica applies what it received from the old primary.
            List<ReplicationReading> readings = readAll();
            List<CompletableFuture<String>> applying = new ArrayList<>();
            for (ReplicationReading replica : replicas(readings)) {
                applying.add(applyReceived(replica, admin, applyMillis));
            }
            for (CompletableFuture<String> each : applying) {
                step("apply relay log", each.join());
            }
            // 2. The most advanced replica.
            readings = readAll();
            String refusal = stillGone(readings, null);
            if (refusal != null) {
                return yielded(start, refusal);
            }
            ReplicationReading candidate = mostAdvanced(replicas(readings));
            if (candidate == null) {
                return failed(start, "no replica can be promoted: none answers, read-only and replicating");
            }
            String to = candidate.server();
            step("candidate", to + " applied " + candidate.applied());
            if (dryRun) {
                return planOnly(start, candidate, readings);
            }
            // 3. Agreement: the named lock on every reachable replica, in configuration order. The sessions stay in
            // this list's order: the candidate's promotes, the others' repoint.
            List<ReplicationReading> locked = replicas(readings);
            for (ReplicationReading replica : locked) {
                AdministrationSession session = AdministrationSession.open(pools.apply(replica.server()),
                        admin.username(), admin.password(), readTimeoutMillis).join();
                sessions.add(session);
                String answer = firstValue(session.run(List.of("SELECT GET_LOCK("
                        + quote(lockName(group.name())) + ", 0)"), readTimeoutMillis).join()[0]);
                if (!"1".equals(answer)) {
                    return yielded(start, "the failover lock on " + replica.server() + " is held: another instance"
                            + " is failing over");
                }
            }
            // 4. Again, with the locks held: nobody promoted meanwhile.
            readings = readAll();
            refusal = stillGone(readings, to);
            if (refusal != null) {
                return yielded(start, refusal);
            }
            // 5. Fence, promote, release.
            PromotionStatements statements = PromotionStatements.of(candidate);
            topology.fence(gone, "the primary was declared gone; " + to + " is promoted");
            int at = indexOf(locked, to);
            sessions.get(at).run(statements.promote(), readTimeoutMillis).join();
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            topology.release(to, "failover: " + gone + " gone; " + to + " applied " + candidate.applied()
                    + " and was promoted");
            topology.failoverEnded(true, millis);
            step("promoted", to + " takes writes, " + millis + " ms after " + gone + " was declared gone");
            // 6. The other replicas follow the new primary.
            JdbcUrl target = JdbcUrl.parse(dataSources.get(to).url());
            ServerAccount replication = group.config().replicationAccount();
            for (int i = 0; i < locked.size(); i++) {
                if (i == at) {
                    continue;
                }
                String other = locked.get(i).server();
                try {
                    sessions.get(i).run(statements.replicateFrom(target.host(), target.port(),
                            replication.username(), replication.password()), readTimeoutMillis).join();
                    step("replicate from " + to, other + ": ok");
                } catch (CompletionException e) {
                    step("replicate from " + to, other + ": " + failure(e) + "; point it at " + to + " by hand");
                }
            }
            log.warn("read/write group {}: FAILOVER: {} was gone; {} promoted in {} ms; {} is fenced until"
                    + " `sluice-ctl rejoin {} {}`", group.name(), gone, to, millis, gone, group.name(), gone);
            return to;
        } catch (CompletionException | IllegalStateException e) {
            return failed(start, failure(e));
        } finally {
            sessions.forEach(AdministrationSession::close);
        }
    }

    /** A dry run: what it would run, into the history and the log; nothing changed on the servers. */
    private String planOnly(long start, ReplicationReading candidate, List<ReplicationReading> readings) {
        PromotionStatements statements = PromotionStatements.of(candidate);
        JdbcUrl target = JdbcUrl.parse(dataSources.get(candidate.server()).url());
        ServerAccount replication = group.config().replicationAccount();
        List<String> plan = new ArrayList<>();
        for (ReplicationReading replica : replicas(readings)) {
            plan.add(replica.server() + ": SELECT GET_LOCK(" + quote(lockName(group.name())) + ", 0)");
        }
        statements.promote().forEach(sql -> plan.add(candidate.server() + ": " + sql));
        for (ReplicationReading replica : replicas(readings)) {
            if (!replica.server().equals(candidate.server())) {
                statements.replicateFrom(target.host(), target.port(), replication.username(), replication.password())
                        .forEach(sql -> plan.add(replica.server() + ": " + PromotionStatements.masked(sql)));
            }
        }
        plan.add(gone + ": fenced (kept out of the group, made read-only when it answers)");
        topology.record("failover_dry_run", "would promote " + candidate.server() + ": " + String.join("; ", plan));
        log.warn("read/write group {}: failover DRY RUN: {} is gone; would promote {}: {}", group.name(), gone,
                candidate.server(), plan);
        topology.failoverEnded(false, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        return null;
    }

    /** Why not to promote now ({@code null}: go on): the old primary answers, or a server is writable already. */
    private String stillGone(List<ReplicationReading> readings, String candidate) {
        for (ReplicationReading reading : readings) {
            if (reading.server().equals(gone) && reading.reachable()) {
                return gone + " answers again";
            }
            if (!reading.server().equals(gone) && !topology.isFenced(reading.server()) && reading.reachable()
                    && !reading.readOnly()) {
                return reading.server() + " is writable already (another instance or tool promoted it)";
            }
            if (reading.server().equals(candidate) && !reading.reachable()) {
                return "the candidate " + candidate + " does not answer any more";
            }
        }
        return null;
    }

    /**
     * The replicas that may be promoted: reachable, read-only, replicas of the lost primary (decision 185: one of
     * another source has none of its transactions to give), not fenced, in configuration order.
     */
    private List<ReplicationReading> replicas(List<ReplicationReading> readings) {
        List<ReplicationReading> replicas = new ArrayList<>();
        DataSourceConfig lost = dataSources.get(gone);
        JdbcUrl source = lost == null ? null : JdbcUrl.parse(lost.url());
        for (ReplicationReading reading : readings) {
            if (!reading.server().equals(gone) && !topology.isFenced(reading.server()) && reading.reachable()
                    && reading.readOnly() && reading.replica() && source != null
                    && reading.replicatesFrom(source.host(), source.port())) {
                replicas.add(reading);
            }
        }
        return replicas;
    }

    /**
     * The replica that lacks the fewest transactions of any other's applied position: the most advanced, the first
     * listed on a tie (the preference order).
     */
    static ReplicationReading mostAdvanced(List<ReplicationReading> replicas) {
        ReplicationReading best = null;
        long bestLacks = Long.MAX_VALUE;
        for (ReplicationReading each : replicas) {
            long lacks = 0;
            for (ReplicationReading other : replicas) {
                lacks = Math.max(lacks, each.applied().transactionsBehind(other.applied()));
            }
            if (lacks < bestLacks) {
                best = each;
                bestLacks = lacks;
            }
        }
        return best;
    }

    private CompletableFuture<String> applyReceived(ReplicationReading replica, ServerAccount admin,
            long applyMillis) {
        GtidPosition received = replica.received();
        if (received.isEmpty() || replica.applied().isAtOrPast(received)) {
            return CompletableFuture.completedFuture(replica.server() + ": applied all it received ("
                    + replica.applied() + ")");
        }
        if (!replica.sqlRunning()) {
            return CompletableFuture.completedFuture(replica.server() + ": SQL thread stopped; applied "
                    + replica.applied() + " of " + received);
        }
        long seconds = Math.max(1, TimeUnit.MILLISECONDS.toSeconds(applyMillis + 999));
        PromotionStatements statements = PromotionStatements.of(replica);
        return pools.apply(replica.server()).ownConnections().runAs(admin.username(), admin.password(),
                        List.of(statements.awaitApplied(received.toString(), seconds)),
                        readTimeoutMillis + TimeUnit.SECONDS.toMillis(seconds))
                .handle((rows, e) -> replica.server() + (e != null ? ": " + failure(e)
                        : PromotionStatements.applied(firstValue(rows[0])) ? ": applied " + received
                        : ": did not apply " + received + " within " + seconds + " s"));
    }

    private List<ReplicationReading> readAll() {
        return GroupReadings.readAll(topology, pools, readTimeoutMillis);
    }

    private static int indexOf(List<ReplicationReading> readings, String server) {
        for (int i = 0; i < readings.size(); i++) {
            if (readings.get(i).server().equals(server)) {
                return i;
            }
        }
        throw new IllegalStateException(server + " is not among the replicas any more");
    }

    private String yielded(long start, String why) {
        topology.failoverEnded(false, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        topology.record("failover_yielded", why);
        log.info("read/write group {}: failover: this instance promotes nothing: {}", group.name(), why);
        return null;
    }

    private String failed(long start, String why) {
        topology.failoverEnded(false, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
        topology.record("failover_failed", why);
        log.warn("read/write group {}: failover failed: {}", group.name(), why);
        return null;
    }

    private void step(String name, String outcome) {
        topology.record("failover_step", name + ": " + outcome);
        log.info("read/write group {}: failover step: {}: {}", group.name(), name, outcome);
    }

    private static String firstValue(List<Map<String, String>> rows) {
        return rows == null || rows.isEmpty() ? "" : String.valueOf(rows.get(0).values().iterator().next());
    }

    private static String quote(String text) {
        return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'";
    }

    private static String failure(Throwable e) {
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return cause.getMessage() == null ? cause.toString() : cause.getMessage();
    }
}
