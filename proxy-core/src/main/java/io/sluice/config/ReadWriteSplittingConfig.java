package io.sluice.config;

import io.sluice.balancer.replication.ReplicaEligibility;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * One read/write split group of config.yaml's {@code !READWRITE_SPLITTING} rule: a primary and its replicas behind
 * one logical database. A session that logs in to (or {@code USE}s) the group's {@link #name()} as a database is
 * split: writes go to the write data source, reads to a usable read data source. On each server the group's name
 * stands for the database in that data source's URL, as {@code databaseName} does in pass-through mode.
 *
 * <p>ShardingSphere 5.4's keys are read unchanged ({@code writeDataSourceName}, {@code readDataSourceNames},
 * {@code transactionalReadQueryStrategy}, {@code loadBalancerName}); Sluice's own add what ShardingSphere leaves to
 * others: the replication lag a replica may have and still take reads, and causal reads (decision 095).
 *
 * @param name the group's name: the logical database clients ask for
 * @param writeDataSourceName the primary's data source
 * @param readDataSourceNames the replicas' data sources, in file order
 * @param transactionalReadQueryStrategy where read-only transactions run
 * @param loadBalancer how reads are spread over the usable replicas
 * @param maxReplicationLag a replica whose {@code Seconds_Behind_Master} is above this takes no reads
 * @param causalReads read-your-writes (LOCAL, the default), none, or across sessions (GLOBAL)
 * @param causalReadsTimeout how long a replica may wait for a causal read's position before the read goes to the
 *     primary
 * @param primaryDiscovery how the primary is known: {@code writeDataSourceName} (NONE), or the one writable server
 *     (READ_ONLY; {@code writeDataSourceName} then names the server preferred at start), issue #40
 * @param primaryWait how long a statement that needs the primary waits while the group has none (a promotion under
 *     way, a split brain, a switchover), before it gets ERR 1290
 * @param administration the account a switchover runs its commands with, or {@code null}: no switchover
 * @param replication the account servers replicate with once a switchover repoints them, or {@code null}: the
 *     administration account
 * @param autoFailover whether and when Sluice promotes a replica itself once the primary is gone (decision 175)
 */
public record ReadWriteSplittingConfig(String name, String writeDataSourceName, List<String> readDataSourceNames,
        TransactionalReadQueryStrategy transactionalReadQueryStrategy, ReadLoadBalancer loadBalancer,
        Duration maxReplicationLag, CausalReads causalReads, Duration causalReadsTimeout,
        PrimaryDiscovery primaryDiscovery, Duration primaryWait, ServerAccount administration,
        ServerAccount replication, AutoFailover autoFailover) {

    public static final TransactionalReadQueryStrategy DEFAULT_TRANSACTIONAL_READ_QUERY_STRATEGY =
            TransactionalReadQueryStrategy.DYNAMIC;
    public static final Duration DEFAULT_MAX_REPLICATION_LAG = Duration.ofSeconds(10);
    public static final CausalReads DEFAULT_CAUSAL_READS = CausalReads.LOCAL;
    public static final Duration DEFAULT_CAUSAL_READS_TIMEOUT = Duration.ofSeconds(1);
    public static final Duration DEFAULT_PRIMARY_WAIT = Duration.ofSeconds(10);

    /** A group whose primary is its {@code writeDataSourceName}, without switchover accounts. */
    public ReadWriteSplittingConfig(String name, String writeDataSourceName, List<String> readDataSourceNames,
            TransactionalReadQueryStrategy transactionalReadQueryStrategy, ReadLoadBalancer loadBalancer,
            Duration maxReplicationLag, CausalReads causalReads, Duration causalReadsTimeout) {
        this(name, writeDataSourceName, readDataSourceNames, transactionalReadQueryStrategy, loadBalancer,
                maxReplicationLag, causalReads, causalReadsTimeout, PrimaryDiscovery.NONE, DEFAULT_PRIMARY_WAIT, null,
                null, AutoFailover.OFF);
    }

    public ReadWriteSplittingConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(transactionalReadQueryStrategy, "transactionalReadQueryStrategy");
        Objects.requireNonNull(loadBalancer, "loadBalancer");
        Objects.requireNonNull(causalReads, "causalReads");
        Objects.requireNonNull(primaryDiscovery, "primaryDiscovery");
        if (primaryWait == null || primaryWait.isNegative()) {
            throw new IllegalArgumentException("primaryWaitMilliseconds: " + primaryWait + " (expected: 0 or more)");
        }
        Objects.requireNonNull(autoFailover, "autoFailover");
        if (autoFailover.enabled() && primaryDiscovery != PrimaryDiscovery.READ_ONLY) {
            throw new IllegalArgumentException("autoFailover: true (expected: with primaryDiscovery: READ_ONLY)");
        }
        if (autoFailover.enabled() && administration == null) {
            throw new IllegalArgumentException("autoFailover: true (expected: with an administration account to"
                    + " promote with)");
        }
        if (name.isBlank()) {
            throw new IllegalArgumentException("name: empty (expected: the group's logical database name)");
        }
        if (writeDataSourceName == null || writeDataSourceName.isBlank()) {
            throw new IllegalArgumentException("writeDataSourceName: missing (expected: the primary's data source)");
        }
        readDataSourceNames = List.copyOf(readDataSourceNames);
        if (readDataSourceNames.isEmpty()) {
            throw new IllegalArgumentException("readDataSourceNames: empty (expected: at least one data source)");
        }
        Set<String> seen = new HashSet<>();
        for (String read : readDataSourceNames) {
            if (read.equals(writeDataSourceName)) {
                throw new IllegalArgumentException("readDataSourceNames: \"" + read
                        + "\" (expected: replicas only; it is the writeDataSourceName)");
            }
            if (!seen.add(read)) {
                throw new IllegalArgumentException("readDataSourceNames: \"" + read + "\" (expected: each once)");
            }
        }
        if (maxReplicationLag == null || maxReplicationLag.isNegative()) {
            throw new IllegalArgumentException("maxReplicationLagMilliseconds: " + maxReplicationLag
                    + " (expected: 0 or more)");
        }
        if (causalReadsTimeout == null || causalReadsTimeout.isNegative() || causalReadsTimeout.isZero()) {
            throw new IllegalArgumentException("causalReadsTimeoutMilliseconds: " + causalReadsTimeout
                    + " (expected: above 0)");
        }
        if (loadBalancer.type() == ReadLoadBalancer.Type.WEIGHT) {
            for (String named : loadBalancer.props().keySet()) {
                if (!readDataSourceNames.contains(named)) {
                    throw new IllegalArgumentException("loadBalancerName: \"" + loadBalancer.name() + "\" weighs \""
                            + named + "\" (expected: weights of this group's readDataSourceNames "
                            + readDataSourceNames + ")");
                }
                loadBalancer.weight(named);
            }
        }
    }

    /** A group with ShardingSphere's and Sluice's defaults: round robin, DYNAMIC, 10 s lag, LOCAL causal reads. */
    public static ReadWriteSplittingConfig of(String name, String write, List<String> reads) {
        return new ReadWriteSplittingConfig(name, write, reads, DEFAULT_TRANSACTIONAL_READ_QUERY_STRATEGY,
                ReadLoadBalancer.DEFAULT, DEFAULT_MAX_REPLICATION_LAG, DEFAULT_CAUSAL_READS,
                DEFAULT_CAUSAL_READS_TIMEOUT);
    }

    /**
     * The same group with its primary found by {@code discovery}, waited for up to {@code wait}, and switchovers run
     * with {@code administration} (and {@code replication}, or the administration account when {@code null}).
     */
    public ReadWriteSplittingConfig withTopology(PrimaryDiscovery discovery, Duration wait,
            ServerAccount administrationAccount, ServerAccount replicationAccount) {
        return new ReadWriteSplittingConfig(name, writeDataSourceName, readDataSourceNames,
                transactionalReadQueryStrategy, loadBalancer, maxReplicationLag, causalReads, causalReadsTimeout,
                discovery, wait, administrationAccount, replicationAccount, autoFailover);
    }

    /** The same group with unplanned failover set to {@code failover}. */
    public ReadWriteSplittingConfig withAutoFailover(AutoFailover failover) {
        return new ReadWriteSplittingConfig(name, writeDataSourceName, readDataSourceNames,
                transactionalReadQueryStrategy, loadBalancer, maxReplicationLag, causalReads, causalReadsTimeout,
                primaryDiscovery, primaryWait, administration, replication, failover);
    }

    /** Whether the group's primary is the one writable server rather than {@code writeDataSourceName}. */
    public boolean followsPrimary() {
        return primaryDiscovery == PrimaryDiscovery.READ_ONLY;
    }

    /** The account servers replicate with after a switchover: {@code replication}, else {@code administration}. */
    public ServerAccount replicationAccount() {
        return replication != null ? replication : administration;
    }

    /** Every data source of the group: the primary first, then the replicas. */
    public List<String> dataSourceNames() {
        List<String> all = new java.util.ArrayList<>(readDataSourceNames.size() + 1);
        all.add(writeDataSourceName);
        all.addAll(readDataSourceNames);
        return all;
    }

    /** The health decision for this group's replicas, with its lag threshold. */
    public ReplicaEligibility replicaEligibility() {
        return new ReplicaEligibility(maxReplicationLag, Long.MAX_VALUE);
    }
}
