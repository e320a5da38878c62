package io.sluice.drivers;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A JDBC driver in this JVM, used directly (a session is {@link Driver#connect}) or through HikariCP (a session is
 * a connection borrowed from a HikariCP pool that keeps {@code poolSize} connections to Sluice open, idle between
 * borrows, as an application server's pool does).
 *
 * <p>The {@link Driver} object is used as it is, never looked up through {@code DriverManager}, so two versions of
 * one driver (MySQL Connector/J 9 from the test class path, 8 from a class loader of its own) cannot claim each
 * other's URLs.
 */
final class JdbcClient implements DriverClient {

    private final String version;
    private final DataSource source;
    private final HikariDataSource hikari;
    private final List<JdbcSession> open = new ArrayList<>();

    private JdbcClient(String version, DataSource source, HikariDataSource hikari) {
        this.version = version;
        this.source = source;
        this.hikari = hikari;
    }

    /** Sessions straight from {@code driver}. */
    static JdbcClient direct(Driver driver, String url, String user, String password) {
        return new JdbcClient(describe(driver), new DriverSource(driver, url, user, password), null);
    }

    /** Sessions borrowed from a HikariCP pool of {@code poolSize} connections made by {@code driver}. */
    static JdbcClient hikari(Driver driver, String url, String user, String password, int poolSize) {
        HikariConfig config = new HikariConfig();
        config.setPoolName("driver-matrix");
        config.setDataSource(new DriverSource(driver, url, user, password));
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(poolSize);
        config.setConnectionTimeout(10_000);
        HikariDataSource pool = new HikariDataSource(config);
        String hikariVersion = HikariDataSource.class.getPackage().getImplementationVersion();
        return new JdbcClient(describe(driver) + " through HikariCP"
                + (hikariVersion != null ? " " + hikariVersion : ""), pool, pool);
    }

    private static String describe(Driver driver) {
        String name = driver.getClass().getName().startsWith("org.mariadb") ? "MariaDB Connector/J"
                : "MySQL Connector/J";
        String version = driver.getClass().getPackage().getImplementationVersion();
        return name + " " + (version != null ? version : driver.getMajorVersion() + "." + driver.getMinorVersion());
    }

    @Override
    public String version() {
        return version;
    }

    @Override
    public Session open() {
        try {
            JdbcSession session = new JdbcSession(source.getConnection());
            open.add(session);
            return session;
        } catch (SQLException e) {
            throw error(e);
        }
    }

    @Override
    public void close() {
        for (JdbcSession session : new ArrayList<>(open)) {
            session.close();
        }
        if (hikari != null) {
            hikari.close();
        }
    }

    private static DriverError error(SQLException e) {
        return new DriverError(e.getErrorCode(), e.getMessage(), e);
    }

    private static List<List<String>> rows(Statement statement, boolean isResultSet) throws SQLException {
        List<List<String>> rows = new ArrayList<>();
        if (!isResultSet) {
            return rows;
        }
        try (ResultSet rs = statement.getResultSet()) {
            int columns = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> row = new ArrayList<>(columns);
                for (int i = 1; i <= columns; i++) {
                    row.add(rs.getString(i));
                }
                rows.add(row);
            }
        }
        return rows;
    }

    private final class JdbcSession implements Session {
        private final Connection connection;
        private final Map<String, PreparedStatement> statements = new HashMap<>();

        JdbcSession(Connection connection) {
            this.connection = connection;
        }

        @Override
        public List<List<String>> query(String sql) {
            try (Statement statement = connection.createStatement()) {
                return rows(statement, statement.execute(sql));
            } catch (SQLException e) {
                throw error(e);
            }
        }

        @Override
        public void prepare(String name, String sql) {
            try {
                statements.put(name, connection.prepareStatement(sql));
            } catch (SQLException e) {
                throw error(e);
            }
        }

        @Override
        public List<List<String>> execute(String name, String... parameters) {
            PreparedStatement statement = statements.get(name);
            try {
                for (int i = 0; i < parameters.length; i++) {
                    statement.setString(i + 1, parameters[i]);
                }
                return rows(statement, statement.execute());
            } catch (SQLException e) {
                throw error(e);
            }
        }

        @Override
        public void close() {
            open.remove(this);
            try {
                for (PreparedStatement statement : statements.values()) {
                    statement.close();
                }
                connection.close(); // through HikariCP: back to its pool, still connected to Sluice
            } catch (SQLException e) {
                throw error(e);
            }
        }
    }

    /** A {@link DataSource} over one {@link Driver} object, for HikariCP. */
    private record DriverSource(Driver driver, String url, String user, String password) implements DataSource {

        @Override
        public Connection getConnection() throws SQLException {
            return getConnection(user, password);
        }

        @Override
        public Connection getConnection(String username, String pass) throws SQLException {
            Properties properties = new Properties();
            properties.setProperty("user", username);
            properties.setProperty("password", pass);
            Connection connection = driver.connect(url, properties);
            if (connection == null) {
                throw new SQLException(driver.getClass().getName() + " does not take the URL " + url);
            }
            return connection;
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }
}
