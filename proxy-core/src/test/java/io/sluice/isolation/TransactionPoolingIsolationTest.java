package io.sluice.isolation;

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

    @Test
    void everySessionSeesOnlyItsOwnState() throws Exception {
        harness.check("transaction pooling, one data source", IsolationHarness.Settings.fromProperties(20));
    }
}
