package io.sluice.backend.pool;

/** No backend connection became free within {@code connectionTimeoutMilliseconds}. */
public final class PoolExhaustedException extends Exception {
    private static final long serialVersionUID = 1L;

    public PoolExhaustedException(String dataSource, int maxPoolSize, long timeoutMillis) {
        super("no connection to data source '" + dataSource + "' became free within " + timeoutMillis
                + " ms (maxPoolSize " + maxPoolSize + " in use)");
    }
}
