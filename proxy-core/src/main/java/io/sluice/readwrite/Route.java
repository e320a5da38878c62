package io.sluice.readwrite;

/** Where a statement of a read/write split session runs. */
public enum Route {
    /** The group's write data source. */
    PRIMARY,
    /** One of the group's read data sources that may take reads now (else the primary). */
    REPLICA,
    /**
     * The connection that ran the session's previous statement: {@code SHOW WARNINGS}, {@code FOUND_ROWS()} and the
     * like read what that statement left behind on its server connection.
     */
    PREVIOUS
}
