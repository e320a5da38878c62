package io.sluice.balancer.replication;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Which servers of a read/write split group may take reads now, and why the others may not: a pure decision over
 * each server's last {@link ReplicationReading}, the primary's position, and the group's lag threshold. The health
 * check runs it after each round; the routing then only picks among {@link Judgement#usable()} replicas, and with
 * none sends reads to the primary.
 *
 * <p>A replica is refused, in this order, when it did not answer; when it is writable or has no replica status (the
 * wrong role: a primary, or a server someone promoted); when replication is stopped (IO or SQL thread); when its
 * {@code Seconds_Behind_Master} is above the threshold; or when it lacks more than {@code maxTransactionsBehind}
 * of the transactions in the primary's position.
 */
public final class ReplicaEligibility {

    /** Why a server may or may not take reads. */
    public enum Verdict {
        USABLE,
        /** The check could not connect or log in, or a query failed. */
        UNREACHABLE,
        /** A replica with {@code read_only} off. */
        WRITABLE,
        /** A read data source with no replica status. */
        NOT_A_REPLICA,
        /** The write data source with {@code read_only} on. */
        READ_ONLY,
        IO_STOPPED,
        SQL_STOPPED,
        /** Behind by more seconds, or transactions, than the threshold. */
        LAGGING,
        /**
         * Replicates from another server of the group that is not the primary and not a replica of it (the old
         * primary, during a switchover): the primary's writes do not reach it.
         */
        OTHER_SOURCE;

        /** The metrics and admin label: {@code sql_stopped}. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * The verdict on one replica.
     *
     * @param server the data source's name
     * @param verdict whether it may take reads, or why not
     * @param secondsBehind the replica's own report, -1 when it has none
     * @param transactionsBehind how many of the primary's transactions it has not applied, -1 when unknown
     * @param detail a sentence for logs and the admin API
     */
    public record Judgement(String server, Verdict verdict, long secondsBehind, long transactionsBehind,
            String detail) {

        public boolean usable() {
            return verdict == Verdict.USABLE;
        }
    }

    private final Duration maxLag;
    private final long maxTransactionsBehind;

    /**
     * @param maxLag the largest {@code Seconds_Behind_Master} a replica may report and still take reads
     * @param maxTransactionsBehind how many of the primary's transactions a replica may lack and still take reads;
     *     {@code Long.MAX_VALUE} to judge by seconds only
     */
    public ReplicaEligibility(Duration maxLag, long maxTransactionsBehind) {
        if (maxLag.isNegative()) {
            throw new IllegalArgumentException("maxLag: " + maxLag + " (expected: 0 or more)");
        }
        if (maxTransactionsBehind < 0) {
            throw new IllegalArgumentException("maxTransactionsBehind: " + maxTransactionsBehind
                    + " (expected: 0 or more)");
        }
        this.maxLag = maxLag;
        this.maxTransactionsBehind = maxTransactionsBehind;
    }

    /** Judges each replica against {@code primaryPosition} (empty when the primary is unknown or unreachable). */
    public List<Judgement> judge(List<ReplicationReading> replicas, GtidPosition primaryPosition) {
        List<Judgement> judgements = new ArrayList<>(replicas.size());
        for (ReplicationReading replica : replicas) {
            judgements.add(judge(replica, primaryPosition));
        }
        return judgements;
    }

    /** Judges one replica. */
    public Judgement judge(ReplicationReading replica, GtidPosition primaryPosition) {
        String server = replica.server();
        if (!replica.reachable()) {
            return new Judgement(server, Verdict.UNREACHABLE, -1, -1, "did not answer: " + replica.error());
        }
        if (!replica.replica()) {
            return new Judgement(server, Verdict.NOT_A_REPLICA, -1, -1,
                    "has no replica status: it replicates from nothing");
        }
        long behind = primaryPosition.isEmpty() ? -1 : replica.applied().transactionsBehind(primaryPosition);
        long seconds = replica.secondsBehind();
        if (!replica.readOnly()) {
            return new Judgement(server, Verdict.WRITABLE, seconds, behind,
                    "read_only is off: a replica that takes writes would drift from the primary");
        }
        if (!replica.ioRunning()) {
            return new Judgement(server, Verdict.IO_STOPPED, seconds, behind, "replication IO thread stopped"
                    + (replica.error().isEmpty() ? "" : ": " + replica.error()));
        }
        if (!replica.sqlRunning()) {
            return new Judgement(server, Verdict.SQL_STOPPED, seconds, behind, "replication SQL thread stopped"
                    + (replica.error().isEmpty() ? "" : ": " + replica.error()));
        }
        if (seconds > maxLag.toSeconds()) {
            return new Judgement(server, Verdict.LAGGING, seconds, behind,
                    seconds + " s behind the primary (at most " + maxLag.toSeconds() + " s)");
        }
        if (behind > maxTransactionsBehind) {
            return new Judgement(server, Verdict.LAGGING, seconds, behind, behind
                    + " transactions behind the primary (at most " + maxTransactionsBehind + ")");
        }
        return new Judgement(server, Verdict.USABLE, seconds, behind, "ok");
    }

    /**
     * Whether the primary may take writes: it answers, is writable and is no replica. A read-only primary is the
     * wrong role (a switchover half done, or the wrong server in the config): writes would fail there.
     */
    public static Judgement judgePrimary(ReplicationReading primary) {
        if (!primary.reachable()) {
            return new Judgement(primary.server(), Verdict.UNREACHABLE, -1, -1, "did not answer: " + primary.error());
        }
        if (primary.readOnly()) {
            return new Judgement(primary.server(), Verdict.READ_ONLY, -1, -1,
                    "read_only is on: the write data source cannot take writes");
        }
        return new Judgement(primary.server(), Verdict.USABLE, -1, 0, "ok");
    }
}
