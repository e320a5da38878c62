package io.sluice.testing;

import java.sql.Connection;
import java.sql.SQLException;

/**
 * The two ways a scenario runs: straight to MariaDB as root, and through the endpoint under test (the proxy) as the
 * proxy user, whose backend account is that same root. Whatever a client observes must be equal both ways.
 */
public final class Endpoints {

    private final ProxyUnderTest proxy;

    Endpoints(ProxyUnderTest proxy) {
        this.proxy = proxy;
    }

    public Connection direct(JdbcDriver driver, String db, String params) throws SQLException {
        return proxy.mariaDb().connect(driver, db, params);
    }

    public Connection proxied(JdbcDriver driver, String db, String params) throws SQLException {
        return proxy.connect(driver, db, params);
    }

    /**
     * Runs {@code scenario} on a direct connection, then on a proxied one, each with a fresh {@link Trace}, and
     * returns both traces: {@code [direct, proxied]}. The scenario sets up its own tables, so both runs start alike.
     */
    public Trace[] runBothWays(JdbcDriver driver, String db, String params, Scenario scenario) throws Exception {
        Trace direct = new Trace();
        try (Connection c = direct(driver, db, params)) {
            scenario.run(c, direct);
        }
        Trace proxied = new Trace();
        try (Connection c = proxied(driver, db, params)) {
            scenario.run(c, proxied);
        }
        return new Trace[] {direct, proxied};
    }

    /** A client scenario that records what it observes. */
    @FunctionalInterface
    public interface Scenario {
        void run(Connection connection, Trace trace) throws Exception;
    }
}
