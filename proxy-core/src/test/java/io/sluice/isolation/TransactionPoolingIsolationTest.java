package io.sluice.isolation;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.PoolingConfig;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Isolation in {@code pooling: TRANSACTION} on one data source (issue #38): four sessions of two proxy users share
 * four server connections on one event loop, so a connection one session gives back is the next one another takes;
 * every state kind of the corpus, made every way the server allows, must stay with the session that made it.
 *
 * <p>No JUnit timeout: a long run ({@code benchmark/isolation/run.sh}) takes as long as it takes, and no corpus
 * statement blocks (the sessions' socket timeout would turn a hang into a mismatch).
 */
@Tag("server")
class TransactionPoolingIsolationTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults()
            .sluiceOnly("compares sessions through Sluice with sessions straight to MariaDB")
            .database("sluice_iso_tx");

    private static IsolationHarness harness;

    @BeforeAll
    static void setUp() throws Exception {
        IsolationHarness.Settings settings = IsolationHarness.Settings.fromProperties(20);
        IsolationHarness.Server server = new IsolationHarness.Server(TestMariaDb.HOST, TestMariaDb.get().port());
        harness = new IsolationHarness(new IsolationSchema(proxy.db()), server, List.of(server), () -> {
            ProxyUnderTest sluice = ProxyUnderTest.builder()
                    .pooling(PoolingConfig.transaction())
                    .maxPoolSize(settings.sessions())
                    .workerThreads(1)
                    .connectionTimeoutMillis(5_000)
                    .start();
            return new IsolationHarness.RunningProxy(sluice.sluice(), proxy.db(), sluice);
        }, List.of(StateKind.values()));
        harness.setUp();
    }

    /** Each kind of state made each way, in a fixed scenario: a table of what leaks, or what its owner loses. */
    @Test
    void noKindOfStateLeaksWhicheverWayItIsMade() throws Exception {
        harness.checkEveryWay("transaction pooling, one data source");
    }

    /**
     * Each kind a server-side prepared statement makes, made again by the statement its driver keeps prepared: after
     * its end, or twice before one end. Before decision 202 a prepared GET_LOCK counted its lock once, at the
     * prepare: the connection went back to the pool with the lock taken again, and the other user's session got it.
     */
    @Test
    void aStateMadeAgainByTheSamePreparedStatementStaysWithItsSession() throws Exception {
        harness.checkMadeAgain("transaction pooling, one data source");
    }

    /**
     * The long run's seed 117161, shrunk: a trigger's SET TRANSACTION READ ONLY, a SET timestamp (Sluice reads the
     * clock back: its own statement on the connection), then a server-side prepared UPDATE whose prepare the read-only
     * transaction refuses (1792). The refused prepare leaves the server's ROW_COUNT() at -1; Sluice, writing the
     * session's own value into a prepared ROW_COUNT(), still had the SET's 0.
     */
    @Test
    void rowCountAfterARefusedPrepareIsMinusOne() throws Exception {
        List<Step> steps = List.of(
                Step.make(1, StateKind.NEXT_TRANSACTION, Way.TRIGGER, 9),
                Step.make(1, StateKind.TIMESTAMP, Way.DIRECT, 15),
                Step.make(1, StateKind.ROW_COUNT, Way.SERVER_PREPARED, 29),
                new Step(1, Step.Action.PROBE, StateKind.ROW_COUNT, null, 1, 30));
        IsolationHarness.Outcome outcome = harness.run(steps, 2);
        assertThat(outcome.unstable()).isEmpty();
        assertThat(outcome.mismatch()).as("direct %s%nsluice %s", outcome.direct(), outcome.proxied()).isEqualTo(-1);
        assertThat(outcome.proxied().get(3)).contains("rows=[[-1]]");
    }

    @Test
    void everySessionSeesOnlyItsOwnState() throws Exception {
        harness.check("transaction pooling, one data source", IsolationHarness.Settings.fromProperties(20));
    }
}
