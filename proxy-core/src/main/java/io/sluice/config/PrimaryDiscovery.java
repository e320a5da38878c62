package io.sluice.config;

/**
 * How a read/write split group knows its primary ({@code primaryDiscovery}, Sluice's own key; issue #40).
 */
public enum PrimaryDiscovery {
    /** The primary is {@code writeDataSourceName}, until a config edit says otherwise (the default). */
    NONE,
    /**
     * The primary is the one server of the group that is writable ({@code read_only} off; on MySQL
     * {@code super_read_only} off too), read every health-check interval: a promotion made by any outside tool is
     * followed without a config edit. {@code writeDataSourceName} only names the server to prefer at start.
     */
    READ_ONLY
}
