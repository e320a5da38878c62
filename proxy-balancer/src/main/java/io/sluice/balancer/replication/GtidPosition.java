package io.sluice.balancer.replication;

/**
 * How far a server's replication stream goes: MariaDB's GTID position or MySQL's GTID set. Immutable.
 */
public sealed interface GtidPosition permits MariaDbGtidPosition, MySqlGtidSet {

    /**
     * Whether a server at this position has applied everything of {@code target}: the test a replica must pass
     * before a causal read may run on it. A position of the other flavour is never reached.
     */
    boolean isAtOrPast(GtidPosition target);

    /** How many transactions of {@code target} this position lacks (0 when at or past it); an estimate of lag. */
    long transactionsBehind(GtidPosition target);

    /** The position that has both this one's and {@code other}'s transactions. */
    GtidPosition union(GtidPosition other);

    /** Nothing applied yet (or nothing written since the session began). */
    boolean isEmpty();

    /** The text the server reads and writes, canonical: {@code 0-1-42,1-2-7} or {@code uuid:1-5:7}. */
    @Override
    String toString();

    /**
     * Parses either flavour: a MySQL GTID set when the text holds a {@code :}, else a MariaDB position.
     *
     * @throws IllegalArgumentException when the text is neither
     */
    static GtidPosition parse(String text) {
        return text.indexOf(':') >= 0 ? MySqlGtidSet.parse(text) : MariaDbGtidPosition.parse(text);
    }
}
