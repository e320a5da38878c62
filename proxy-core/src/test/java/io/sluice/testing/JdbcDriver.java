package io.sluice.testing;

import java.sql.Connection;
import java.sql.Driver;
import java.sql.SQLException;

/**
 * The two JDBC drivers the suite runs with. Connections go through the driver object itself rather than
 * {@code DriverManager}, so neither driver can claim the other's URLs.
 */
public enum JdbcDriver {
    MARIADB("jdbc:mariadb://", "org.mariadb.jdbc.Driver", ""),
    // Sluice offers TLS but the shared server does not; DISABLED keeps both paths on plain TCP, compared like for like.
    MYSQL("jdbc:mysql://", "com.mysql.cj.jdbc.Driver", "sslMode=DISABLED");

    private final String prefix;
    private final String className;
    private final String defaultParams;
    private volatile Driver driver;

    JdbcDriver(String prefix, String className, String defaultParams) {
        this.prefix = prefix;
        this.className = className;
        this.defaultParams = defaultParams;
    }

    public String className() {
        return className;
    }

    /** A URL for {@code db} (may be null) with this driver's defaults and then {@code params} (may be empty). */
    public String url(String host, int port, String db, String params) {
        StringBuilder url = new StringBuilder(prefix).append(host).append(':').append(port).append('/');
        if (db != null) {
            url.append(db);
        }
        String all = join(defaultParams, params);
        if (!all.isEmpty()) {
            url.append('?').append(all);
        }
        return url.toString();
    }

    public Connection connect(String url, String user, String password) throws SQLException {
        Connection connection = driver().connect(url, TestMariaDb.credentials(user, password));
        if (connection == null) {
            throw new SQLException("url: " + url + " (expected: a " + this + " URL)");
        }
        return connection;
    }

    private Driver driver() {
        Driver result = driver;
        if (result == null) {
            try {
                result = (Driver) Class.forName(className).getDeclaredConstructor().newInstance();
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(className, e);
            }
            driver = result;
        }
        return result;
    }

    private static String join(String a, String b) {
        if (a == null || a.isEmpty()) {
            return b == null ? "" : b;
        }
        return b == null || b.isEmpty() ? a : a + "&" + b;
    }
}
