package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.balancer.replication.CausalWait;
import io.sluice.balancer.replication.GtidPosition;
import io.sluice.balancer.replication.ReplicaEligibility;
import io.sluice.balancer.replication.ReplicaEligibility.Judgement;
import io.sluice.balancer.replication.ReplicaEligibility.Verdict;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.ReplicationGroup;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The replication parts of read/write splitting against real servers: what the health check reads
 * ({@link ReplicationReading}'s queries) and how {@link ReplicaEligibility} judges it as replication stops, lags and
 * resumes; the causal read's wait ({@link CausalWait}) on a replica that has, and has not, applied a session's write;
 * and that the classifier's routes hold on the servers (a replica refuses what it sends to the primary).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("server")
class ReplicationOnMariaDbTest {

    /** The health interval these tests poll at, as a check would run. */
    private static final Duration INTERVAL = Duration.ofMillis(500);

    private static ReplicationGroup group;
    private final ReplicaEligibility rules = new ReplicaEligibility(Duration.ofSeconds(10), Long.MAX_VALUE);

    @BeforeAll
    static void start() {
        group = ReplicationGroup.start("rw");
        group.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY, v INT)",
                "INSERT INTO app.t VALUES (1, 0)");
        group.awaitCaughtUp();
    }

    @AfterAll
    static void stop() {
        if (group != null) {
            group.close();
        }
    }

    @Test
    @Order(1)
    void everyServerReadsAsItsRole() {
        ReplicationReading primary = read(group.primary());
        assertThat(primary.replica()).isFalse();
        assertThat(ReplicaEligibility.judgePrimary(primary).usable()).isTrue();
        assertThat(primary.applied().toString()).isEqualTo(group.primaryPosition());
        for (ExtraMariaDb replica : group.replicas()) {
            ReplicationReading reading = read(replica);
            assertThat(reading.replica()).isTrue();
            assertThat(reading.readOnly()).isTrue();
            assertThat(reading.received().isAtOrPast(primary.applied())).isTrue();
            // MariaDB's Master_Host and Master_Port: what the failover's agreement checks (decision 185).
            assertThat(reading.replicatesFrom(TestMariaDb.HOST, group.primary().port())).as(reading.source()).isTrue();
            assertThat(reading.replicatesFrom(TestMariaDb.HOST, replica.port())).isFalse();
            Judgement judgement = rules.judge(reading, primary.applied());
            assertThat(judgement.verdict()).as(judgement.detail()).isEqualTo(Verdict.USABLE);
            assertThat(judgement.transactionsBehind()).isZero();
        }
        assertThat(rules.judge(read(group.primary()), primary.applied()).verdict()).isEqualTo(Verdict.NOT_A_REPLICA);
    }

    @Test
    @Order(2)
    void aStoppedSqlThreadIsSeenWithinOneIntervalAndItsReturnToo() {
        group.stopApplying(1);
        long stopped = System.nanoTime();
        Judgement judgement = awaitVerdict(1, j -> !j.usable());
        assertThat(judgement.verdict()).isEqualTo(Verdict.SQL_STOPPED);
        assertThat(Duration.ofNanos(System.nanoTime() - stopped)).isLessThanOrEqualTo(INTERVAL.multipliedBy(2));

        group.primary().execute("UPDATE app.t SET v = 1 WHERE id = 1");
        assertThat(awaitVerdict(1, j -> j.transactionsBehind() == 1).verdict()).isEqualTo(Verdict.SQL_STOPPED);
        assertThat(rules.judge(read(group.replica(0)), position(group.primary())).usable()).isTrue();

        group.startApplying(1);
        long started = System.nanoTime();
        assertThat(awaitVerdict(1, Judgement::usable).usable()).isTrue();
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThanOrEqualTo(INTERVAL.multipliedBy(2));
        group.awaitApplied(1, group.primaryPosition()); // usable as soon as it applies again; caught up just after
        assertThat(rules.judge(read(group.replica(1)), position(group.primary())).transactionsBehind()).isZero();
    }

    @Test
    @Order(3)
    void aStoppedReplicaIsSeenAsStopped() {
        group.stopReplication(0);
        assertThat(awaitVerdict(0, j -> !j.usable()).verdict()).isEqualTo(Verdict.IO_STOPPED);
        group.startReplication(0);
        assertThat(awaitVerdict(0, Judgement::usable).usable()).isTrue();
    }

    @Test
    @Order(4)
    void aCausalReadWaitsForTheSessionsWriteOnTheReplica() throws SQLException {
        String lastGtid;
        try (Connection c = group.primary().rootConnection(); Statement s = c.createStatement()) {
            group.stopApplying(0);
            s.execute("UPDATE app.t SET v = 2 WHERE id = 1");
            try (ResultSet rs = s.executeQuery("SELECT @@last_gtid")) {
                rs.next();
                lastGtid = rs.getString(1);
            }
        }
        GtidPosition position = GtidPosition.parse(lastGtid);
        String wait = CausalWait.sql(position, Duration.ofMillis(200));
        assertThat(wait).isEqualTo("SELECT MASTER_GTID_WAIT('" + lastGtid + "', 0.2)");
        long begin = System.nanoTime();
        assertThat(CausalWait.read(position, queryOne(group.replica(0), wait)))
                .isEqualTo(CausalWait.Outcome.TIMED_OUT);
        assertThat(Duration.ofNanos(System.nanoTime() - begin)).isBetween(Duration.ofMillis(150),
                Duration.ofSeconds(5));
        assertThat(CausalWait.read(position, queryOne(group.replica(1), wait))).isEqualTo(CausalWait.Outcome.REACHED);
        assertThat(queryOne(group.replica(1), "SELECT v FROM app.t WHERE id = 1")).isEqualTo("2");

        group.startApplying(0);
        assertThat(CausalWait.read(position, queryOne(group.replica(0),
                CausalWait.sql(position, Duration.ofSeconds(30))))).isEqualTo(CausalWait.Outcome.REACHED);
        assertThat(queryOne(group.replica(0), "SELECT v FROM app.t WHERE id = 1")).isEqualTo("2");
        assertThat(read(group.replica(0)).applied().isAtOrPast(position)).isTrue();
    }

    @Test
    @Order(5)
    void whatTheClassifierSendsToThePrimaryAReplicaRefuses() throws SQLException {
        group.primary().execute("CREATE USER IF NOT EXISTS app@'127.0.0.1' IDENTIFIED BY 'pw'",
                "GRANT ALL ON app.* TO app@'127.0.0.1'");
        group.awaitCaughtUp();
        String[] writes = {"INSERT INTO app.t VALUES (9, 9)", "UPDATE app.t SET v = 3", "DELETE FROM app.t",
            "CREATE TABLE app.u (a INT)", "SELECT v FROM app.t FOR UPDATE"};
        for (String sql : writes) {
            assertThat(StatementClassifier.route(StatementClassifier.classify(sql))).as(sql).isEqualTo(Route.PRIMARY);
        }
        // read_only refuses writes from an account without READ ONLY ADMIN (root has it, so use an application's)
        try (Connection c = java.sql.DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + group.replica(0).port()
                + "/app", "app", "pw"); Statement s = c.createStatement()) {
            for (String sql : new String[] {"INSERT INTO app.t VALUES (9, 9)", "UPDATE app.t SET v = 3"}) {
                try {
                    s.execute(sql);
                    throw new AssertionError("the replica took " + sql);
                } catch (SQLException e) {
                    assertThat(e.getErrorCode()).as(sql).isEqualTo(1290); // ER_OPTION_PREVENTS_STATEMENT
                }
            }
            assertThat(StatementClassifier.route(StatementClassifier.classify("SELECT v FROM app.t")))
                    .isEqualTo(Route.REPLICA);
            try (ResultSet rs = s.executeQuery("SELECT v FROM app.t")) {
                assertThat(rs.next()).isTrue();
            }
        }
    }

    private Judgement awaitVerdict(int replica, Predicate<Judgement> wanted) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            Judgement judgement = rules.judge(read(group.replica(replica)), position(group.primary()));
            if (wanted.test(judgement)) {
                return judgement;
            }
            assertThat(System.nanoTime()).as("replica %d: %s", replica, judgement).isLessThan(deadline);
            sleep(INTERVAL);
        }
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static GtidPosition position(ExtraMariaDb server) {
        return read(server).applied();
    }

    /** One health reading, as the check would take it: the variables, then the replica status. */
    static ReplicationReading read(ExtraMariaDb server) {
        try (Connection c = server.rootConnection(); Statement s = c.createStatement()) {
            boolean readOnly;
            String current;
            String slave;
            try (ResultSet rs = s.executeQuery(ReplicationReading.MARIADB_VARIABLES)) {
                rs.next();
                readOnly = ReplicationReading.isOn(rs.getString(1));
                current = rs.getString(2);
                slave = rs.getString(3);
            }
            Map<String, String> status = new LinkedHashMap<>();
            try (ResultSet rs = s.executeQuery(ReplicationReading.REPLICA_STATUS)) {
                if (rs.next()) {
                    ResultSetMetaData meta = rs.getMetaData();
                    for (int i = 1; i <= meta.getColumnCount(); i++) {
                        status.put(meta.getColumnLabel(i), rs.getString(i));
                    }
                }
            }
            return ReplicationReading.of(server.name(), readOnly, current, status.isEmpty() ? null : slave, status);
        } catch (SQLException e) {
            return ReplicationReading.unreachable(server.name(), e.getMessage());
        }
    }

    private static String queryOne(ExtraMariaDb server, String sql) {
        try (Connection c = server.rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new IllegalStateException(server + ": " + sql, e);
        }
    }
}
