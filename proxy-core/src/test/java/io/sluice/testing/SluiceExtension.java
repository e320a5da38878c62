package io.sluice.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.opentest4j.TestAbortedException;

/**
 * The proxy a test class shares between its tests, started before them and closed after them by JUnit:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final SluiceExtension proxy = SluiceExtension.with(b -> b.maxPoolSize(1))
 *         .database("sluice_it_bad", "CREATE TABLE t (id INT PRIMARY KEY)");
 *
 * @Test
 * void something() throws Exception {
 *     try (Connection c = proxy.connect(JdbcDriver.MARIADB, proxy.db(), "")) { ... }
 * }
 * }</pre>
 *
 * <p>It is a {@link ProxyUnderTest}, so the tests use it as one; before all tests it gets {@link TestMariaDb},
 * runs the {@link #beforeStart} steps, starts the proxy from {@link ProxyUnderTest#builder()} with the given
 * settings, and creates the {@link #database}s; after all tests it closes the proxy and drops the databases. It honours
 * direct mode ({@code -Dsluice.test.direct=true}): then nothing is started and the tests talk to MariaDB itself, and
 * a class about Sluice's own features says {@link #sluiceOnly} to be skipped instead.
 *
 * <p>It also checks for Netty leaks as {@link LeakDetection} does, after the proxy is closed (so the class needs no
 * {@code @ExtendWith(LeakDetection.class)}). What the class {@link #requires} is checked before anything starts, as
 * a condition: when it is missing, every test of the class is reported skipped with the reason, or on CI the class
 * fails (see {@link Prerequisites}). A skip from a before-all callback would not do: Surefire counts no test of such a
 * class, not even as skipped.
 *
 * <p>Register it on a static field: JUnit calls an extension's before-all and after-all callbacks only then.
 * Methods a class annotates with {@code @BeforeAll} run after it started, and its {@code @AfterAll} methods before it
 * stops.
 */
public final class SluiceExtension extends ProxyUnderTest
        implements ExecutionCondition, BeforeAllCallback, AfterAllCallback {

    private final UnaryOperator<ProxyUnderTest.Builder> settings;
    private final LeakDetection leakDetection = new LeakDetection();
    private final List<Runnable> prerequisites = new ArrayList<>();
    private final List<Consumer<TestMariaDb>> beforeStart = new ArrayList<>();
    private final List<DatabaseSpec> databaseSpecs = new ArrayList<>();
    private final List<String> databases = new ArrayList<>();
    private String sluiceOnly;
    private ConditionEvaluationResult condition;
    private boolean started;

    private record DatabaseSpec(String prefix, List<String> setUp) {
    }

    private SluiceExtension(UnaryOperator<ProxyUnderTest.Builder> settings) {
        this.settings = settings;
    }

    /** A proxy with {@link ProxyUnderTest}'s defaults. */
    public static SluiceExtension withDefaults() {
        return with(UnaryOperator.identity());
    }

    /** A proxy with {@code settings} applied to {@link ProxyUnderTest#builder()}. */
    public static SluiceExtension with(UnaryOperator<ProxyUnderTest.Builder> settings) {
        return new SluiceExtension(settings);
    }

    /**
     * Skips the class in direct mode, where there is no Sluice: for tests of what only Sluice has (its own TLS,
     * authentication, limits, admin API, multiplexing...).
     *
     * @param why the skip reason, e.g. "checks Sluice's own TLS"
     */
    public SluiceExtension sluiceOnly(String why) {
        this.sluiceOnly = why;
        return this;
    }

    /** Tools the class runs, checked before anything starts: see {@link Tool#path()}. */
    public SluiceExtension requires(Tool... required) {
        for (Tool tool : required) {
            prerequisites.add(tool::path);
        }
        return this;
    }

    /**
     * Something else the class needs, checked before anything starts: {@code check} goes through
     * {@link Prerequisites#require} (e.g. {@link Prerequisites#mariaDbCacheMetadata}).
     */
    public SluiceExtension requires(Runnable check) {
        prerequisites.add(check);
        return this;
    }

    /**
     * A step on the server before the proxy starts, e.g. raising a global limit that the proxy's pooled connections
     * must already see.
     */
    public SluiceExtension beforeStart(Consumer<TestMariaDb> step) {
        beforeStart.add(step);
        return this;
    }

    /**
     * A database of the class's own, created (see {@link TestMariaDb#createDatabase}) once the proxy runs and dropped
     * after the class; {@code setUp} statements run in it as root, one by one. Several calls make several databases,
     * {@link #db(int)} in the order of the calls.
     */
    public SluiceExtension database(String prefix, String... setUp) {
        databaseSpecs.add(new DatabaseSpec(prefix, List.of(setUp)));
        return this;
    }

    /** The name of the first {@link #database}. */
    public String db() {
        return db(0);
    }

    /** The name of the {@code index}-th {@link #database}, from 0. */
    public String db(int index) {
        if (index >= databases.size()) {
            throw new IllegalStateException("no database " + index + " (" + databases.size() + " created):"
                    + " declare it with database(...), and use it once the class started");
        }
        return databases.get(index);
    }

    /**
     * Disables the class (and so each of its tests, which Surefire then reports as skipped with the reason) in
     * direct mode when it is {@link #sluiceOnly}, and when a prerequisite is missing; on CI a missing prerequisite
     * fails the class instead. Checked once, before the class starts.
     */
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
        if (condition == null) {
            condition = checkPrerequisites();
        }
        return condition;
    }

    private ConditionEvaluationResult checkPrerequisites() {
        if (sluiceOnly != null && isDirect()) {
            return ConditionEvaluationResult.disabled("direct mode (-Dsluice.test.direct=true): " + sluiceOnly);
        }
        try {
            prerequisites.forEach(Runnable::run);
        } catch (TestAbortedException missing) {
            return ConditionEvaluationResult.disabled(missing.getMessage());
        }
        return ConditionEvaluationResult.enabled("prerequisites present");
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        if (started) {
            throw new IllegalStateException("SluiceExtension already started: register it on a static field");
        }
        started = true;
        leakDetection.beforeAll(context);
        TestMariaDb mariaDb = TestMariaDb.get();
        beforeStart.forEach(step -> step.accept(mariaDb));
        takeOver(settings.apply(ProxyUnderTest.builder()).start());
        for (DatabaseSpec spec : databaseSpecs) {
            String name = mariaDb.createDatabase(spec.prefix());
            databases.add(name);
            mariaDb.executeIn(name, spec.setUp().toArray(String[]::new));
        }
    }

    /** Closes the proxy and drops the databases, then fails the class if Netty reported a leak meanwhile. */
    @Override
    public void afterAll(ExtensionContext context) {
        try {
            close();
        } finally {
            try {
                for (String db : databases) {
                    TestMariaDb.get().dropDatabase(db);
                }
                databases.clear();
            } finally {
                started = false;
                leakDetection.afterAll(context);
            }
        }
    }
}
