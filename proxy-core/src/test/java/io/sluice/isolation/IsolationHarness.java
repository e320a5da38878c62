package io.sluice.isolation;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.SessionSnapshot;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The differential isolation check: random interleavings of {@link Step}s run twice, first with each session on a
 * MariaDB connection of its own (the ground truth: what a session sees when nothing is shared), then through a
 * freshly started Sluice whose few server connections the sessions share; every step must observe the same both ways.
 *
 * <p>A new Sluice per interleaving: state one interleaving leaked onto a pooled connection must not show up in the
 * next, whose replay by seed would then not fail. Between the runs the harness waits until the server has no
 * connection left in the test's database, so that locks of closed connections are gone.
 *
 * <p>On mismatches the assertion message gives, per distinct failure, the seed, the step index, the steps up to it
 * with what each observed, and a shrunk sequence (steps dropped while a mismatch remains).
 */
final class IsolationHarness {

    private static final Logger log = LoggerFactory.getLogger(IsolationHarness.class);

    /**
     * Both drivers, so that clients that track session state (MariaDB's) and clients that do not are covered. No
     * corpus statement should block; if one does, the socket timeout turns the hang into an observed error.
     */
    static final String PARAMS = "allowMultiQueries=true&useServerPrepStmts=true&socketTimeout=10000";

    /**
     * What MariaDB Connector/J does through Sluice, where it cannot pipeline (Sluice does not offer
     * MARIADB_CLIENT_STMT_BULK_OPERATIONS, decision 062), its direct sessions do too: else a direct session's server
     * prepare sent together with its execute leaves other diagnostics than the same client's commands through Sluice
     * (issue #38, seed 108; decision 196). MySQL Connector/J does not know the parameter.
     */
    static String params(JdbcDriver driver) {
        return driver == JdbcDriver.MARIADB ? PARAMS + "&disablePipeline=true" : PARAMS;
    }

    /** The proxy of one run. {@code database} is what clients connect to (a schema, or a read/write group). */
    record RunningProxy(Sluice sluice, String database, AutoCloseable closer) {
    }

    @FunctionalInterface
    interface ProxyStarter {
        RunningProxy start() throws Exception;
    }

    /** Where the ground truth runs and the set-up is done: a server's root connections. */
    record Server(String host, int port) {
        Connection root(String db) {
            try {
                return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url(host, port, db, PARAMS),
                        TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD);
            } catch (SQLException e) {
                throw new IllegalStateException("root on " + host + ":" + port, e);
            }
        }
    }

    /** How many sessions, steps per interleaving, interleavings and the first seed: system properties decide. */
    record Settings(int sessions, int steps, int interleavings, long seed, long budgetSeconds) {
        /**
         * {@code sluice.isolation.interleavings} (default: the mode's CI share), {@code .seed} (1), {@code .sessions}
         * (4: two proxy users times two drivers), {@code .steps} (36 per interleaving) and {@code .budgetSeconds}
         * (none): past the budget no further interleaving starts, and the summary says how many ran.
         */
        static Settings fromProperties(int defaultInterleavings) {
            return new Settings(Integer.getInteger("sluice.isolation.sessions", 4),
                    Integer.getInteger("sluice.isolation.steps", 36),
                    Integer.getInteger("sluice.isolation.interleavings", defaultInterleavings),
                    Long.getLong("sluice.isolation.seed", 1L),
                    Long.getLong("sluice.isolation.budgetSeconds", 0L));
        }
    }

    /** One interleaving run both ways. */
    record Outcome(List<String> direct, List<String> proxied, List<String> pins, int mismatch, boolean shared,
                   String connectionIds, Set<Integer> unstable) {
        boolean failed() {
            return mismatch >= 0;
        }
    }

    private final IsolationSchema schema;
    private final Server server;
    private final List<Server> quiet;
    private final ProxyStarter starter;
    private final List<StateKind> kinds;
    private Runnable afterReset = () -> { };
    private Consumer<Sluice> beforeEachStep = sluice -> { };
    private long moves;
    private boolean expectSharing = true;
    /**
     * Every how many interleavings of {@link #check} the ground truth runs twice whatever happens, to measure how
     * much of it is noise; the others run it again only when a step differs through Sluice. A second direct run is a
     * fifth of an interleaving's time, and nearly all interleavings have nothing to look at twice.
     */
    static final int NOISE_SAMPLE = 10;

    private long unstableSteps;
    private long secondLooks;
    private long comparedSteps;
    /** The account the ground truth logs in as: Sluice's backend account (root unless {@link #account} says). */
    private String user = TestMariaDb.ROOT_USER;
    private String password = TestMariaDb.ROOT_PASSWORD;
    private final long shrinkBudgetMillis = Long.getLong("sluice.isolation.shrinkMillis", 10_000L);
    private final int maxShrinks = Integer.getInteger("sluice.isolation.shrinks", 2);

    /**
     * @param server where the ground truth runs and the schema lives
     * @param quiet every server Sluice may open connections to, waited on until none is left in the schema
     * @param kinds the state kinds the interleavings use
     */
    IsolationHarness(IsolationSchema schema, Server server, List<Server> quiet, ProxyStarter starter,
                     List<StateKind> kinds) {
        this.schema = schema;
        this.server = server;
        this.quiet = quiet;
        this.starter = starter;
        this.kinds = kinds;
    }

    /** Runs after the data is put back (a replication group waits for its replicas there). */
    IsolationHarness afterReset(Runnable step) {
        this.afterReset = step;
        return this;
    }

    /**
     * The account the direct sessions log in as, which must be the one Sluice's data sources use (so that both see
     * the same privileges), and which is granted {@link IsolationSchema#ROLE}. The account must exist on the server.
     */
    IsolationHarness account(String user, String password) {
        this.user = user;
        this.password = password;
        return this;
    }

    /** Runs before each step through Sluice (e.g. drains a data source, so that sessions move). */
    IsolationHarness beforeEachStep(Consumer<Sluice> step) {
        this.beforeEachStep = step;
        return this;
    }

    /**
     * Whether {@link #check} demands that sessions ended up sharing a server connection in some run (the default):
     * SESSION pooling shares a connection only after a session ends or moves, which the caller checks itself.
     */
    IsolationHarness expectSharing(boolean expected) {
        this.expectSharing = expected;
        return this;
    }

    /** Moves between data sources Sluice counted over all runs so far (at the end of each run). */
    long moves() {
        return moves;
    }

    IsolationSchema schema() {
        return schema;
    }

    /** Creates the schema's tables and programs, and learns which ways the server refuses. */
    void setUp() throws SQLException {
        for (Server each : quiet) {
            try (Connection c = each.root(null)) {
                IsolationSchema.createRole(c, user.equals(TestMariaDb.ROOT_USER) ? null : "'" + user + "'@'%'");
            }
        }
        schema.create(() -> server.root(null), () -> {
            try {
                return directSessions().open(0);
            } catch (SQLException e) {
                throw new IllegalStateException(e);
            }
        });
        log.info("isolation corpus in {}: refused combinations {}", schema.db(), schema.refused());
    }

    /** The kinds the interleavings can make (those with at least one way the server accepts). */
    List<StateKind> usableKinds() {
        return kinds.stream().filter(k -> !schema.ways(k).isEmpty()).toList();
    }

    /**
     * Sessions 0 and 1 use MariaDB Connector/J, 2 and 3 MySQL Connector/J. Sluice pools by the client's capabilities
     * and collation, which differ between the drivers, so only sessions of the same driver share server connections:
     * each driver has a session of each proxy user, so that state can cross from one user to the other.
     */
    static JdbcDriver driver(int session) {
        return (session / 2) % 2 == 0 ? JdbcDriver.MARIADB : JdbcDriver.MYSQL;
    }

    StepRunner.Sessions directSessions() {
        return i -> driver(i).connect(driver(i).url(server.host(), server.port(), schema.db(), params(driver(i))),
                user, password);
    }

    /** Through Sluice: the two proxy users in turn (even sessions {@code app}, odd ones {@code app2}). */
    static StepRunner.Sessions proxiedSessions(RunningProxy proxy) {
        return i -> driver(i).connect(driver(i).url("127.0.0.1", proxy.sluice().port(), proxy.database(),
                params(driver(i))),
                i % 2 == 0 ? ProxyUnderTest.USER : ProxyUnderTest.USER2,
                i % 2 == 0 ? ProxyUnderTest.PASSWORD : ProxyUnderTest.PASSWORD2);
    }

    /**
     * A known limit (docs/isolation.md): MariaDB keeps a statement's warnings through later statements on no table;
     * a session that changed server connection in between reads none of its own then. It never reads another's: a
     * probe of warnings that shows none through Sluice where it shows some directly is that limit, one that shows
     * some through Sluice is compared as any step.
     */
    private static boolean knownLimitProbe(Step step, String proxied) {
        return step.action() == Step.Action.PROBE && (step.kind() == StateKind.WARNINGS
                && (proxied.contains("rows=[]]") || proxied.contains("rows=[[0]]"))
                // FOUND_ROWS() of a session that ran no SELECT of its own since login: what its driver's connect
                // statements left (0 or 1, not stable directly either); the fixed scenarios check the rest
                || step.kind() == StateKind.FOUND_ROWS);
    }

    /**
     * Runs {@code steps} direct and through a new Sluice; the first step whose observations differ, or -1. One root
     * connection of the server puts the data back and waits for quiet throughout (a login each time cost more than
     * what it did); it is not one of the sessions compared, and the quiet wait does not count it.
     */
    Outcome run(List<Step> steps, int sessions) throws Exception {
        return run(steps, sessions, true);
    }

    /**
     * As {@link #run(List, int)}; with {@code directTwice} false the ground truth runs a second time only when a step
     * differs through Sluice, to learn whether that step is unstable directly. Which steps fail is the same either
     * way (a step the ground truth does not repeat is never compared); only steps that match need no second look.
     */
    Outcome run(List<Step> steps, int sessions, boolean directTwice) throws Exception {
        try (Connection root = server.root(null)) {
            return run(steps, sessions, root, directTwice);
        }
    }

    private Outcome run(List<Step> steps, int sessions, Connection root, boolean directTwice) throws Exception {
        // Twice (up front when asked, else once a step differs): a step whose direct observations differ between the
        // two is not compared (it depends on timing or on what a driver does on its own, e.g. FOUND_ROWS() right
        // after a reconnect), and is counted as unstable.
        List<String> direct = runDirect(steps, sessions, root);
        Set<Integer> unstable = directTwice ? unstable(direct, runDirect(steps, sessions, root)) : new TreeSet<>();
        schema.reset(root);
        afterReset.run();
        List<String> proxied = new ArrayList<>(steps.size());
        List<String> pins = new ArrayList<>(steps.size());
        boolean shared;
        String ids;
        RunningProxy proxy = starter.start();
        try (StepRunner runner = new StepRunner(proxiedSessions(proxy), sessions, schema).open()) {
            for (Step step : steps) {
                beforeEachStep.accept(proxy.sluice());
                proxied.add(runner.run(step));
                pins.add(pins(proxy.sluice()));
            }
            for (SessionSnapshot each : proxy.sluice().sessions()) {
                moves += each.moves();
            }
            // Outside the compared results: which server connection each session is on now.
            List<Long> connectionIds = new ArrayList<>();
            for (int i = 0; i < sessions; i++) {
                connectionIds.add(connectionId(runner.connection(i)));
            }
            // Shared: two sessions on one server connection now, or fewer server connections opened over the run
            // than client sessions logged in (one connection served several of them one after the other).
            long logins = sessions + steps.stream().filter(st -> st.action() == Step.Action.RECONNECT).count();
            long created = proxy.sluice().backends().stream().mapToLong(b -> b.createdConnections()).sum();
            shared = new LinkedHashSet<>(connectionIds).size() < sessions || created < logins;
            ids = connectionIds + ", " + created + " opened for " + logins + " logins";
        } finally {
            proxy.closer().close();
        }
        awaitQuiet(root);
        int mismatch = firstMismatch(steps, direct, proxied, unstable);
        if (mismatch >= 0 && !directTwice) {
            secondLooks++;
            unstable = unstable(direct, runDirect(steps, sessions, root));
            mismatch = firstMismatch(steps, direct, proxied, unstable);
        }
        if (directTwice) {
            // Only runs that look twice whatever happens: counting the second looks a mismatch asked for would
            // weigh the noise towards the steps that differed.
            unstableSteps += unstable.size();
            comparedSteps += steps.size();
        }
        return new Outcome(direct, proxied, pins, mismatch, shared, ids, unstable);
    }

    /** The steps whose observations differ between two direct runs. */
    private static Set<Integer> unstable(List<String> direct, List<String> again) {
        Set<Integer> unstable = new TreeSet<>();
        for (int i = 0; i < direct.size(); i++) {
            if (!direct.get(i).equals(again.get(i))) {
                unstable.add(i);
            }
        }
        return unstable;
    }

    /** The first step seen differently through Sluice than directly, leaving out unstable steps; or -1. */
    private static int firstMismatch(List<Step> steps, List<String> direct, List<String> proxied,
                                     Set<Integer> unstable) {
        for (int i = 0; i < steps.size(); i++) {
            if (!unstable.contains(i) && !direct.get(i).equals(proxied.get(i))
                    && !knownLimitProbe(steps.get(i), proxied.get(i))) {
                return i;
            }
        }
        return -1;
    }

    /** The ground truth: {@code steps} with each session on a server connection of its own. */
    private List<String> runDirect(List<Step> steps, int sessions, Connection root) throws Exception {
        schema.reset(root);
        afterReset.run();
        List<String> direct;
        try (StepRunner runner = new StepRunner(directSessions(), sessions, schema).open()) {
            direct = runner.run(steps);
        }
        awaitQuiet(root);
        return direct;
    }

    private static long connectionId(Connection c) {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            return -1;
        }
    }

    /** Every session's pin reason, by session id: what Sluice believed after a step. */
    private static String pins(Sluice sluice) {
        List<SessionSnapshot> all = new ArrayList<>(sluice.sessions());
        all.sort(Comparator.comparingInt(SessionSnapshot::id));
        StringBuilder s = new StringBuilder();
        for (SessionSnapshot each : all) {
            s.append(s.isEmpty() ? "" : " ").append(each.id()).append('=')
                    .append(each.pinnedBy() == null ? "-" : each.pinnedBy());
            if (each.moves() > 0) {
                s.append("@").append(each.backend()).append("/moved").append(each.moves());
            }
        }
        return s.toString();
    }

    /**
     * Waits until no connection of the test's schema is left on any server (closed ones release their locks), asking
     * {@code root} on the run's own server and a connection of its own on any other.
     */
    private void awaitQuiet(Connection root) throws Exception {
        for (Server each : quiet) {
            long deadline = System.nanoTime() + 15_000_000_000L;
            boolean own = each.equals(server);
            try (Connection c = own ? null : each.root(null);
                 PreparedStatement ps = (own ? root : c).prepareStatement("SELECT COUNT(*)"
                         + " FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()")) {
                ps.setString(1, schema.db());
                while (true) {
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        if (rs.getInt(1) == 0) {
                            break;
                        }
                    }
                    assertThat(System.nanoTime()).as("connections left in %s on %s", schema.db(), each)
                            .isLessThan(deadline);
                    Thread.sleep(10);
                }
            }
        }
    }

    /**
     * Runs the interleavings {@code settings} asks for and fails with every distinct mismatch (distinct by the
     * action and kind of the step that differed), the first few shrunk; also fails, unless told otherwise, when the
     * sessions never shared a server connection, since then nothing was tested.
     */
    void check(String mode, Settings settings) throws Exception {
        List<StateKind> usable = usableKinds();
        Map<String, String> failures = new LinkedHashMap<>();
        int failed = 0;
        int sharedRuns = 0;
        int shrunk = 0;
        long started = System.nanoTime();
        int ran = 0;
        long budgetEnd = settings.budgetSeconds() > 0 ? started + settings.budgetSeconds() * 1_000_000_000L : 0;
        for (int k = 0; k < settings.interleavings(); k++) {
            if (budgetEnd != 0 && System.nanoTime() > budgetEnd) {
                break;
            }
            ran++;
            long seed = settings.seed() + k;
            List<Step> steps = Interleaving.generate(seed, settings.sessions(), settings.steps(), schema, usable);
            Outcome outcome = run(steps, settings.sessions(), k % NOISE_SAMPLE == 0);
            if (outcome.shared()) {
                sharedRuns++;
            }
            if (!outcome.failed()) {
                continue;
            }
            failed++;
            String signature = signature(steps, outcome.mismatch());
            if (failures.containsKey(signature)) {
                continue;
            }
            StringBuilder report = new StringBuilder();
            report.append(describe(mode, seed, steps, outcome));
            if (shrunk < maxShrinks) {
                shrunk++;
                List<Step> small = shrink(steps.subList(0, outcome.mismatch() + 1), settings.sessions());
                Outcome again = run(small, settings.sessions());
                report.append("\n  shrunk to ").append(small.size()).append(" steps:\n")
                        .append(describe(mode, seed, small, again));
            }
            failures.put(signature, report.toString());
            // Now, not only at the end: a run that is stopped still leaves what it found in the test's output.
            System.out.println("ISOLATION-FAILURE " + signature + "\n" + report);
        }
        String summary = String.format("isolation %s: %d interleavings from seed %d (%d sessions, %d steps each),"
                        + " %d failed, %d distinct; sessions shared server connections in %d runs;"
                        + " %.1f s; refused by the server: %s", mode, ran, settings.seed(),
                settings.sessions(), settings.steps(), failed, failures.size(), sharedRuns,
                (System.nanoTime() - started) / 1e9, schema.refused().keySet());
        summary += String.format("; %d of %d steps unstable directly (not compared; counted where the"
                + " ground truth ran twice up front: every %dth interleaving, scenarios, shrinking); %d interleavings looked at directly again for a differing step",
                unstableSteps, comparedSteps, NOISE_SAMPLE, secondLooks);
        log.info(summary);
        System.out.println("ISOLATION-SUMMARY " + summary);
        assertThat(unstableSteps * 20).as("steps whose direct observation changed from one run to the next: at"
                + " most 5%%, else the ground truth is noise (%s)", summary).isLessThanOrEqualTo(comparedSteps);
        assertThat(failures).as("%s%n%s", summary, String.join("\n\n", failures.values())).isEmpty();
        if (!expectSharing) {
            return;
        }
        assertThat(sharedRuns).as("runs whose sessions shared server connections: else nothing was tested (%s)",
                summary).isGreaterThan(0);
    }

    /**
     * Runs {@link Interleaving#scenario} for every kind and every way the server accepts, and fails with one line per
     * combination whose sessions observed something else through Sluice than directly, then the steps of each.
     */
    void checkEveryWay(String mode) throws Exception {
        checkScenarios(mode, Interleaving::scenario, way -> true);
    }

    /**
     * Runs both forms of {@link Interleaving#madeAgain} for every kind a server-side prepared statement makes: the
     * client's driver keeps the statement prepared and sends only its execute the second time, so a proxy that read
     * the statement's effects once, at its prepare, loses count (issue #38, moves seed 32426: a named lock taken again
     * after its release went to the other user with the pooled connection). As {@link #checkEveryWay}.
     */
    void checkMadeAgain(String mode) throws Exception {
        checkScenarios(mode + ", made again after its end", (kind, way) -> Interleaving.madeAgain(kind, way, true),
                way -> way == Way.SERVER_PREPARED);
        checkScenarios(mode + ", made twice and ended once", (kind, way) -> Interleaving.madeAgain(kind, way, false),
                way -> way == Way.SERVER_PREPARED);
    }

    private void checkScenarios(String mode, java.util.function.BiFunction<StateKind, Way, List<Step>> scenario,
            java.util.function.Predicate<Way> ways) throws Exception {
        List<String> table = new ArrayList<>();
        List<String> known = new ArrayList<>();
        List<String> details = new ArrayList<>();
        int combinations = 0;
        for (StateKind kind : usableKinds()) {
            for (Way way : schema.ways(kind)) {
                if (!ways.test(way)) {
                    continue;
                }
                combinations++;
                List<Step> steps = scenario.apply(kind, way);
                Outcome outcome = run(steps, 2);
                if (outcome.failed() && IsolationSchema.knownLimit(kind, way)) {
                    known.add(String.format("  %-16s via %-17s differs at #%d (a known limit)", kind, way,
                            outcome.mismatch()));
                } else if (outcome.failed()) {
                    Step at = steps.get(outcome.mismatch());
                    table.add(String.format("  %-16s via %-17s differs at #%d %s", kind, way, outcome.mismatch(),
                            at.describe(schema)));
                    details.add(describe(mode + ", " + kind + " via " + way, -1, steps, outcome));
                }
            }
        }
        String summary = String.format("isolation %s: %d kind-and-way scenarios, %d differ", mode, combinations,
                table.size());
        System.out.println("ISOLATION-SCENARIOS " + summary + "\n" + String.join("\n", table) + "\n"
                + String.join("\n", known));
        assertThat(table).as("%s:%n%s%n%n%s", summary, String.join("\n", table), String.join("\n", details))
                .isEmpty();
    }

    /**
     * What tells one failure from another: the step that differed (action and kind), and the way the last state of
     * that kind was made before it.
     */
    private static String signature(List<Step> steps, int mismatch) {
        Step at = steps.get(mismatch);
        String signature = at.action() + " " + (at.kind() == null ? "" : at.kind());
        for (int i = mismatch - 1; i >= 0 && at.kind() != null; i--) {
            Step before = steps.get(i);
            if (before.action() == Step.Action.MAKE && before.kind() == at.kind()) {
                return signature + " after MAKE via " + before.way();
            }
        }
        return signature;
    }

    /** Drops steps, last first, while the rest still shows a mismatch; stops when the time budget is spent. */
    private List<Step> shrink(List<Step> failing, int sessions) throws Exception {
        List<Step> current = new ArrayList<>(failing);
        long deadline = System.nanoTime() + shrinkBudgetMillis * 1_000_000L;
        for (int i = current.size() - 1; i >= 0 && System.nanoTime() < deadline; i--) {
            if (i >= current.size()) {
                continue;
            }
            List<Step> candidate = new ArrayList<>(current);
            candidate.remove(i);
            Outcome outcome = run(candidate, sessions);
            if (outcome.failed()) {
                current = new ArrayList<>(candidate.subList(0, outcome.mismatch() + 1));
            }
        }
        return current;
    }

    private String describe(String mode, long seed, List<Step> steps, Outcome outcome) {
        StringBuilder s = new StringBuilder();
        if (outcome.failed() && seed < 0) {
            s.append(String.format("MISMATCH %s step=%d%n", mode, outcome.mismatch()));
        } else if (outcome.failed()) {
            s.append(String.format("MISMATCH mode=%s seed=%d step=%d (replay: -Dsluice.isolation.seed=%d"
                            + " -Dsluice.isolation.interleavings=1); server connections at the end %s%n",
                    mode, seed, outcome.mismatch(), seed, outcome.connectionIds()));
        } else {
            s.append(String.format("NO MISMATCH this time (mode=%s seed=%d): what failed depends on timing, e.g. which"
                    + " pooled connection a session got%n", mode, seed));
        }
        int last = outcome.failed() ? outcome.mismatch() : steps.size() - 1;
        for (int i = 0; i <= last; i++) {
            s.append(String.format("  #%d %s%n", i, steps.get(i).describe(schema)));
            String direct = outcome.direct().get(i).replace("\n", " | ");
            String proxied = outcome.proxied().get(i).replace("\n", " | ");
            if (outcome.unstable().contains(i)) {
                s.append("      unstable directly, not compared: ").append(brief(direct)).append('\n');
            } else if (direct.equals(proxied)) {
                s.append("      both:   ").append(brief(direct)).append("   pins: ").append(outcome.pins().get(i))
                        .append('\n');
            } else {
                boolean metadataOnly = brief(direct).equals(brief(proxied));
                s.append("      direct: ").append(metadataOnly ? direct : brief(direct)).append('\n');
                s.append("      sluice: ").append(metadataOnly ? proxied : brief(proxied)).append("   pins: ")
                        .append(outcome.pins().get(i)).append('\n');
            }
        }
        return s.toString();
    }

    /** Observations without column metadata, which is long and the same for every run of a probe. */
    static String brief(String observed) {
        return observed.replaceAll("Column\\[[^\\]]*\\]", "col").replaceAll("columns=\\[(col, )*col\\], ", "");
    }
}
