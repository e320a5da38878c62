package io.sluice.isolation;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.PoolingMode;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.Transport;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Isolation while sessions move between data sources (issue #38, mode c): two data sources that are the same
 * MariaDB (as in MoveDifferentialTest: the data is the same, only connections differ), and before every step the
 * one in use is drained and the other undrained, so that every session that can move moves at its next transaction
 * boundary, onto a connection of the other pool that other sessions used before. In both pooling modes.
 */
@Tag("server")
class MovedSessionIsolationTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults()
            .sluiceOnly("compares sessions through Sluice with sessions straight to MariaDB")
            .database("sluice_iso_mv");

    private static IsolationSchema schema;

    @BeforeAll
    static void createSchema() {
        schema = new IsolationSchema(proxy.db());
    }

    @ParameterizedTest
    @EnumSource(PoolingMode.class)
    void everySessionSeesOnlyItsOwnStateWhileMoved(PoolingMode pooling) throws Exception {
        // SESSION pooling's moves have known limits (docs/isolation.md: a stored function's state, SET timestamp,
        // FOUND_ROWS() and ROW_COUNT() are not carried): CI runs TRANSACTION pooling's, a long run both.
        Assumptions.assumeTrue(
                pooling == PoolingMode.TRANSACTION || Boolean.getBoolean("sluice.isolation.allScenarios"),
                "SESSION pooling's moves run with -Dsluice.isolation.allScenarios=true (known limits, docs/isolation.md)");
        IsolationHarness.Settings settings = IsolationHarness.Settings.fromProperties(6);
        IsolationHarness.Server server = new IsolationHarness.Server(TestMariaDb.HOST, TestMariaDb.get().port());
        IsolationHarness harness = new IsolationHarness(schema, server, List.of(server),
                () -> start(pooling, settings.sessions()), List.of(StateKind.values()))
                .beforeEachStep(MovedSessionIsolationTest::flip)
                .expectSharing(false);
        harness.setUp();
        try {
            harness.check("sessions moved between two data sources, " + pooling + " pooling", settings);
        } catch (AssertionError mismatches) {
            assertMoved(harness, settings.interleavings(), mismatches);
            throw mismatches;
        }
        assertMoved(harness, settings.interleavings(), null);
    }

    /** Each kind of state made each way, in a fixed scenario, with a move before every step. */
    @ParameterizedTest
    @EnumSource(PoolingMode.class)
    void noKindOfStateIsLostOrLeftBehindWhenMoved(PoolingMode pooling) throws Exception {
        // About 40 s per pooling mode: CI runs TRANSACTION pooling's, a long run both (reported skipped, not silent).
        Assumptions.assumeTrue(
                pooling == PoolingMode.TRANSACTION || Boolean.getBoolean("sluice.isolation.allScenarios"),
                "SESSION pooling's scenarios run with -Dsluice.isolation.allScenarios=true (about 40 s)");
        checkScenariosMoved(pooling, List.of(StateKind.values()), IsolationHarness::checkEveryWay);
    }

    /**
     * As {@code TransactionPoolingIsolationTest}'s made-again scenarios, with a move before every step: the moves
     * long run's seed 32426 (a prepared GET_LOCK executed again after its release left the session free to move
     * without its lock, and the other user's session got the connection holding it). Session pooling follows only the
     * lock functions from the statements (what else a session has, its server tells at a move): its named lock.
     */
    @ParameterizedTest
    @EnumSource(PoolingMode.class)
    void aStateMadeAgainByTheSamePreparedStatementMovesWithItsSession(PoolingMode pooling) throws Exception {
        checkScenariosMoved(pooling,
                pooling == PoolingMode.TRANSACTION ? List.of(StateKind.values()) : List.of(StateKind.NAMED_LOCK),
                IsolationHarness::checkMadeAgain);
    }

    /** A fixed-scenario check of the harness ({@code checkEveryWay}, {@code checkMadeAgain}), for a mode's name. */
    @FunctionalInterface
    private interface ScenarioCheck {
        void check(IsolationHarness harness, String mode) throws Exception;
    }

    /**
     * Runs {@code check} over {@code kinds} for two sessions with a move before every step, then checks that they
     * moved (also when the check failed).
     */
    private static void checkScenariosMoved(PoolingMode pooling, List<StateKind> kinds, ScenarioCheck check)
            throws Exception {
        IsolationHarness.Server server = new IsolationHarness.Server(TestMariaDb.HOST, TestMariaDb.get().port());
        IsolationHarness harness = new IsolationHarness(schema, server, List.of(server), () -> start(pooling, 2),
                kinds).beforeEachStep(MovedSessionIsolationTest::flip);
        harness.setUp();
        try {
            check.check(harness, "sessions moved between two data sources, " + pooling + " pooling");
        } catch (AssertionError mismatches) {
            assertMoved(harness, 1, mismatches);
            throw mismatches;
        }
        assertMoved(harness, 1, null);
    }

    /**
     * {@link LastInsertIdIsolationTest}'s sequences with a move before every step (transaction pooling): a session
     * that moved runs code the text does not show on a connection of the other pool, which gets its last-insert id
     * first.
     */
    @Test
    void codeTheTextDoesNotShowReadsOnlyTheSessionsOwnLastInsertIdWhenMoved() throws Exception {
        IsolationHarness.Server server = new IsolationHarness.Server(TestMariaDb.HOST, TestMariaDb.get().port());
        IsolationHarness harness = new IsolationHarness(schema, server, List.of(server),
                () -> start(PoolingMode.TRANSACTION, LastInsertIdIsolationTest.SESSIONS), List.of(StateKind.values()))
                .beforeEachStep(MovedSessionIsolationTest::flip);
        harness.setUp();
        for (LastInsertIdIsolationTest.Sequence sequence : LastInsertIdIsolationTest.ALL) {
            LastInsertIdIsolationTest.assertSameBothWays(harness, sequence);
        }
        assertMoved(harness, LastInsertIdIsolationTest.ALL.size(), null);
    }

    /**
     * Else nothing was tested: the sessions never left their first connection. Checked after the comparison, also
     * when it failed ({@code mismatches}, kept as the cause), but never instead of another error.
     */
    private static void assertMoved(IsolationHarness harness, long atLeast, AssertionError mismatches) {
        if (harness.moves() < atLeast) {
            throw new AssertionError("Sluice counted " + harness.moves() + " moves, expected at least " + atLeast
                    + ": the sessions did not move, so this tested nothing", mismatches);
        }
    }

    /** Drains the data source not drained, undrains the other: sessions leave at their next chance. */
    private static void flip(Sluice sluice) {
        boolean xDrained = Boolean.TRUE.equals(drainedX.get(sluice));
        sluice.undrain(xDrained ? "x" : "y");
        sluice.drain(xDrained ? "y" : "x");
        drainedX.put(sluice, !xDrained);
    }

    /** Per proxy (one per run): whether x is the drained one now. */
    private static final Map<Sluice, Boolean> drainedX = Collections.synchronizedMap(new WeakHashMap<>());

    private static IsolationHarness.RunningProxy start(PoolingMode pooling, int sessions) {
        ProxyConfig config = ProxyConfig.builder()
                .server(new ServerConfig("127.0.0.1", 0, 1, ServerConfig.DEFAULT_CONN_BUFFER_SIZE,
                        ServerConfig.DEFAULT_MAX_CONNECTIONS, null, ServerConfig.DEFAULT_MAX_PACKET_SIZE,
                        Transport.AUTO))
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .user(ProxyUnderTest.USER2, ProxyUnderTest.PASSWORD2)
                .loadBalancer(Policy.FIRST_AVAILABLE)
                .healthCheck(new HealthCheckConfig(200, 1000, 1, 3))
                .pooling(new PoolingConfig(pooling, PoolingConfig.DEFAULT_PREPARED_STATEMENT_CACHE_SIZE))
                .dataSource(dataSource("x", sessions))
                .dataSource(dataSource("y", sessions))
                .build();
        Sluice sluice = Sluice.start(config);
        return new IsolationHarness.RunningProxy(sluice, proxy.db(), sluice);
    }

    private static DataSourceConfig dataSource(String name, int sessions) {
        return new DataSourceConfig(name, TestMariaDb.get().jdbcUrl(null), TestMariaDb.ROOT_USER,
                TestMariaDb.ROOT_PASSWORD, 3000, 60_000, 600_000, sessions, 0, 1, false);
    }
}
