package io.sluice.isolation;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.PoolingConfig;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code LAST_INSERT_ID()} after code the text does not show (issue #38, seeds 132, 145, 243, 289, 458 and 551 of the
 * long run of {@link TransactionPoolingIsolationTest}, shrunk): a session that runs {@code EXECUTE IMMEDIATE}, a
 * {@code CALL} or a stored function stays on its connection, and its {@code LAST_INSERT_ID()} is then the server's,
 * which a procedure may have changed. The server's value on a connection that served another session before was that
 * session's: the session saw another's id, or lost its own. Two sessions of the two proxy users (the same driver, so
 * they share server connections: the one given back last is the one taken next), fixed sequences, each compared with
 * the same steps on connections of their own.
 */
@Tag("server")
class LastInsertIdIsolationTest {

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults()
            .sluiceOnly("compares sessions through Sluice with sessions straight to MariaDB")
            .database("sluice_iso_lid");

    static final int SESSIONS = 2;

    private static IsolationHarness harness;

    @BeforeAll
    static void setUp() throws Exception {
        IsolationHarness.Server server = new IsolationHarness.Server(TestMariaDb.HOST, TestMariaDb.get().port());
        harness = new IsolationHarness(new IsolationSchema(proxy.db()), server, List.of(server), () -> {
            ProxyUnderTest sluice = ProxyUnderTest.builder()
                    .pooling(PoolingConfig.transaction())
                    .maxPoolSize(SESSIONS)
                    .workerThreads(1)
                    .connectionTimeoutMillis(5_000)
                    .start();
            return new IsolationHarness.RunningProxy(sluice.sluice(), proxy.db(), sluice);
        }, List.of(StateKind.values()));
        harness.setUp();
    }

    /**
     * Seeds 145 and 243: the id another session generated on the connection, read through the trust in the server.
     */
    static final Sequence ANOTHER_SESSIONS_ID = new Sequence(List.of(
            Step.make(0, StateKind.LAST_INSERT_ID, Way.DIRECT, 1), // id 1, on the connection s1 takes next
            Step.make(1, StateKind.ROW_COUNT, Way.EXECUTE_IMMEDIATE, 2), // code the text does not show: s1 stays
            probe(1, 3), // s1 inserted nothing
            probe(0, 4)), 0, 1);

    /** Seeds 458 and 551: the session's own id lost where another session's stood on the connection it ran code on. */
    static final Sequence OWN_ID_ON_A_CONNECTION_TAKEN = new Sequence(List.of(
            Step.make(0, StateKind.LAST_INSERT_ID, Way.DIRECT, 1), // id 1
            end(1, 2), // DO LAST_INSERT_ID(0): s1's 0 on the connection s0 gave back
            Step.make(0, StateKind.ROW_COUNT, Way.EXECUTE_IMMEDIATE, 3), // s0 takes it back and stays
            probe(0, 4),
            probe(1, 5)), 1, 0);

    /** Seeds 132 and 289: the code runs on a connection held for another pin, not the one the session inserted on. */
    static final Sequence OWN_ID_ON_A_CONNECTION_HELD = new Sequence(List.of(
            Step.make(0, StateKind.LAST_INSERT_ID, Way.DIRECT, 1), // id 1 on the connection s1 takes next
            Step.make(1, StateKind.TEMPORARY_TABLE, Way.DIRECT, 2), // s1 keeps that one
            Step.make(0, StateKind.TEMPORARY_TABLE, Way.DIRECT, 3), // s0 keeps the other one
            Step.make(0, StateKind.ROW_COUNT, Way.EXECUTE_IMMEDIATE, 4), // code on the one s0 holds
            probe(0, 5),
            probe(1, 6)), 1, 0);

    /** What the trust in the server is for: an id generated inside a procedure is the session's, and only its. */
    static final Sequence ID_OF_A_PROCEDURE = new Sequence(List.of(
            Step.make(0, StateKind.LAST_INSERT_ID, Way.DIRECT, 1), // id 1
            Step.make(1, StateKind.LAST_INSERT_ID, Way.DIRECT, 2), // id 2, on the same connection
            Step.make(0, StateKind.LAST_INSERT_ID, Way.PROCEDURE, 3), // id 3, inside the procedure
            probe(0, 4),
            probe(1, 5),
            Step.make(1, StateKind.ROW_COUNT, Way.PROCEDURE, 6), // code that inserts nothing
            probe(1, 7)), 3, 2, 2);

    /**
     * The id read by an INSERT (a child row with its parent's id) and by a server-prepared SELECT: neither was
     * answered with the session's id (only a text SELECT was), so each read the server's, the other session's.
     */
    static final Sequence READ_BY_AN_INSERT_AND_A_PREPARED_SELECT = new Sequence(List.of(
            Step.make(0, StateKind.LAST_INSERT_ID, Way.DIRECT, 1), // id 1
            Step.make(1, StateKind.LAST_INSERT_ID, Way.DIRECT, 2), // id 2, on the same connection
            probe(0, 1, 3), // INSERT INTO lid (v) VALUES (LAST_INSERT_ID()) RETURNING v
            probe(0, 2, 4), // the prepared SELECT
            probe(1, 2, 5),
            probe(1, 1, 6)), 1, 1, 2, 2);

    /** Every sequence, for the other modes (a read/write split group). */
    static final List<Sequence> ALL = List.of(ANOTHER_SESSIONS_ID, OWN_ID_ON_A_CONNECTION_TAKEN,
            OWN_ID_ON_A_CONNECTION_HELD, ID_OF_A_PROCEDURE, READ_BY_AN_INSERT_AND_A_PREPARED_SELECT);

    /**
     * Fixed steps of {@link #SESSIONS} sessions, and what their probes read (directly, and so through Sluice), in
     * order.
     */
    record Sequence(List<Step> steps, long... probed) {
    }

    @Test
    void codeRunOnAConnectionAnotherSessionInsertedOnDoesNotShowThatSessionsId() throws Exception {
        assertSameBothWays(harness, ANOTHER_SESSIONS_ID);
    }

    @Test
    void codeRunOnAnotherConnectionKeepsTheSessionsOwnId() throws Exception {
        assertSameBothWays(harness, OWN_ID_ON_A_CONNECTION_TAKEN);
    }

    @Test
    void codeRunOnAConnectionHeldForAnotherPinKeepsTheSessionsOwnId() throws Exception {
        assertSameBothWays(harness, OWN_ID_ON_A_CONNECTION_HELD);
    }

    @Test
    void anIdGeneratedInAProcedureIsTheSessionsAfterAnotherSessionsInsert() throws Exception {
        assertSameBothWays(harness, ID_OF_A_PROCEDURE);
    }

    @Test
    void anIdReadByAnInsertOrAPreparedStatementIsTheSessionsOwn() throws Exception {
        assertSameBothWays(harness, READ_BY_AN_INSERT_AND_A_PREPARED_SELECT);
    }

    private static Step probe(int session, int n) {
        return probe(session, 0, n);
    }

    /** {@code probe}: which of the kind's probes ({@link StateKind#LAST_INSERT_ID}). */
    private static Step probe(int session, int probe, int n) {
        return new Step(session, Step.Action.PROBE, StateKind.LAST_INSERT_ID, null, probe, n);
    }

    private static Step end(int session, int n) {
        return new Step(session, Step.Action.END, StateKind.LAST_INSERT_ID, null, 0, n);
    }

    /**
     * Runs the sequence both ways: every step must be seen the same, and the probes must have read what it says. The
     * harness's own test of sharing (fewer connections at the end than sessions) does not fit here: both sessions end
     * pinned, each on its own; they took turns on one before.
     */
    static void assertSameBothWays(IsolationHarness harness, Sequence sequence) throws Exception {
        List<Step> steps = sequence.steps();
        long[] probed = sequence.probed();
        IsolationHarness.Outcome outcome = harness.run(steps, SESSIONS);
        StringBuilder seen = new StringBuilder();
        for (int i = 0; i < steps.size(); i++) {
            seen.append('#').append(i).append(' ').append(steps.get(i).describe(harness.schema())).append("\n  direct: ")
                    .append(IsolationHarness.brief(outcome.direct().get(i))).append("\n  sluice: ")
                    .append(IsolationHarness.brief(outcome.proxied().get(i))).append("   pins: ")
                    .append(outcome.pins().get(i)).append('\n');
        }
        assertThat(outcome.unstable()).as("steps whose direct observations differ between two runs\n%s", seen)
                .isEmpty();
        assertThat(outcome.mismatch()).as("first step seen differently through Sluice\n%s", seen).isEqualTo(-1);
        List<String> probes = new ArrayList<>();
        for (int i = 0; i < steps.size(); i++) {
            if (steps.get(i).action() == Step.Action.PROBE) {
                probes.add(IsolationHarness.brief(outcome.direct().get(i)));
            }
        }
        assertThat(probes).as("what the probes read directly\n%s", seen).hasSize(probed.length);
        for (int i = 0; i < probed.length; i++) {
            assertThat(probes.get(i)).as("probe %d\n%s", i, seen).contains("rows=[[" + probed[i] + "]]");
        }
    }
}
