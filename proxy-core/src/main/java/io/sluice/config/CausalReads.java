package io.sluice.config;

/**
 * How consistent a read/write split group's reads are with writes ({@code causalReads}), as MaxScale's
 * {@code causal_reads} modes.
 */
public enum CausalReads {
    /** Reads go to any usable replica at once: a session may not see its own last write. */
    NONE,
    /**
     * Read-your-writes (the default): after a session writes, its next read runs on a replica only once that
     * replica has applied the session's last GTID (waiting up to {@code causalReadsTimeoutMilliseconds}), else on
     * the primary.
     */
    LOCAL,
    /**
     * Every read sees every write committed before it began, whichever session wrote: the replica waits for the
     * primary's position read at the time of the read (one more round trip to the primary per read).
     */
    GLOBAL
}
