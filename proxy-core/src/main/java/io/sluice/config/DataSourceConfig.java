package io.sluice.config;

import java.nio.file.Path;
import java.util.Objects;

/**
 * One backend MySQL / MariaDB / TiDB server and the pool of authenticated connections Sluice keeps to it.
 *
 * <p>The pool keys mean what they mean in HikariCP, which users already know: {@code connectionTimeoutMilliseconds}
 * is how long a session waits for a connection, {@code idleTimeoutMilliseconds} how long a connection may sit idle
 * above {@code minPoolSize}, {@code maxLifetimeMilliseconds} how old a connection may grow before it is retired
 * (never while a session uses it).
 *
 * @param name the key under {@code dataSources}
 * @param url a JDBC URL, {@code jdbc:mysql://host:port/database?...} or {@code jdbc:mariadb://...}
 * @param username the backend account Sluice authenticates as
 * @param password that account's password, may be empty
 * @param connectionTimeoutMilliseconds how long to wait for a connection (connect, authenticate or pool wait)
 * @param idleTimeoutMilliseconds how long an idle connection above {@code minPoolSize} is kept; 0 keeps it forever
 * @param maxLifetimeMilliseconds the age after which an idle connection is closed; 0 means no limit
 * @param maxPoolSize the most connections open to this server at once
 * @param minPoolSize the connections kept open even when idle
 * @param weight this server's share of new sessions under the weighted policies, 0..256; 0 sends it none
 * @param drain whether the server starts drained: out of rotation, for maintenance
 * @param sslMode whether and how connections to this server use TLS
 * @param sslCa the CA certificates (PEM) the server's certificate must chain to for VERIFY_CA and
 *     VERIFY_IDENTITY; {@code null} uses the JDK's trusted CAs
 * @param maxPoolSizePerAccount the most connections open to this server as any one account of the sessions' own
 *     (mapped {@code backendUser}s, {@code users: FROM_BACKEND}), within {@code maxPoolSize}; 0: only
 *     {@code maxPoolSize} bounds them
 */
public record DataSourceConfig(
        String name,
        String url,
        String username,
        String password,
        long connectionTimeoutMilliseconds,
        long idleTimeoutMilliseconds,
        long maxLifetimeMilliseconds,
        int maxPoolSize,
        int minPoolSize,
        int weight,
        boolean drain,
        SslMode sslMode,
        Path sslCa,
        int maxPoolSizePerAccount) {

    public static final long DEFAULT_CONNECTION_TIMEOUT_MILLISECONDS = 30_000;
    public static final long DEFAULT_IDLE_TIMEOUT_MILLISECONDS = 600_000;
    public static final long DEFAULT_MAX_LIFETIME_MILLISECONDS = 1_800_000;
    public static final int DEFAULT_MAX_POOL_SIZE = 100;
    public static final int DEFAULT_MIN_POOL_SIZE = 0;
    public static final int DEFAULT_WEIGHT = 1;
    public static final int MAX_WEIGHT = 256;
    /** Plain text: backends usually sit on a private network, and TLS costs every relayed byte. */
    public static final SslMode DEFAULT_SSL_MODE = SslMode.DISABLED;

    public DataSourceConfig {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(url, "url");
        Objects.requireNonNull(username, "username");
        password = password == null ? "" : password;
        if (connectionTimeoutMilliseconds <= 0) {
            throw new IllegalArgumentException("connectionTimeoutMilliseconds: " + connectionTimeoutMilliseconds + " (expected: > 0)");
        }
        if (idleTimeoutMilliseconds < 0) {
            throw new IllegalArgumentException("idleTimeoutMilliseconds: " + idleTimeoutMilliseconds + " (expected: >= 0)");
        }
        if (maxLifetimeMilliseconds < 0) {
            throw new IllegalArgumentException("maxLifetimeMilliseconds: " + maxLifetimeMilliseconds + " (expected: >= 0)");
        }
        if (maxPoolSize < 1) {
            throw new IllegalArgumentException("maxPoolSize: " + maxPoolSize + " (expected: >= 1)");
        }
        if (minPoolSize < 0 || minPoolSize > maxPoolSize) {
            throw new IllegalArgumentException("minPoolSize: " + minPoolSize + " (expected: 0.." + maxPoolSize + ")");
        }
        if (weight < 0 || weight > MAX_WEIGHT) {
            throw new IllegalArgumentException("weight: " + weight + " (expected: 0.." + MAX_WEIGHT + ")");
        }
        sslMode = sslMode == null ? DEFAULT_SSL_MODE : sslMode;
        if (sslCa != null && !sslMode.verifiesCertificate()) {
            // A CA that is silently not checked would look like protection that is not there.
            throw new IllegalArgumentException("sslCa: set while sslMode is " + sslMode
                    + " (expected: sslMode VERIFY_CA or VERIFY_IDENTITY, or no sslCa)");
        }
        if (maxPoolSizePerAccount < 0 || maxPoolSizePerAccount > maxPoolSize) {
            throw new IllegalArgumentException("maxPoolSizePerAccount: " + maxPoolSizePerAccount + " (expected: 0.."
                    + maxPoolSize + ", 0 for no bound but maxPoolSize)");
        }
        JdbcUrl.parse(url); // fails early on a URL Sluice cannot connect to
    }

    /** A data source whose accounts share {@code maxPoolSize} without a bound of their own. */
    public DataSourceConfig(String name, String url, String username, String password,
            long connectionTimeoutMilliseconds, long idleTimeoutMilliseconds, long maxLifetimeMilliseconds,
            int maxPoolSize, int minPoolSize, int weight, boolean drain, SslMode sslMode, Path sslCa) {
        this(name, url, username, password, connectionTimeoutMilliseconds, idleTimeoutMilliseconds,
                maxLifetimeMilliseconds, maxPoolSize, minPoolSize, weight, drain, sslMode, sslCa, 0);
    }

    /** A data source with weight 1, not drained, without TLS. */
    public DataSourceConfig(String name, String url, String username, String password,
            long connectionTimeoutMilliseconds, long idleTimeoutMilliseconds, long maxLifetimeMilliseconds,
            int maxPoolSize, int minPoolSize) {
        this(name, url, username, password, connectionTimeoutMilliseconds, idleTimeoutMilliseconds,
                maxLifetimeMilliseconds, maxPoolSize, minPoolSize, DEFAULT_WEIGHT, false, DEFAULT_SSL_MODE, null);
    }

    /** A data source of this weight and drain flag, without TLS. */
    public DataSourceConfig(String name, String url, String username, String password,
            long connectionTimeoutMilliseconds, long idleTimeoutMilliseconds, long maxLifetimeMilliseconds,
            int maxPoolSize, int minPoolSize, int weight, boolean drain) {
        this(name, url, username, password, connectionTimeoutMilliseconds, idleTimeoutMilliseconds,
                maxLifetimeMilliseconds, maxPoolSize, minPoolSize, weight, drain, DEFAULT_SSL_MODE, null);
    }

    /** A data source of weight 1, not drained, with these TLS settings. */
    public DataSourceConfig(String name, String url, String username, String password,
            long connectionTimeoutMilliseconds, long idleTimeoutMilliseconds, long maxLifetimeMilliseconds,
            int maxPoolSize, int minPoolSize, SslMode sslMode, Path sslCa) {
        this(name, url, username, password, connectionTimeoutMilliseconds, idleTimeoutMilliseconds,
                maxLifetimeMilliseconds, maxPoolSize, minPoolSize, DEFAULT_WEIGHT, false, sslMode, sslCa);
    }

    /** This data source with another weight. */
    public DataSourceConfig withWeight(int newWeight) {
        return new DataSourceConfig(name, url, username, password, connectionTimeoutMilliseconds,
                idleTimeoutMilliseconds, maxLifetimeMilliseconds, maxPoolSize, minPoolSize, newWeight, drain, sslMode,
                sslCa, maxPoolSizePerAccount);
    }

    /** This data source with its connect and pool wait limit changed. */
    public DataSourceConfig withConnectionTimeoutMilliseconds(long millis) {
        return new DataSourceConfig(name, url, username, password, millis, idleTimeoutMilliseconds,
                maxLifetimeMilliseconds, maxPoolSize, minPoolSize, weight, drain, sslMode, sslCa,
                maxPoolSizePerAccount);
    }

    /** The same data source with TLS settings. */
    public DataSourceConfig withSsl(SslMode newSslMode, Path newSslCa) {
        return new DataSourceConfig(name, url, username, password, connectionTimeoutMilliseconds,
                idleTimeoutMilliseconds, maxLifetimeMilliseconds, maxPoolSize, minPoolSize, weight, drain, newSslMode,
                newSslCa, maxPoolSizePerAccount);
    }

    /** The same data source with a bound per account of the sessions' own. */
    public DataSourceConfig withMaxPoolSizePerAccount(int perAccount) {
        return new DataSourceConfig(name, url, username, password, connectionTimeoutMilliseconds,
                idleTimeoutMilliseconds, maxLifetimeMilliseconds, maxPoolSize, minPoolSize, weight, drain, sslMode,
                sslCa, perAccount);
    }

    /** A data source with the default pool settings. */
    public static DataSourceConfig of(String name, String url, String username, String password) {
        return new DataSourceConfig(name, url, username, password,
                DEFAULT_CONNECTION_TIMEOUT_MILLISECONDS, DEFAULT_IDLE_TIMEOUT_MILLISECONDS,
                DEFAULT_MAX_LIFETIME_MILLISECONDS, DEFAULT_MAX_POOL_SIZE, DEFAULT_MIN_POOL_SIZE);
    }

    /** The host, port and database named by {@link #url()}. */
    public JdbcUrl jdbcUrl() {
        return JdbcUrl.parse(url);
    }

    @Override
    public String toString() {
        // Never print the password: this string reaches logs.
        return "DataSourceConfig[name=" + name + ", url=" + url + ", username=" + username
                + ", maxPoolSize=" + maxPoolSize
                + (maxPoolSizePerAccount > 0 ? ", maxPoolSizePerAccount=" + maxPoolSizePerAccount : "")
                + ", minPoolSize=" + minPoolSize + ", weight=" + weight
                + (drain ? ", drain" : "") + ", sslMode=" + sslMode + "]";
    }
}
