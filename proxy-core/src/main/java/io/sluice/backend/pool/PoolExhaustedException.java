package io.sluice.backend.pool;

/** No backend connection became free within {@code connectionTimeoutMilliseconds}. */
public final class PoolExhaustedException extends Exception {
    private static final long serialVersionUID = 1L;

    private final String dataSource;
    private final int maxPoolSize;
    /** The server account whose {@code maxPoolSizePerAccount} was all in use, or {@code null}. */
    private final String account;

    public PoolExhaustedException(String dataSource, int maxPoolSize, long timeoutMillis) {
        super("no connection to data source '" + dataSource + "' became free within " + timeoutMillis
                + " ms (maxPoolSize " + maxPoolSize + " in use)");
        this.dataSource = dataSource;
        this.maxPoolSize = maxPoolSize;
        this.account = null;
    }

    /** The session's server account had all {@code maxPoolSizePerAccount} connections in use. */
    public PoolExhaustedException(String dataSource, String account, int maxPoolSizePerAccount, long timeoutMillis) {
        super("no connection to data source '" + dataSource + "' as '" + account + "' became free within "
                + timeoutMillis + " ms (maxPoolSizePerAccount " + maxPoolSizePerAccount + " in use)");
        this.dataSource = dataSource;
        this.maxPoolSize = maxPoolSizePerAccount;
        this.account = account;
    }

    /** The server account whose own bound was reached, or {@code null} when the data source's total was. */
    public String account() {
        return account;
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
