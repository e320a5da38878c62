package io.sluice.drivers;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.api.SessionSnapshot;
import io.sluice.config.PoolingConfig;
import io.sluice.config.PoolingMode;
import io.sluice.drivers.DriverClient.DriverError;
import io.sluice.drivers.DriverClient.Session;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.PrometheusText;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The driver matrix of issue #27 (item 5): real client libraries against Sluice in {@code pooling: TRANSACTION} with
 * {@value #MAX_POOL_SIZE} server connections, all on one event loop (so that every session shares one pool and a
 * connection given back by one session is the next one another session gets, foreign state and all). For each
 * library ({@link ClientDriver}):
 *
 * <ol>
 *   <li>three times {@code maxPoolSize} idle clients all get served, a statement each once all are connected, while
 *       the server never holds more than {@code maxPoolSize} connections (Sluice's count, and the server's own
 *       process list);</li>
 *   <li>session state ({@code SET NAMES}, {@code sql_mode}, {@code time_zone}, {@code autocommit=0} and a
 *       transaction, the isolation level) follows the session from server connection to server connection while
 *       "disturber" sessions leave other state on each connection between any two of its statements;</li>
 *   <li>prepared statements (server-side where the library has them) executed again and again across server
 *       connections, under the same disturbers.</li>
 * </ol>
 *
 * <p>Libraries that do not negotiate CLIENT_SESSION_TRACK are pinned for life today ({@code pinnedBy:
 * no_session_track}): for those ({@link #PINNED_TODAY}) the test asserts exactly that, with {@code maxPoolSize}
 * clients, and fails as soon as one of them multiplexes, so that the set is emptied when issue #27's item 1 lands.
 * {@code -Dsluice.test.drivers.pinned=none} (or a comma-separated list) overrides the set, to check what the full
 * matrix does now; {@code -Dsluice.test.drivers.pooling=SESSION} runs checks 2 and 3 in SESSION pooling, as a
 * baseline for the scenario itself.
 *
 * <p>The libraries outside the JVM run as small scripts ({@code src/test/resources/drivers/}, see
 * {@link ScriptedClient}); a missing one fails the test on CI, naming the Debian package that {@code .ci/run}
 * installs. The matrix and the versions tested are in docs/drivers.md.
 */
@Timeout(value = 2, unit = TimeUnit.MINUTES)
@Tag("server")
@Tag("tools")
class DriverMatrixTest {

    private static final Logger log = LoggerFactory.getLogger(DriverMatrixTest.class);

    static final int MAX_POOL_SIZE = 4;
    static final int IDLE_CLIENTS = 3 * MAX_POOL_SIZE;
    /** The scripted session of checks 2 and 3 and its three disturbers. */
    static final int SESSIONS_WITH_DISTURBERS = 4;
    private static final String DATA_SOURCE = "ds_0";

    /**
     * Libraries expected to be pinned to one server connection for the session's life: none. Those that do not
     * negotiate CLIENT_SESSION_TRACK (MySQL Connector/J with a default URL, mysqlnd, go-sql-driver, PyMySQL) were,
     * until Sluice's connections tracked session state for every client and rewrote OK packets into each client's
     * format (issue #27, decision 069). {@code -Dsluice.test.drivers.pinned=A,B} expects the named ones pinned again.
     */
    private static final Set<ClientDriver> DEFAULT_PINNED_TODAY = EnumSet.noneOf(ClientDriver.class);

    private static final Set<ClientDriver> PINNED_TODAY = pinnedToday();
    private static final PoolingMode MODE = PoolingMode.valueOf(
            System.getProperty("sluice.test.drivers.pooling", "TRANSACTION").toUpperCase());

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b
                    .pooling(MODE == PoolingMode.TRANSACTION ? PoolingConfig.transaction() : PoolingConfig.defaults())
                    .maxPoolSize(MAX_POOL_SIZE)
                    .connectionTimeoutMillis(5_000)
                    .workerThreads(1))
            .sluiceOnly("transaction pooling is a proxy feature")
            .database("sluice_drivers",
                    "CREATE TABLE t (k VARCHAR(64) NOT NULL, v INT NOT NULL, PRIMARY KEY (k, v)) ENGINE=InnoDB");

    /** What each library reported itself as, for the log at the end. */
    private static final Map<ClientDriver, String> VERSIONS = new ConcurrentSkipListMap<>();

    /** What the test expects of a library's sessions. */
    private enum Expect {
        /** Sessions give their server connection back between transactions. */
        MULTIPLEXED,
        /** {@code pinnedBy: no_session_track}: one server connection for the session's life. */
        PINNED_FOR_LIFE,
        /** {@code pooling: SESSION} (the baseline run): one server connection for the session's life, no pin. */
        SESSION_POOLING
    }

    private static Set<ClientDriver> pinnedToday() {
        String property = System.getProperty("sluice.test.drivers.pinned");
        if (property == null) {
            return DEFAULT_PINNED_TODAY;
        }
        Set<ClientDriver> pinned = EnumSet.noneOf(ClientDriver.class);
        for (String name : property.split(",")) {
            if (!name.isBlank() && !name.strip().equalsIgnoreCase("none")) {
                pinned.add(ClientDriver.valueOf(name.strip().toUpperCase()));
            }
        }
        return pinned;
    }

    private static Expect expect(ClientDriver driver) {
        if (MODE == PoolingMode.SESSION) {
            return Expect.SESSION_POOLING;
        }
        return PINNED_TODAY.contains(driver) ? Expect.PINNED_FOR_LIFE : Expect.MULTIPLEXED;
    }

    private static Endpoint endpoint() {
        return new Endpoint(proxy.host(), proxy.port(), proxy.user(), proxy.password(), proxy.db());
    }

    private static DriverClient start(ClientDriver driver, int sessions, boolean serverPrepare) {
        DriverClient client = driver.start(endpoint(), sessions, serverPrepare);
        VERSIONS.putIfAbsent(driver, client.version());
        return client;
    }

    @AfterAll
    static void logVersions() {
        StringBuilder table = new StringBuilder("driver matrix (" + MODE + " pooling), libraries as they report"
                + " themselves:");
        VERSIONS.forEach((driver, version) -> table.append("\n  ").append(driver).append(": ").append(version)
                .append(PINNED_TODAY.contains(driver) && MODE == PoolingMode.TRANSACTION ? "  [pinned today]" : ""));
        log.info("{}", table);
    }

    // ---- 1. idle clients above maxPoolSize --------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(ClientDriver.class)
    void moreIdleClientsThanMaxPoolSizeAreAllServed(ClientDriver driver) throws Exception {
        Expect expect = expect(driver);
        Assumptions.assumeTrue(expect != Expect.SESSION_POOLING, "in SESSION pooling a session holds a server"
                + " connection for life: more clients than maxPoolSize cannot all be served, by design");
        int clients = expect == Expect.MULTIPLEXED ? IDLE_CLIENTS : MAX_POOL_SIZE;
        long since = System.currentTimeMillis();
        try (PoolWatch watch = new PoolWatch(); DriverClient client = start(driver, clients, false)) {
            List<Session> sessions = new ArrayList<>();
            Set<Long> serverConnections = new LinkedHashSet<>();
            try {
                for (int i = 0; i < clients; i++) {
                    sessions.add(client.open());
                }
                // All connected and idle; now each runs a statement.
                for (int i = 0; i < clients; i++) {
                    List<List<String>> rows = sessions.get(i).query("SELECT " + (i + 1) + ", CONNECTION_ID()");
                    assertThat(rows).as("%s, client %d", driver, i + 1).hasSize(1);
                    assertThat(rows.get(0).get(0)).as("%s, client %d", driver, i + 1).isEqualTo(String.valueOf(i + 1));
                    serverConnections.add(Long.parseLong(rows.get(0).get(1)));
                }
            } catch (DriverError e) {
                throw new AssertionError(driver + " (" + client.version() + "): client " + (sessions.size() + 1)
                        + " of " + clients + " with " + sessions.size() + " connected: " + e.getMessage()
                        + "; pinnedBy of its sessions: " + pinSummary(mine(since)), e);
            }

            // While all of them are still connected:
            List<SessionSnapshot> mine = mine(since);
            assertThat(mine).as("%s: its sessions in Sluice", driver).hasSize(clients);
            assertThat(serverConnections).as("%s: server connections its clients ran on", driver)
                    .hasSizeLessThanOrEqualTo(MAX_POOL_SIZE);
            assertThat(proxy.sluice().backendConnections(DATA_SOURCE)).as("Sluice's open server connections")
                    .isLessThanOrEqualTo(MAX_POOL_SIZE);
            assertThat(serverConnectionsInTheDatabase()).as("the server's own process list: connections in %s",
                    proxy.db()).isBetween(1, MAX_POOL_SIZE);
            if (expect == Expect.MULTIPLEXED) {
                assertThat(pinSummary(mine)).as("%s: pinnedBy of its %d sessions", driver, clients)
                        .isEqualTo(Map.of("-", clients));
            } else {
                assertPinnedForLife(driver, mine);
            }
            for (Session session : sessions) {
                session.close();
            }
        }
    }

    // ---- 2. session state under a disturber --------------------------------------------------------------------

    @ParameterizedTest
    @EnumSource(ClientDriver.class)
    void sessionStateFollowsTheSessionAcrossServerConnections(ClientDriver driver) throws Exception {
        String key = "'state-" + driver + "'";
        long since = System.currentTimeMillis();
        try (PoolWatch watch = new PoolWatch(); DriverClient client = start(driver, SESSIONS_WITH_DISTURBERS, false);
             Disturbers disturbers = new Disturbers(driver, client)) {
            Steps s = new Steps(driver, client.open(), disturbers);

            boolean latin1 = driver.takesLatin1Results();
            s.run(latin1 ? "SET NAMES latin1"
                    // The library would close its connection: only the connection's own character set changes.
                    : "SET character_set_connection = latin1, collation_connection = latin1_swedish_ci");
            String names = "SELECT @@character_set_client, @@character_set_connection, @@character_set_results,"
                    + " CONNECTION_ID()";
            s.expect(names, latin1 ? "latin1" : "utf8mb4", "latin1", latin1 ? "latin1" : "utf8mb4");
            s.run("SET NAMES utf8mb4");
            s.expect(names, "utf8mb4", "utf8mb4", "utf8mb4");

            s.run("SET SESSION sql_mode = 'ANSI_QUOTES,STRICT_ALL_TABLES'");
            s.run("SET SESSION time_zone = '+03:00'");
            s.run("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
            s.expect("SELECT @@sql_mode, @@time_zone, @@tx_isolation, CONNECTION_ID()",
                    "ANSI_QUOTES,STRICT_ALL_TABLES", "+03:00", "READ-COMMITTED");

            s.run("SET autocommit = 0");
            s.run("INSERT INTO t (k, v) VALUES (" + key + ", 1)");
            assertCommittedRows(key, 0, driver + ": the row of a transaction still open");
            long inTransaction = s.expect("SELECT @@autocommit, @@in_transaction, COUNT(*), CONNECTION_ID() FROM t"
                    + " WHERE k = " + key, "0", "1", "1");
            s.run("INSERT INTO t (k, v) VALUES (" + key + ", 2)");
            long stillInTransaction = s.expect("SELECT COUNT(*), CONNECTION_ID() FROM t WHERE k = " + key, "2");
            assertThat(stillInTransaction).as("%s: a transaction keeps its server connection", driver)
                    .isEqualTo(inTransaction);
            s.run("COMMIT");
            assertCommittedRows(key, 2, driver + ": after COMMIT");
            s.expect("SELECT @@autocommit, @@in_transaction, @@tx_isolation, CONNECTION_ID()", "0", "0",
                    "READ-COMMITTED");
            s.run("INSERT INTO t (k, v) VALUES (" + key + ", 3)"); // autocommit is off: a new transaction
            s.run("ROLLBACK");
            assertCommittedRows(key, 2, driver + ": after ROLLBACK");
            s.run("SET autocommit = 1");
            // Not in one SELECT with a table: MariaDB 10.11 then reads @@autocommit as 0 right after this
            // sequence, directly too (the next statement reads 1).
            s.expect("SELECT @@autocommit, @@in_transaction, @@sql_mode, @@time_zone, @@tx_isolation,"
                    + " @@character_set_client, CONNECTION_ID()",
                    "1", "0", "ANSI_QUOTES,STRICT_ALL_TABLES", "+03:00", "READ-COMMITTED", "utf8mb4");
            s.expect("SELECT COUNT(*), CONNECTION_ID() FROM t WHERE k = " + key, "2");

            assertServerConnections(driver, s, mine(since));
            s.session().close();
        }
    }

    // ---- 3. prepared statements --------------------------------------------------------------------------------

    static Stream<ClientDriver> preparing() {
        return Arrays.stream(ClientDriver.values()).filter(d -> d.prepares() != ClientDriver.Prepares.NONE);
    }

    @ParameterizedTest
    @MethodSource("preparing")
    void preparedStatementsRunAgainAndAgainAcrossServerConnections(ClientDriver driver) throws Exception {
        String key = "ps-" + driver;
        int rounds = 6;
        long since = System.currentTimeMillis();
        try (PoolWatch watch = new PoolWatch(); DriverClient client = start(driver, SESSIONS_WITH_DISTURBERS, true);
             Disturbers disturbers = new Disturbers(driver, client)) {
            Steps s = new Steps(driver, client.open(), disturbers);
            s.run("SET SESSION time_zone = '+02:00'");
            PrometheusText before = scrape();
            s.prepare("insert", "INSERT INTO t (k, v) VALUES (?, ?)");
            s.prepare("select", "SELECT v, @@time_zone, CONNECTION_ID() FROM t WHERE k = ? AND v >= ? ORDER BY v");
            for (int i = 1; i <= rounds; i++) {
                assertThat(s.execute("insert", key, String.valueOf(i))).as("%s: rows of an INSERT", driver).isEmpty();
                // The select twice: three statements a round, so that it does not land on the same one of the
                // connections the disturbers alternate between every round.
                for (int again = 0; again < 2; again++) {
                    List<List<String>> rows = s.execute("select", key, "1");
                    assertThat(rows).as("%s: round %d", driver, i).hasSize(i);
                    for (int v = 1; v <= i; v++) {
                        assertThat(rows.get(v - 1).subList(0, 2)).as("%s: round %d, row %d", driver, i, v)
                                .containsExactly(String.valueOf(v), "+02:00");
                    }
                    s.connections().add(Long.parseLong(rows.get(0).get(2)));
                }
            }
            PrometheusText after = scrape();
            double prepares = delta(before, after, "COM_STMT_PREPARE");
            double executes = delta(before, after, "COM_STMT_EXECUTE");
            if (driver.prepares() == ClientDriver.Prepares.SERVER) {
                assertThat(prepares).as("%s: COM_STMT_PREPARE from the client", driver).isGreaterThanOrEqualTo(2);
                assertThat(executes).as("%s: COM_STMT_EXECUTE from the client", driver)
                        .isGreaterThanOrEqualTo(3 * rounds);
            } else {
                assertThat(executes).as("%s quotes parameters on the client", driver).isZero();
            }
            assertCommittedRows("'" + key + "'", rounds, driver + ": rows inserted");
            assertServerConnections(driver, s, mine(since));
            s.session().close();
        }
    }

    // ---- assertions ----------------------------------------------------------------------------------------------

    /**
     * The session's server connections, and the pins of the library's sessions (the scripted one and its three
     * disturbers), per what the test expects of the library.
     */
    private static void assertServerConnections(ClientDriver driver, Steps s, List<SessionSnapshot> mine) {
        assertThat(mine).as("%s: its sessions in Sluice, the disturbers' included", driver)
                .hasSize(SESSIONS_WITH_DISTURBERS);
        Set<Long> connections = new LinkedHashSet<>(s.connections());
        switch (expect(driver)) {
            case MULTIPLEXED -> {
                assertThat(pinSummary(mine)).as("%s: pinnedBy of its sessions", driver)
                        .isEqualTo(Map.of("-", SESSIONS_WITH_DISTURBERS));
                assertThat(connections).as("%s: server connections its session ran on, statement by statement: %s",
                        driver, s.connections()).hasSizeGreaterThanOrEqualTo(2);
            }
            case PINNED_FOR_LIFE -> {
                assertPinnedForLife(driver, mine);
                assertThat(connections).as("%s: pinned, so one server connection", driver).hasSize(1);
            }
            case SESSION_POOLING -> assertThat(connections).as("%s: SESSION pooling, one server connection", driver)
                    .hasSize(1);
        }
    }

    private static void assertPinnedForLife(ClientDriver driver, List<SessionSnapshot> mine) {
        Map<String, Integer> pins = pinSummary(mine);
        assertThat(pins).as("%s is in DriverMatrixTest.PINNED_TODAY, but its sessions are not all pinned by"
                + " no_session_track (pinnedBy: %s). If it multiplexes now (issue #27, item 1), take it out of the set"
                + " so that the matrix checks it with %d idle clients on %d server connections.", driver, pins,
                IDLE_CLIENTS, MAX_POOL_SIZE).isEqualTo(Map.of("no_session_track", mine.size()));
    }

    /** Rows of {@code key} visible to a new connection straight to the server, that is committed rows. */
    private static void assertCommittedRows(String quotedKey, int expected, String what) throws SQLException {
        try (Connection c = TestMariaDb.get().connect(JdbcDriver.MARIADB, proxy.db(), "");
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM t WHERE k = " + quotedKey)) {
            rs.next();
            assertThat(rs.getInt(1)).as("%s: committed rows, read directly on the server", what).isEqualTo(expected);
        }
    }

    /** Connections in the matrix's database in the server's process list: Sluice's, since nothing else uses it. */
    private static int serverConnectionsInTheDatabase() throws SQLException {
        try (Connection c = TestMariaDb.get().rootConnection();
             PreparedStatement ps = c.prepareStatement(
                     "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = ?")) {
            ps.setString(1, proxy.db());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Sessions that connected since {@code since}: the library's, as nothing else connects meanwhile. */
    private static List<SessionSnapshot> mine(long since) {
        return proxy.sluice().sessions().stream().filter(s -> s.connectedAtMillis() >= since).toList();
    }

    /** How many sessions are pinned by what ({@code -} for not pinned). */
    private static Map<String, Integer> pinSummary(List<SessionSnapshot> sessions) {
        return sessions.stream().collect(Collectors.groupingBy(s -> s.pinnedBy() == null ? "-" : s.pinnedBy(),
                TreeMap::new, Collectors.summingInt(s -> 1)));
    }

    private static PrometheusText scrape() {
        return PrometheusText.parse(proxy.metrics().scrape());
    }

    private static double delta(PrometheusText before, PrometheusText after, String command) {
        return after.value("sluice_commands_total", "command", command)
                - before.value("sluice_commands_total", "command", command);
    }

    // ---- the scripted session and its disturbers -------------------------------------------------------------

    /** The library's session, each statement preceded by the disturbers, and the server connections it read. */
    private static final class Steps {
        private final ClientDriver driver;
        private final Session session;
        private final Disturbers disturbers;
        private final List<Long> connections = new ArrayList<>();

        Steps(ClientDriver driver, Session session, Disturbers disturbers) {
            this.driver = driver;
            this.session = session;
            this.disturbers = disturbers;
        }

        Session session() {
            return session;
        }

        /** The CONNECTION_ID() of each read-back, in order. */
        List<Long> connections() {
            return connections;
        }

        List<List<String>> run(String sql) {
            return step(sql, () -> session.query(sql));
        }

        /** Runs a one-row SELECT whose last column is CONNECTION_ID(); checks the columns before it. */
        long expect(String sql, String... expected) {
            List<List<String>> rows = run(sql);
            assertThat(rows).as("%s: %s", driver, sql).hasSize(1);
            List<String> row = rows.get(0);
            assertThat(row).as("%s: %s", driver, sql).hasSize(expected.length + 1);
            assertThat(row.subList(0, expected.length)).as("%s: %s (server connections so far: %s)", driver, sql,
                    connections).containsExactly(expected);
            long id = Long.parseLong(row.get(expected.length));
            connections.add(id);
            return id;
        }

        void prepare(String name, String sql) {
            step("prepare " + sql, () -> {
                session.prepare(name, sql);
                return null;
            });
        }

        List<List<String>> execute(String name, String... parameters) {
            return step("execute " + name + " " + List.of(parameters), () -> session.execute(name, parameters));
        }

        private <T> T step(String what, Supplier<T> action) {
            disturbers.disturb();
            try {
                return action.get();
            } catch (DriverError e) {
                throw new AssertionError(driver + ": " + what + " failed: " + e.getMessage()
                        + " (server connections so far: " + connections + ")", e);
            }
        }
    }

    /**
     * Three more sessions of the same library (a session only ever gets server connections of its own kind: same
     * capability flags and character set) that run before each statement of the scripted session. A "leaver" leaves
     * its own session state on the server connection the scripted session used last; then one of two "holders" takes
     * that connection into an open transaction (leaving other state on it) while the other holder commits and so
     * gives back the connection it held, with its state on it. The scripted session's next statement therefore runs
     * on another server connection than its last, one whose session variables are the holders'. When the scripted
     * session holds its connection (a transaction, a pin, SESSION pooling) they use the others; pinned themselves,
     * the four sessions hold the four server connections.
     */
    private static final class Disturbers implements AutoCloseable {
        private final String[] holderState;
        private final String[] leaverState;
        private final Session leaver;
        private final Session[] holders = new Session[2];
        private final boolean[] holding = new boolean[2];
        private int next;

        Disturbers(ClientDriver driver, DriverClient client) {
            // None of it is the scripted session's state. Not read-only, which would pin.
            holderState = new String[] {
                "SET SESSION sql_mode = 'ANSI,NO_BACKSLASH_ESCAPES', time_zone = '+05:30', autocommit = 0",
                driver.takesLatin1Results() ? "SET NAMES latin1"
                        : "SET character_set_connection = latin1, collation_connection = latin1_swedish_ci",
                "SET SESSION TRANSACTION ISOLATION LEVEL SERIALIZABLE",
            };
            leaverState = new String[] {
                "SET SESSION sql_mode = 'PIPES_AS_CONCAT', time_zone = '-09:00', autocommit = 1",
                "SET NAMES utf8mb4 COLLATE utf8mb4_bin",
                "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
            };
            leaver = client.open();
            holders[0] = client.open();
            holders[1] = client.open();
        }

        void disturb() {
            try {
                run(leaver, leaverState);
                Session holder = holders[next];
                run(holder, holderState);
                // No table read: under SERIALIZABLE it would lock rows the scripted session writes.
                run(holder, "START TRANSACTION", "SELECT CONNECTION_ID()");
                holding[next] = true;
                int other = 1 - next;
                if (holding[other]) {
                    run(holders[other], "COMMIT");
                    holding[other] = false;
                }
                next = other;
            } catch (DriverError e) {
                throw new AssertionError("a disturber failed: " + e.getMessage(), e);
            }
        }

        private static void run(Session session, String... statements) {
            for (String sql : statements) {
                session.query(sql);
            }
        }

        @Override
        public void close() {
            for (int i = 0; i < 2; i++) {
                if (holding[i]) {
                    run(holders[i], "COMMIT");
                }
            }
        }
    }

    /** Samples Sluice's open server connections while a test runs; fails it if they ever exceed maxPoolSize. */
    private static final class PoolWatch implements AutoCloseable {
        private final AtomicInteger max = new AtomicInteger();
        private final Thread thread;
        private volatile boolean stop;

        PoolWatch() {
            thread = new Thread(() -> {
                while (!stop) {
                    max.accumulateAndGet(proxy.sluice().backendConnections(DATA_SOURCE), Math::max);
                    try {
                        Thread.sleep(5);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "driver-matrix-pool-watch");
            thread.setDaemon(true);
            thread.start();
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            thread.join(1000);
            assertThat(max.get()).as("the most server connections Sluice had open at once")
                    .isLessThanOrEqualTo(MAX_POOL_SIZE);
        }
    }
}
