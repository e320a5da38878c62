package io.sluice;

import io.sluice.api.SwitchoverReport;
import io.sluice.backend.pool.BackendPool;
import io.sluice.balancer.replication.PromotionStatements;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.balancer.replication.Roles;
import io.sluice.balancer.replication.Topology;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.JdbcUrl;
import io.sluice.config.ServerAccount;
import io.sluice.routing.ReadWriteGroup;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One planned switchover of a read/write split group's primary (issue #40 item 2), run by Sluice with the group's
 * {@code administration} account, on the calling thread (the admin API's):
 *
 * <ol>
 *   <li>checks: every server read; the primary writable, the candidate read-only and replicating (a dry run stops
 *       here, with the plan);</li>
 *   <li>holds statements that need the primary ({@link Topology#hold}: they wait as while a group has no primary;
 *       reads go on from the replicas);</li>
 *   <li>waits until no connection of the old primary is lent (open write transactions finish), up to the timeout:
 *       past it the switchover is abandoned and everything released, unless forced;</li>
 *   <li>fences the old primary (read-only) and reads its last position;</li>
 *   <li>waits until the candidate applied that position, then promotes it (replication reset, writable);</li>
 *   <li>releases the held statements to the new primary;</li>
 *   <li>points every other server, the old primary last, at the new primary by GTID.</li>
 * </ol>
 *
 * A step that fails before the promotion rolls back (the old primary writable again, statements released to it); one
 * that fails after says what is left to do by hand. Each step is logged with its duration and kept in the group's
 * event history.
 */
final class SwitchoverRun {
    private static final Logger log = LoggerFactory.getLogger(SwitchoverRun.class);
    /** How long a poll waits between two looks at the old primary's lent connections. */
    private static final long POLL_MILLIS = 2;

    private final ReadWriteGroup group;
    private final Topology topology;
    private final Function<String, BackendPool> pools;
    private final Map<String, DataSourceConfig> dataSources;
    private final long readTimeoutMillis;
    private final List<String> checks = new ArrayList<>();
    private final List<String> plan = new ArrayList<>();
    private final List<SwitchoverReport.Step> steps = new ArrayList<>();
    private String from = "";
    private String to = "";
    private long heldAt;

    SwitchoverRun(ReadWriteGroup group, Function<String, BackendPool> pools, Map<String, DataSourceConfig> dataSources,
            long readTimeoutMillis) {
        this.group = group;
        this.topology = group.topology();
        this.pools = pools;
        this.dataSources = dataSources;
        this.readTimeoutMillis = readTimeoutMillis;
    }

    /**
     * Runs it.
     *
     * @param candidate the server to promote, or {@code null}: the usable replica with the most applied
     * @param dryRun only check and plan
     * @param force go on when write transactions are still open after {@code timeoutMillis}
     * @param timeoutMillis how long open write transactions may take, and then the candidate's catching up
     */
    SwitchoverReport run(String candidate, boolean dryRun, boolean force, long timeoutMillis) {
        ServerAccount admin = group.config().administration();
        Roles roles = group.roles();
        from = roles.primary();
        if (admin == null) {
            return refused(dryRun, "the group has no administration account (administration: {username, password})");
        }
        if (!roles.takesWrites()) {
            return refused(dryRun, "the group has no primary that takes writes now: " + roles.state().label() + " ("
                    + roles.detail() + ")");
        }
        List<ReplicationReading> readings = readAll();
        ReplicationReading primary = reading(readings, from);
        check(primary.reachable() && !primary.readOnly(), "primary " + from + " answers and is writable");
        ReplicationReading chosen = candidate != null ? reading(readings, candidate) : best(readings, primary);
        if (chosen == null) {
            return refused(dryRun, candidate != null ? "no server " + candidate + " in the group (expected: one of "
                    + topology.servers() + ")" : "no replica can be promoted: none answers, read-only and replicating");
        }
        to = chosen.server();
        check(!to.equals(from), "candidate " + to + " is not the primary already");
        check(chosen.reachable() && chosen.readOnly(), "candidate " + to + " answers and is read-only");
        check(chosen.replica() && chosen.ioRunning() && chosen.sqlRunning(), "candidate " + to
                + " replicates (IO and SQL threads run)" + (chosen.error().isEmpty() ? "" : ": " + chosen.error()));
        check(!primary.reachable() || PromotionStatements.of(primary) == PromotionStatements.of(chosen),
                "primary and candidate are the same server flavour");
        if (primary.reachable() && chosen.reachable()) {
            checks.add("info: candidate " + to + " is " + chosen.applied().transactionsBehind(primary.applied())
                    + " transaction(s) behind the primary");
        }
        PromotionStatements statements = PromotionStatements.of(chosen.reachable() ? chosen : primary);
        ServerAccount replication = group.config().replicationAccount();
        JdbcUrl target = JdbcUrl.parse(dataSources.get(to).url());
        plan(from, statements.fence());
        plan(to, List.of(statements.awaitApplied("<position of " + from + ">", seconds(timeoutMillis))));
        plan(to, statements.promote());
        List<String> others = new ArrayList<>(topology.servers());
        others.remove(to);
        others.remove(from);
        others.add(from); // the old primary last
        for (String other : others) {
            List<String> repoint = new ArrayList<>(other.equals(from) ? statements.demotedPrimaryFirst() : List.of());
            repoint.addAll(statements.replicateFrom(target.host(), target.port(), replication.username(),
                    replication.password()));
            plan(other, repoint);
        }
        if (checks.stream().anyMatch(c -> c.startsWith("FAILED"))) {
            return report(dryRun, false, "a check failed: nothing was changed");
        }
        if (dryRun) {
            return report(true, false, "");
        }
        return switchOver(admin, replication, statements, target, others, force, timeoutMillis);
    }

    private SwitchoverReport switchOver(ServerAccount admin, ServerAccount replication,
            PromotionStatements statements, JdbcUrl target, List<String> others, boolean force, long timeoutMillis) {
        long start = System.nanoTime();
        if (!topology.hold("switchover from " + from + " to " + to)) {
            return report(false, false, "the group's roles changed, or another switchover runs: "
                    + group.roles().detail());
        }
        heldAt = start;
        step("hold writes", "", start, "ok");
        log.info("read/write group {}: switchover from {} to {}: writes held", group.name(), from, to);

        long waitStart = System.nanoTime();
        int open = awaitTransactions(timeoutMillis);
        if (open > 0 && !force) {
            step("wait for open transactions", from, waitStart, open + " still open");
            topology.release(from, "switchover abandoned: " + open + " connection(s) of " + from + " still lent after "
                    + timeoutMillis + " ms");
            topology.switchoverEnded(false, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - heldAt));
            return report(false, false, "abandoned: " + open + " write transaction(s) still open on " + from
                    + " after " + timeoutMillis + " ms; writes released to " + from + " (--force to go on anyway)");
        }
        step("wait for open transactions", from, waitStart, open > 0 ? "forced with " + open + " open" : "ok");

        long fenceStart = System.nanoTime();
        String position;
        try {
            List<Map<String, String>>[] fenced = run(from, admin, statements.fence());
            position = firstValue(fenced[fenced.length - 1]);
            step("fence primary (read-only), position " + position, from, fenceStart, "ok");
        } catch (RuntimeException e) {
            step("fence primary", from, fenceStart, failure(e));
            return rollBack(admin, statements, "fencing " + from + " failed: " + failure(e));
        }

        long waitApplied = System.nanoTime();
        try {
            String answer = firstValue(run(to, admin, List.of(statements.awaitApplied(position,
                    seconds(timeoutMillis))))[0]);
            if (!PromotionStatements.applied(answer)) {
                step("wait until the candidate applied " + position, to, waitApplied, "timed out (" + answer + ")");
                return rollBack(admin, statements, to + " did not apply " + position + " within "
                        + seconds(timeoutMillis) + " s");
            }
            step("wait until the candidate applied " + position, to, waitApplied, "ok");
        } catch (RuntimeException e) {
            step("wait until the candidate applied " + position, to, waitApplied, failure(e));
            return rollBack(admin, statements, "waiting on " + to + " failed: " + failure(e));
        }

        long promoteStart = System.nanoTime();
        try {
            run(to, admin, statements.promote());
            step("promote candidate", to, promoteStart, "ok");
        } catch (RuntimeException e) {
            step("promote candidate", to, promoteStart, failure(e));
            SwitchoverReport back = rollBack(admin, statements, "promoting " + to + " failed: " + failure(e)
                    + "; its replication may be stopped or reset: check it and point it at " + from + " again");
            // MySQL: read_only alone lets CONNECTION_ADMIN and SUPER accounts write; fence() says super_read_only.
            bestEffort(to, admin, List.of(statements.fence().get(0)));
            return back;
        }

        long releaseStart = System.nanoTime();
        topology.release(to, "switchover from " + from + ": " + to + " applied " + position + " and was promoted");
        long held = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - heldAt);
        topology.switchoverEnded(true, held);
        step("release writes to the new primary", to, releaseStart, "ok");
        log.info("read/write group {}: switchover: {} is the primary; writes were held {} ms", group.name(), to, held);

        List<String> leftToDo = new ArrayList<>();
        for (String other : others) {
            List<String> repoint = new ArrayList<>(other.equals(from) ? statements.demotedPrimaryFirst() : List.of());
            repoint.addAll(statements.replicateFrom(target.host(), target.port(), replication.username(),
                    replication.password()));
            long repointStart = System.nanoTime();
            try {
                run(other, admin, repoint);
                step("replicate from " + to, other, repointStart, "ok");
            } catch (RuntimeException e) {
                step("replicate from " + to, other, repointStart, failure(e));
                leftToDo.add(other + " (" + failure(e) + ")");
            }
        }
        SwitchoverReport done = new SwitchoverReport(group.name(), from, to, false, true, checks, plan, steps,
                leftToDo.isEmpty() ? "" : "switched, but not repointed: " + String.join(", ", leftToDo)
                        + "; point them at " + to + " by hand", held);
        log.info("read/write group {}: switchover from {} to {} done in {} ms{}", group.name(), from, to,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start), done.error().isEmpty() ? "" : ": "
                        + done.error());
        return done;
    }

    /** Lent connections of the old primary, polled until none twice in a row or the timeout; what was left. */
    private int awaitTransactions(long timeoutMillis) {
        BackendPool pool = pools.apply(from);
        if (pool == null) {
            return 0;
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        int quiet = 0;
        int lent;
        do {
            lent = Math.max(0, pool.openConnections() - pool.idleConnections());
            quiet = lent == 0 ? quiet + 1 : 0;
            if (quiet >= 2) {
                return 0;
            }
            sleep(POLL_MILLIS);
        } while (System.nanoTime() < deadline);
        return lent;
    }

    /** Before the promotion: the old primary writable again, the held statements released to it. */
    private SwitchoverReport rollBack(ServerAccount admin, PromotionStatements statements, String why) {
        long start = System.nanoTime();
        String outcome = bestEffort(from, admin, List.of(statements.unfence()));
        if (statements == PromotionStatements.MYSQL && outcome.equals("ok")) {
            outcome = bestEffort(from, admin, List.of("SET GLOBAL read_only = OFF"));
        }
        step("roll back: primary writable again", from, start, outcome);
        topology.release(from, "switchover rolled back: " + why);
        long held = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - heldAt);
        topology.switchoverEnded(false, held);
        log.warn("read/write group {}: switchover from {} to {} rolled back: {}", group.name(), from, to, why);
        return new SwitchoverReport(group.name(), from, to, false, false, checks, plan, steps, "rolled back: " + why
                + (outcome.equals("ok") ? "" : "; could not make " + from + " writable again (" + outcome + ")"),
                held);
    }

    private String bestEffort(String server, ServerAccount admin, List<String> sql) {
        try {
            run(server, admin, sql);
            return "ok";
        } catch (RuntimeException e) {
            return failure(e);
        }
    }

    private List<Map<String, String>>[] run(String server, ServerAccount admin, List<String> sql) {
        BackendPool pool = pools.apply(server);
        if (pool == null) {
            throw new IllegalStateException("no data source " + server);
        }
        try {
            return pool.ownConnections().runAs(admin.username(), admin.password(), sql, readTimeoutMillis
                    + TimeUnit.SECONDS.toMillis(maxWaitSeconds(sql))).join();
        } catch (CompletionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : e;
        }
    }

    /** The longest wait a statement asks the server for ({@code MASTER_GTID_WAIT(..., seconds)}), 0 for none. */
    private static long maxWaitSeconds(List<String> sql) {
        long most = 0;
        for (String each : sql) {
            if (each.contains("_WAIT(") || each.contains("WAIT_FOR_")) {
                String seconds = each.substring(each.lastIndexOf(',') + 1, each.lastIndexOf(')')).strip();
                most = Math.max(most, Long.parseLong(seconds));
            }
        }
        return most;
    }

    private List<ReplicationReading> readAll() {
        return GroupReadings.readAll(topology, pools, readTimeoutMillis);
    }

    private static ReplicationReading reading(List<ReplicationReading> readings, String server) {
        return readings.stream().filter(r -> r.server().equals(server)).findFirst().orElse(null);
    }

    /** The replica that answers, is read-only, replicates and has applied the most; the first listed on a tie. */
    private static ReplicationReading best(List<ReplicationReading> readings, ReplicationReading primary) {
        ReplicationReading best = null;
        long bestBehind = Long.MAX_VALUE;
        for (ReplicationReading each : readings) {
            if (each.server().equals(primary.server()) || !each.reachable() || !each.readOnly() || !each.replica()
                    || !each.sqlRunning()) {
                continue;
            }
            long behind = primary.reachable() ? each.applied().transactionsBehind(primary.applied()) : 0;
            if (behind < bestBehind) {
                best = each;
                bestBehind = behind;
            }
        }
        return best;
    }

    private void check(boolean ok, String what) {
        checks.add((ok ? "ok: " : "FAILED: ") + what);
    }

    private void plan(String server, List<String> sql) {
        for (String each : sql) {
            plan.add(server + ": " + PromotionStatements.masked(each));
        }
    }

    private void step(String name, String server, long startNanos, String outcome) {
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
        steps.add(new SwitchoverReport.Step(name, server, millis, outcome));
        topology.record("switchover_step", name + (server.isEmpty() ? "" : " on " + server) + ": " + outcome + " ("
                + millis + " ms)");
        log.info("read/write group {}: switchover step: {}{}: {} ({} ms)", group.name(), name,
                server.isEmpty() ? "" : " on " + server, outcome, millis);
    }

    private SwitchoverReport refused(boolean dryRun, String why) {
        checks.add("FAILED: " + why);
        return report(dryRun, false, why);
    }

    private SwitchoverReport report(boolean dryRun, boolean switched, String error) {
        if (!dryRun && !error.isEmpty()) {
            topology.record("switchover_refused", error);
        }
        return new SwitchoverReport(group.name(), from, to, dryRun, switched, checks, plan, steps, error, -1);
    }

    private static String firstValue(List<Map<String, String>> rows) {
        return rows == null || rows.isEmpty() ? "" : String.valueOf(rows.get(0).values().iterator().next());
    }

    private static long seconds(long millis) {
        return Math.max(1, TimeUnit.MILLISECONDS.toSeconds(millis + 999));
    }

    private static String failure(RuntimeException e) {
        // A server's refusal (a checked BackendException) arrives wrapped: its own message says what was refused.
        Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
        return cause.getMessage() == null ? cause.toString() : cause.getMessage();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
