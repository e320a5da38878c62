package io.sluice.isolation;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.ReadWriteCounts;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.PoolingMode;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.Transport;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.ReplicationGroup;
import io.sluice.testing.TestMariaDb;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Isolation behind a read/write split group (issue #38, mode b): a primary and two replicas of its own, sessions
 * connected to the group, so that reads and probes may run on a replica while the state was made on the primary.
 * The ground truth is each session on a connection of its own to the primary. Every state kind of the corpus makes
 * sense here: a session's state must follow its reads to whichever server runs them, or keep them where it is; the
 * replica lag does not show, since causal reads (the default) wait for what the session wrote.
 */
@Tag("server")
@ExtendWith(LeakDetection.class)
class ReadWriteSplitIsolationTest {

    private static final String SCHEMA = "app";
    /**
     * The backend account, direct and through Sluice: not root, whose privileges (READ ONLY ADMIN) let a write that
     * reaches a replica through, where it enters the replica's binary log and stops its replication for good.
     */
    private static final String ACCOUNT = "iso";
    private static final String ACCOUNT_PASSWORD = "iso-secret";
    private static ReplicationGroup servers;
    /** Created on the primary (and so on the replicas) by the first test, used as it is by the next. */
    private static final IsolationSchema schema = new IsolationSchema(SCHEMA);

    @BeforeAll
    static void start() {
        servers = ReplicationGroup.start("iso");
        // The corpus's stored functions are NOT DETERMINISTIC and modify data: with a binary log MariaDB creates
        // them only when trusted (1418). These servers are the test's own.
        servers.primary().execute("SET GLOBAL log_bin_trust_function_creators = 1", "CREATE DATABASE " + SCHEMA,
                "CREATE USER '" + ACCOUNT + "'@'%' IDENTIFIED BY '" + ACCOUNT_PASSWORD + "'",
                "GRANT ALL ON " + SCHEMA + ".* TO '" + ACCOUNT + "'@'%'",
                // What Sluice's replica watch reads: SHOW REPLICA STATUS and the primary's GTID position.
                "GRANT SLAVE MONITOR, BINLOG MONITOR ON *.* TO '" + ACCOUNT + "'@'%'");
        servers.replicas().forEach(r -> r.execute("SET GLOBAL log_bin_trust_function_creators = 1"));
        servers.awaitCaughtUp();
    }

    @AfterAll
    static void stop() {
        if (servers != null) {
            servers.close();
        }
    }

    @ParameterizedTest
    @EnumSource(PoolingMode.class)
    void everySessionSeesOnlyItsOwnStateWhereverItsStatementsRun(PoolingMode pooling) throws Exception {
        // Three per pooling mode on CI: each run waits for the replicas twice and for the replica watch once.
        IsolationHarness.Settings settings = IsolationHarness.Settings.fromProperties(3);
        IsolationHarness harness = harness(pooling, settings.sessions())
                // Reads, the CONNECTION_ID() probe among them, go to the replicas in turn: the ids it reads are of
                // different servers and tell nothing of sharing here. Modes a and c check it.
                .expectSharing(false);
        harness.setUp();
        servers.awaitCaughtUp();
        harness.check("read/write split, " + pooling + " pooling", settings);
    }

    /**
     * {@link LastInsertIdIsolationTest}'s sequences behind the split (transaction pooling): code the text does not show
     * goes to the primary, on a connection taken for it, which gets the session's last-insert id first.
     */
    @Test
    void codeTheTextDoesNotShowReadsOnlyTheSessionsOwnLastInsertId() throws Exception {
        IsolationHarness harness = harness(PoolingMode.TRANSACTION, LastInsertIdIsolationTest.SESSIONS);
        harness.setUp();
        servers.awaitCaughtUp();
        for (LastInsertIdIsolationTest.Sequence sequence : LastInsertIdIsolationTest.ALL) {
            LastInsertIdIsolationTest.assertSameBothWays(harness, sequence);
        }
    }

    /**
     * The split long run's seed 55, shrunk: a read that fails on a replica keeps the session there for its next
     * statement (its diagnostics); the next is a server-side prepared {@code DO GET_LOCK(...)}, whose prepare runs on
     * that replica. Pinned at the prepare, the session could not take the execute to the primary: the lock was taken
     * on the replica, and the session's INSERT after it stayed there too and was refused (1290). In both pooling
     * modes, each step compared with the same steps on a connection of its own to the primary.
     */
    @ParameterizedTest
    @EnumSource(PoolingMode.class)
    void aLockPreparedOnAReplicaIsTakenOnThePrimary(PoolingMode pooling) throws Exception {
        List<String> proxied = assertSameAsDirect(pooling, List.of(
                new Step(0, Step.Action.PROBE, StateKind.SYSTEM_VARIABLE, null, 1, 1), // 1690, on a replica
                Step.make(0, StateKind.NAMED_LOCK, Way.SERVER_PREPARED, 2),
                new Step(0, Step.Action.PROBE, StateKind.INSERT_ID, null, 1, 3), // INSERT INTO ai
                new Step(0, Step.Action.PROBE, StateKind.NAMED_LOCK, null, 0, 4), // IS_USED_LOCK: its own
                new Step(1, Step.Action.PROBE, StateKind.NAMED_LOCK, null, 1, 5), // GET_LOCK: 0, taken
                new Step(0, Step.Action.END, StateKind.NAMED_LOCK, null, 0, 6)));
        assertThat(proxied.get(2)).contains("UpdateCount[count=1]");
        assertThat(proxied.get(3)).contains("rows=[[1]]");
        assertThat(proxied.get(4)).contains("rows=[[0]]");
    }

    /**
     * The moves long run's seed 32426 behind the split: a server-side prepared {@code DO GET_LOCK(...)} that its
     * driver keeps prepared, executed again after its release (or twice before one release). Counted once, at its
     * prepare, the lock taken again was not counted: the session let the primary's connection go with it, and the
     * other user's session got that connection and the lock.
     */
    @ParameterizedTest
    @EnumSource(PoolingMode.class)
    void aLockTakenAgainByTheSamePreparedStatementStaysWithItsSession(PoolingMode pooling) throws Exception {
        for (boolean endedBetween : new boolean[] {true, false}) {
            List<Step> steps = new ArrayList<>(Interleaving.madeAgain(StateKind.NAMED_LOCK, Way.SERVER_PREPARED,
                    endedBetween));
            List<String> proxied = assertSameAsDirect(pooling, steps);
            assertThat(proxied.get(3)).as("the other user's IS_USED_LOCK = CONNECTION_ID()").contains("rows=[[0]]");
            assertThat(proxied.get(4)).as("the other user's GET_LOCK").contains("rows=[[0]]");
            assertThat(proxied.get(5)).as("the owner's IS_USED_LOCK = CONNECTION_ID()").contains("rows=[[1]]");
        }
    }

    /**
     * The split long run's seeds 184 and 324, shrunk: held on a replica by its diagnostics, a session's
     * {@code SELECT SQL_CALC_FOUND_ROWS ... INTO @v} (which belongs on the primary) was kept there because the user
     * variable it names itself counted as one to read back first; pinned there by it, the session's next statement,
     * a stored function that writes, ran on the replica and was refused (1792).
     */
    @ParameterizedTest
    @EnumSource(PoolingMode.class)
    void aStatementThatNamesAUserVariableMayStillLeaveTheReplica(PoolingMode pooling) throws Exception {
        List<String> proxied = assertSameAsDirect(pooling, List.of(
                new Step(0, Step.Action.PROBE, StateKind.SYSTEM_VARIABLE, null, 1, 1), // 1690, on a replica
                Step.make(0, StateKind.FOUND_ROWS, Way.DIRECT, 2),
                Step.make(0, StateKind.LAST_INSERT_ID, Way.FUNCTION_DO, 3)));
        assertThat(proxied.get(2)).doesNotContain("1792");
    }

    /**
     * The split long run's seed 335, shrunk: held on a replica by the warnings its last statement left there, a
     * session's server-side prepare of an INSERT was prepared on that replica, which refused it (1792); directly it
     * prepares. A prepare of what leaves a replica now goes to the primary when only those warnings hold the replica.
     */
    @ParameterizedTest
    @EnumSource(PoolingMode.class)
    void aWritePreparedAfterWarningsOnAReplicaIsPreparedOnThePrimary(PoolingMode pooling) throws Exception {
        List<String> proxied = assertSameAsDirect(pooling, List.of(
                Step.make(0, StateKind.WARNINGS, Way.DIRECT, 1), // a read that leaves a warning, on a replica
                Step.make(0, StateKind.LAST_INSERT_ID, Way.SERVER_PREPARED, 2)));
        assertThat(proxied.get(1)).contains("UpdateCount[count=1]");
    }

    /**
     * Runs {@code steps} (two sessions, transaction or session pooling) directly on the primary and through the
     * split, and fails at the first step seen differently.
     *
     * @return what each step observed through Sluice
     */
    private static List<String> assertSameAsDirect(PoolingMode pooling, List<Step> steps) throws Exception {
        IsolationHarness harness = harness(pooling, 2);
        harness.setUp();
        servers.awaitCaughtUp();
        IsolationHarness.Outcome outcome = harness.run(steps, 2);
        StringBuilder seen = new StringBuilder();
        List<String> proxied = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            proxied.add(IsolationHarness.brief(outcome.proxied().get(i)));
            seen.append('#').append(i).append(' ').append(steps.get(i).describe(schema)).append("\n  direct: ")
                    .append(IsolationHarness.brief(outcome.direct().get(i))).append("\n  sluice: ")
                    .append(proxied.get(i)).append('\n');
        }
        assertThat(outcome.unstable()).as("unstable directly\n%s", seen).isEmpty();
        assertThat(outcome.mismatch()).as("first step seen differently through Sluice\n%s", seen).isEqualTo(-1);
        return proxied;
    }

    /**
     * The harness over the group's servers, directly the primary. Another session's write is on the primary before
     * the next step directly, and on a replica only once applied there (causal reads wait for a session's own writes,
     * not for others'): the replicas catch up before each step through Sluice, so that a probe compares state, not
     * replication lag (the long run's seed 245: another session's autocommit INSERT not yet on the replica that ran
     * a COUNT(*)).
     */
    private static IsolationHarness harness(PoolingMode pooling, int sessions) {
        List<IsolationHarness.Server> all = new ArrayList<>();
        all.add(server(servers.primary()));
        servers.replicas().forEach(r -> all.add(server(r)));
        return new IsolationHarness(schema, all.get(0), all, () -> start(pooling, sessions),
                List.of(StateKind.values()))
                .account(ACCOUNT, ACCOUNT_PASSWORD)
                .afterReset(servers::awaitCaughtUp)
                .beforeEachStep(sluice -> servers.awaitCaughtUp());
    }

    private static IsolationHarness.Server server(ExtraMariaDb db) {
        return new IsolationHarness.Server(TestMariaDb.HOST, db.port());
    }

    private static IsolationHarness.RunningProxy start(PoolingMode pooling, int sessions) throws Exception {
        ProxyConfig.Builder config = ProxyConfig.builder()
                .server(new ServerConfig("127.0.0.1", 0, 1, ServerConfig.DEFAULT_CONN_BUFFER_SIZE,
                        ServerConfig.DEFAULT_MAX_CONNECTIONS, null, ServerConfig.DEFAULT_MAX_PACKET_SIZE,
                        Transport.AUTO))
                .healthCheck(new HealthCheckConfig(200, 1000, 1, 2))
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .user(ProxyUnderTest.USER2, ProxyUnderTest.PASSWORD2)
                .pooling(new PoolingConfig(pooling, PoolingConfig.DEFAULT_PREPARED_STATEMENT_CACHE_SIZE))
                .dataSource(dataSource("primary", servers.primary(), sessions));
        for (int i = 0; i < servers.replicas().size(); i++) {
            config.dataSource(dataSource("replica_" + i, servers.replica(i), sessions));
        }
        Sluice sluice = Sluice.start(config.readWriteSplitting(servers.splitGroup("app_rw")).build());
        awaitReplicasUsable(sluice);
        return new IsolationHarness.RunningProxy(sluice, "app_rw", sluice);
    }

    /** Reads go to the primary until the replica watch has seen the replicas caught up: wait for that. */
    private static void awaitReplicasUsable(Sluice sluice) throws InterruptedException {
        ReadWriteCounts group = sluice.metricSources().readWrite().get(0);
        long deadline = System.nanoTime() + 10_000_000_000L;
        for (int i = 0; i < servers.replicas().size(); i++) {
            while (!group.usable(i)) {
                assertThat(System.nanoTime()).as("replica %d never usable", i).isLessThan(deadline);
                Thread.sleep(20);
            }
        }
    }

    private static DataSourceConfig dataSource(String name, ExtraMariaDb server, int sessions) {
        return new DataSourceConfig(name, server.jdbcUrl(SCHEMA), ACCOUNT, ACCOUNT_PASSWORD,
                3000, 60_000, 600_000, sessions, 0, 1, false);
    }
}
