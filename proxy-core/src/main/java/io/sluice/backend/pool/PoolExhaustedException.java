package io.sluice.backend.pool;

/** No backend connection became free within {@code connectionTimeoutMilliseconds}. */
public final class PoolExhaustedException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String dataSource;
    private final int maxPoolSize;

    public PoolExhaustedException(String dataSource, int maxPoolSize, long timeoutMillis) {
        super("no connection to data source '" + dataSource + "' became free within " + timeoutMillis
                + " ms (maxPoolSize " + maxPoolSize + " in use)");
        this.dataSource = dataSource;
        this.maxPoolSize = maxPoolSize;
    }

    /** The data source whose pool ran out. */
    public String dataSource() {
        return dataSource;
    }

    /** Its {@code maxPoolSize}, every connection of which was in use. */
    public int maxPoolSize() {
        return maxPoolSize;
    }
}
