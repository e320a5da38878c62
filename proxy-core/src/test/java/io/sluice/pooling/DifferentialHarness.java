package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.api.BackendSnapshot;
import io.sluice.Sluice;
import io.sluice.config.PoolingConfig;
import io.sluice.api.SessionSnapshot;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.Trace;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one client script twice, straight to MariaDB as root and through Sluice in {@code pooling: TRANSACTION} with a
 * pool of two server connections, and records what the client observed both ways.
 *
 * <p>Through Sluice, two "disturber" sessions run between the script's steps. Before each step they take the server
 * connection the scripted session used last (when it is not holding one) so the step has to run on the other one, and
 * they leave different session state (sql_mode, time_zone, character sets, schema, autocommit, isolation, read-only,
 * session variables, LAST_INSERT_ID) on every connection they touch. A step therefore only sees the same results as
 * directly when Sluice re-applied the scripted session's own state, or kept it pinned to its connection.
 *
 * <p>After each step the harness notes, through Sluice only, the server connection the session was on
 * ({@code SELECT CONNECTION_ID()}, unless the step says the probe would change what the next step sees), and the
 * session's {@code pinnedBy} and state from {@link Sluice#sessions()}.
 *
 * <p>A test class registers it with {@code @RegisterExtension} on a static field: it starts its proxy (a
 * {@link SluiceExtension}) and databases before the class and stops them after it. Transaction pooling is Sluice's, so in
 * direct mode ({@code -Dsluice.test.direct=true}) the class is skipped.
 */
final class DifferentialHarness implements ExecutionCondition, BeforeAllCallback, AfterAllCallback {

    private static final Logger log = LoggerFactory.getLogger(DifferentialHarness.class);

    static final int POOL_SIZE = 2;

    /**
     * Two sets of session state, different from each other and from any client's defaults. Not read-only: against
     * MariaDB 10.11 {@code SET SESSION TRANSACTION READ ONLY} pins with {@code session_state} (see
     * SessionStateTest#readOnly), and a pinned disturber would keep a server connection for good.
     */
    private static final String[][] DISTURBING_STATE = {
        {"SET SESSION sql_mode = 'ANSI,NO_BACKSLASH_ESCAPES,NO_ZERO_DATE', time_zone = '+05:30',"
                + " group_concat_max_len = 7, div_precision_increment = 11, max_join_size = 1000000,"
                + " lc_time_names = 'fr_FR', autocommit = 0",
            "SET NAMES latin1",
            "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            "SELECT LAST_INSERT_ID(987654)"},
        {"SET SESSION sql_mode = 'PIPES_AS_CONCAT,ANSI_QUOTES', time_zone = '-09:00', group_concat_max_len = 3,"
                + " div_precision_increment = 0, lc_time_names = 'ja_JP', autocommit = 1",
            "SET NAMES utf8mb4 COLLATE utf8mb4_bin",
            "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
            "SELECT LAST_INSERT_ID(123456)"},
    };

    private final SluiceExtension proxy;

    private DifferentialHarness(SluiceExtension proxy) {
        this.proxy = proxy;
    }

    /**
     * Sluice with {@code pooling} and {@link #POOL_SIZE} server connections, and two fresh databases whose names
     * start with {@code prefix}.
     */
    static DifferentialHarness of(String prefix, PoolingConfig pooling) {
        // One event loop: every session borrows from the same per-loop pool, so the connection a disturber gives
        // back is handed to the script as it is, foreign session variables and all, instead of being retired
        // for a fresh login on the script's loop (which resets nothing but also tests nothing).
        return new DifferentialHarness(SluiceExtension.with(b -> b
                        .pooling(pooling)
                        .maxPoolSize(POOL_SIZE)
                        .connectionTimeoutMillis(5_000)
                        .workerThreads(1))
                .sluiceOnly("transaction pooling is a proxy feature")
                .database(prefix)
                .database(prefix + "_other"));
    }

    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        return proxy.evaluateExecutionCondition(context);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        proxy.beforeAll(context);
    }

    @Override
    public void afterAll(ExtensionContext context) {
        proxy.afterAll(context);
    }

    ProxyUnderTest proxy() {
        return proxy;
    }

    Sluice sluice() {
        return proxy.sluice();
    }

    /** The database every script starts in. */
    String db() {
        return proxy.db(0);
    }

    /** A second database for USE and COM_INIT_DB; the disturbers switch to it too. */
    String otherDb() {
        return proxy.db(1);
    }

    /**
     * The URL parameters a transaction-pooling test uses with {@code driver}: none but {@code extra}. MySQL
     * Connector/J's default URL does not negotiate CLIENT_SESSION_TRACK ({@code trackSessionState=false}) and MariaDB
     * Connector/J does, so every differential test covers both kinds of client (see {@link UntrackedClientTest}).
     */
    static String params(JdbcDriver driver, String extra) {
        return extra == null ? "" : extra;
    }

    /** Server-side prepared statements with either driver (and statement caching with MySQL Connector/J). */
    static String serverPrepParams(JdbcDriver driver) {
        return params(driver, driver == JdbcDriver.MYSQL ? "useServerPrepStmts=true&cachePrepStmts=true"
                : "useServerPrepStmts=true");
    }

    // ---- scripts ---------------------------------------------------------------------------------------------

    static Script script() {
        return new Script();
    }

    /** What a step does on the scripted connection, recording what it observes. */
    @FunctionalInterface
    interface Action {
        void run(Connection connection, Trace trace) throws Exception;
    }

    record Step(String name, Action action, boolean probe) {
    }

    /** The steps of a script, in order. Build a new one per run: steps may keep JDBC objects between them. */
    static final class Script {
        private final List<Step> steps = new ArrayList<>();

        /** A step, followed (through Sluice) by {@code SELECT CONNECTION_ID()} on the same session. */
        Script step(String name, Action action) {
            steps.add(new Step(name, action, true));
            return this;
        }

        /** A step after which the probe would change what the next step sees (FOUND_ROWS(), ROW_COUNT()...). */
        Script stepWithoutProbe(String name, Action action) {
            steps.add(new Step(name, action, false));
            return this;
        }

        /** One step per statement, each recorded with {@link Trace#execute}. */
        Script sql(String... statements) {
            for (String sql : statements) {
                step(sql, (c, t) -> {
                    try (Statement s = c.createStatement()) {
                        t.execute(s, sql);
                    }
                });
            }
            return this;
        }

        /** Statements run without recording (set-up), as one step. */
        Script quietly(String... statements) {
            return step("quietly " + String.join("; ", statements), (c, t) -> {
                try (Statement s = c.createStatement()) {
                    Trace.quietly(s, statements);
                }
            });
        }

        List<Step> steps() {
            return steps;
        }
    }

    /**
     * What one script observed both ways, and through Sluice, per step: the server connection id after it (-1 when
     * not probed), the session's pinnedBy and its state.
     */
    record Run(Trace direct, Trace proxied, List<String> stepNames, List<Long> connectionIds, List<String> pins,
               List<String> states, List<String> disturberErrors, int disturbedSteps) {

        /** Same rows, update counts, warnings and errors both ways, and the disturbers never failed. */
        Run assertSameResults() {
            assertThat(proxied.toString()).as("through Sluice (TRANSACTION) vs direct; through Sluice, step by"
                    + " step:%n%s", this).isEqualTo(direct.toString());
            assertThat(proxied).isEqualTo(direct);
            assertThat(disturberErrors).as("errors of the disturbing sessions").isEmpty();
            return this;
        }

        /** The scripted session ran on at least two different server connections. */
        Run assertSwitchedConnections() {
            assertThat(distinctConnections()).as("server connections the session used, per step: %s (steps %s)",
                    connectionIds, stepNames).hasSizeGreaterThanOrEqualTo(2);
            return this;
        }

        /** No step left the session pinned. */
        Run assertNeverPinned() {
            assertThat(pins).as("pinnedBy after each step %s", stepNames).containsOnlyNulls();
            return this;
        }

        Set<Long> distinctConnections() {
            Set<Long> ids = new LinkedHashSet<>();
            for (long id : connectionIds) {
                if (id >= 0) {
                    ids.add(id);
                }
            }
            return ids;
        }

        int index(String stepName) {
            int i = stepNames.indexOf(stepName);
            if (i < 0) {
                throw new IllegalArgumentException("no step " + stepName + " in " + stepNames);
            }
            return i;
        }

        String pinAfter(String stepName) {
            return pins.get(index(stepName));
        }

        long connectionAfter(String stepName) {
            return connectionIds.get(index(stepName));
        }

        /** The probed connection ids from step {@code from} to step {@code to}, both included. */
        Set<Long> connectionsBetween(String from, String to) {
            return connectionsBetween(index(from), index(to));
        }

        /** The probed connection ids from the step at {@code from} to the one at {@code to}, both included. */
        Set<Long> connectionsBetween(int from, int to) {
            Set<Long> ids = new LinkedHashSet<>();
            for (int i = from; i <= to; i++) {
                if (connectionIds.get(i) >= 0) {
                    ids.add(connectionIds.get(i));
                }
            }
            return ids;
        }

        @Override
        public String toString() {
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < stepNames.size(); i++) {
                s.append(String.format("  %-60.60s conn=%d pinnedBy=%s state=%s%n", stepNames.get(i),
                        connectionIds.get(i), pins.get(i), states.get(i)));
            }
            return s.toString();
        }
    }

    /** {@link #run}, then {@link Run#assertSameResults()}. */
    Run compare(JdbcDriver driver, String params, Supplier<Script> script) throws Exception {
        return run(driver, params, script).assertSameResults();
    }

    /** Runs {@code script} direct (root, MariaDB) and through Sluice (proxy user) on a connection to {@link #db()}. */
    Run run(JdbcDriver driver, String params, Supplier<Script> script) throws Exception {
        Trace direct = new Trace();
        try (Connection c = proxy.mariaDb().connect(driver, db(), params)) {
            for (Step step : script.get().steps()) {
                direct.add("step", step.name());
                step.action().run(c, direct);
            }
        }

        Trace proxied = new Trace();
        List<String> names = new ArrayList<>();
        List<Long> ids = new ArrayList<>();
        List<String> pins = new ArrayList<>();
        List<String> states = new ArrayList<>();
        List<String> disturberErrors = new ArrayList<>();
        int disturbed = 0;
        try (Connection c = proxy.connect(driver, db(), params);
             Disturbers disturbers = new Disturbers(disturberErrors)) {
            long sessionId = greetingId(c);
            long last = -1;
            int stepIndex = 0;
            for (Step step : script.get().steps()) {
                SessionSnapshot before = snapshot(sessionId);
                boolean holding = before == null || before.pinnedBy() != null || !"idle".equals(before.state());
                if (disturbers.takeAwayFrom(last, holding, stepIndex)) {
                    disturbed++;
                }
                names.add(step.name());
                proxied.add("step", step.name());
                try {
                    step.action().run(c, proxied);
                    long id = step.probe() ? connectionId(c) : -1;
                    ids.add(id);
                    if (id >= 0) {
                        last = id;
                    }
                } finally {
                    disturbers.release();
                }
                SessionSnapshot after = snapshot(sessionId);
                pins.add(after == null ? "<no session>" : after.pinnedBy());
                states.add(after == null ? "<no session>" : after.state());
                stepIndex++;
            }
        }
        Run run = new Run(direct, proxied, names, ids, pins, states, disturberErrors, disturbed);
        log.debug("{} with {} through Sluice, step by step:\n{}", driver, params, run);
        return run;
    }

    /** The scripted session in Sluice's own list, or null. */
    SessionSnapshot snapshot(long sessionId) {
        for (SessionSnapshot s : sluice().sessions()) {
            if (s.id() == (int) sessionId) {
                return s;
            }
        }
        return null;
    }

    /** The connection id the client read in the greeting, which is how {@link Sluice#sessions()} names it. */
    static long greetingId(Connection c) throws SQLException {
        if (c.isWrapperFor(org.mariadb.jdbc.Connection.class)) {
            return c.unwrap(org.mariadb.jdbc.Connection.class).getThreadId();
        }
        return c.unwrap(com.mysql.cj.jdbc.JdbcConnection.class).getSession().getThreadId();
    }

    /** The server connection the session is on now (through Sluice: the backend connection's id). */
    static long connectionId(Connection c) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /** The open and idle server connections of Sluice's pool. */
    BackendSnapshot pool() {
        return sluice().backends().get(0);
    }

    /**
     * Two client sessions through Sluice (MySQL Connector/J with a default URL, no schema) that
     * occupy server connections around a scripted step and leave foreign session state on them. Not MariaDB
     * Connector/J: 3.5.11 (decision 064; 3.5.6 did not) closes its connection when the server reports a character set
     * other than UTF-8, and {@code SET NAMES latin1} is part of the state they leave.
     */
    private final class Disturbers implements AutoCloseable {
        private final Connection[] sessions = new Connection[2];
        private final boolean[] holding = new boolean[2];
        private final List<String> errors;

        Disturbers(List<String> errors) {
            this.errors = errors;
        }

        /**
         * Before a step: makes sure the step cannot run on {@code last}, the server connection the scripted session
         * used before, by holding it in an open transaction of a disturber. When the scripted session holds a
         * connection (in a transaction, or pinned) one disturber only takes the other connection for a moment, to
         * leave its state there, and gives it back.
         *
         * @return whether the scripted session was kept away from {@code last}
         */
        boolean takeAwayFrom(long last, boolean scriptedHolds, int step) {
            if (!hasRoom()) {
                return false; // nothing free: the scripted session holds a connection and so does someone else
            }
            long d0 = begin(0, step);
            if (d0 < 0) {
                return false;
            }
            if (scriptedHolds) {
                commit(0);
                return false;
            }
            if (d0 == last || last < 0) {
                return true; // the step gets the other connection (or a new one)
            }
            if (!hasRoom()) {
                commit(0);
                return false;
            }
            long d1 = begin(1, step + 1);
            commit(0); // frees d0's connection, with disturber 0's state on it, for the step
            return d1 >= 0;
        }

        private boolean hasRoom() {
            BackendSnapshot pool = pool();
            return pool.openConnections() < pool.maxPoolSize() || pool.idleConnections() > 0;
        }

        /** Leaves state on whatever connection it lands, then opens a transaction; returns its connection id. */
        private long begin(int which, int profile) {
            try {
                if (sessions[which] == null) {
                    // Connected only once there is room: a login may need a server connection itself.
                    sessions[which] = proxy.connect(JdbcDriver.MYSQL, null, params(JdbcDriver.MYSQL, ""));
                }
            } catch (SQLException e) {
                errors.add("disturber " + which + " login: " + e.getErrorCode() + " " + e.getMessage());
                return -1;
            }
            try (Statement s = sessions[which].createStatement()) {
                // The script's own schema: Sluice retires an idle connection of another schema rather than reuse
                // it, and the point is to hand the script connections that carry foreign session variables.
                s.execute("USE `" + db() + "`");
                for (String sql : DISTURBING_STATE[profile % 2]) {
                    s.execute(sql);
                }
                s.execute("START TRANSACTION");
                holding[which] = true;
                try (ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
                    rs.next();
                    return rs.getLong(1);
                }
            } catch (SQLException e) {
                errors.add("disturber " + which + ": " + e.getErrorCode() + " " + e.getMessage());
                return -1;
            }
        }

        private void commit(int which) {
            if (!holding[which]) {
                return;
            }
            holding[which] = false;
            try (Statement s = sessions[which].createStatement()) {
                s.execute("COMMIT");
                SessionSnapshot self = snapshot(greetingId(sessions[which]));
                if (self != null && self.pinnedBy() != null) {
                    // It would keep its server connection for good: say so, and start over with a new session.
                    errors.add("disturber " + which + " pinned by " + self.pinnedBy());
                    sessions[which].close();
                    sessions[which] = null;
                }
            } catch (SQLException e) {
                errors.add("disturber " + which + " commit: " + e.getErrorCode() + " " + e.getMessage());
            }
        }

        void release() {
            commit(0);
            commit(1);
        }

        @Override
        public void close() throws SQLException {
            release();
            for (Connection c : sessions) {
                if (c != null) {
                    c.close();
                }
            }
        }
    }
}
