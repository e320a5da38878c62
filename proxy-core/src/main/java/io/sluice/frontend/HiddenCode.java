package io.sluice.frontend;

import io.sluice.backend.pool.BackendPool;
import io.sluice.sql.DefinedNames;
import io.sluice.sql.HiddenCodeNames;
import io.sluice.sql.SessionEffects;
import io.sluice.sql.StatementScan;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tables whose triggers, and the views whose definitions, run code that leaves state on the session (decision
 * 200): an {@code INSERT} into a table whose trigger calls {@code GET_LOCK()} takes a named lock its text does not
 * show, and so does a {@code SELECT} from a view that calls a stored function. Read from every data source with its
 * own account ({@code information_schema.TRIGGERS} and {@code VIEWS}, which show what the account may see: the
 * TRIGGER and SHOW VIEW privileges), at start, every {@link #REFRESH_MILLIS} and after a session's statement that
 * defines a trigger or a view; the bodies are read with the one statement analysis ({@link StatementScan}), and
 * transaction pooling's scans count a statement that names one as code the text does not show.
 *
 * <p>A body counts when it leaves any state but user variables (the server's tracker reports those, and they move
 * with the session) or names a table or view that counts (a trigger's INSERT into a table with such a trigger). A view
 * whose definition the account may not read counts too: what it runs is not known.
 */
public final class HiddenCode implements Supplier<HiddenCodeNames> {
    private static final Logger log = LoggerFactory.getLogger(HiddenCode.class);

    /** How often the catalogue is read again, for triggers and views made other than through Sluice. */
    static final long REFRESH_MILLIS = 10_000;
    /** The longest one reading may take, whatever the data source's connection timeout. */
    private static final long MAX_READ_MILLIS = 10_000;
    /** The server's own schemas: their views (MySQL's and MariaDB's {@code sys}) are no application's. */
    private static final String NOT_SYSTEM = " NOT IN ('mysql', 'sys', 'information_schema', 'performance_schema')";
    /** Both kinds in one query: one login of an own connection per data source and reading. */
    static final String CATALOGUE = "SELECT EVENT_OBJECT_TABLE AS name, ACTION_STATEMENT AS code FROM TRIGGERS"
            + " WHERE EVENT_OBJECT_SCHEMA" + NOT_SYSTEM + " UNION ALL SELECT TABLE_NAME, VIEW_DEFINITION FROM VIEWS"
            + " WHERE TABLE_SCHEMA" + NOT_SYSTEM;
    /** What a body may leave and still count as leaving nothing: user variables, and words that only qualify. */
    private static final int HARMLESS = SessionEffects.QUALIFIERS | SessionEffects.USER_VARIABLE
            | SessionEffects.DEFINES_HIDDEN_CODE;

    private final Supplier<Collection<BackendPool>> pools;
    /** Each data source's last reading: a reading that fails keeps the last one. */
    private final Map<String, List<Map<String, String>>> readings = new ConcurrentHashMap<>();
    private final AtomicBoolean reading = new AtomicBoolean();
    private final AtomicBoolean again = new AtomicBoolean();
    private volatile HiddenCodeNames names = HiddenCodeNames.NONE;
    private volatile CompletableFuture<Void> lastReading = CompletableFuture.completedFuture(null);
    /** What the last reading found, before the {@link #provisional} names are added; guarded by {@code this}. */
    private HiddenCodeNames read = HiddenCodeNames.NONE;
    /**
     * Names a session's definition may make count (decision 203), each with the number of the first reading that may
     * drop it: {@link Long#MAX_VALUE} while the definition runs, then the next reading to begin after it ran.
     */
    private final Map<String, Long> provisional = new ConcurrentHashMap<>();
    /** Readings begun. */
    private final AtomicLong begun = new AtomicLong();

    /** @param pools the data sources to read from: all of them, since a session may run on any */
    public HiddenCode(Supplier<Collection<BackendPool>> pools) {
        this.pools = pools;
    }

    /** The names of the last reading (none before the first). */
    @Override
    public HiddenCodeNames get() {
        return names;
    }

    /**
     * Reads now, then every {@link #REFRESH_MILLIS} on {@code scheduler} (the health-check loop: the schedule ends
     * with it when Sluice closes).
     *
     * @return the first reading's end (never exceptional)
     */
    public CompletableFuture<Void> start(ScheduledExecutorService scheduler) {
        CompletableFuture<Void> first = refresh();
        scheduler.scheduleWithFixedDelay(this::refresh, REFRESH_MILLIS, REFRESH_MILLIS, TimeUnit.MILLISECONDS);
        return first;
    }

    /**
     * A session is sending {@code sql}, which defines a trigger or a view or renames a table: the names it may make
     * count ({@link DefinedNames}) count from now, whatever the last reading found, until a reading begun after the
     * statement ran ({@link #defined}) has ended. A session's statement on one of them in between keeps its
     * connection, as it would once the catalogue is read (decision 203).
     */
    public void defining(String sql) {
        Set<String> defined = DefinedNames.in(sql);
        if (!defined.isEmpty()) {
            for (String name : defined) {
                provisional.put(name, Long.MAX_VALUE); // folded as statements are by HiddenCodeNames
            }
            publish(null); // the last reading stands
        }
    }

    /**
     * The definition {@code sql} has run (the session's responses have ended): the catalogue is read again, and the
     * names it provisionally made count are dropped once that reading has ended, its own finding standing.
     */
    public CompletableFuture<Void> defined(String sql) {
        long next = begun.get() + 1;
        for (String name : DefinedNames.in(sql)) {
            provisional.replace(name, next);
        }
        return refresh();
    }

    /**
     * Reads the catalogue again: a session defined a trigger or a view, or renamed a table. A reading under way is
     * followed by another, so that the definition is seen even when it ended after that reading's query ran.
     *
     * @return the end of this reading, or of the one under way (never exceptional)
     */
    public CompletableFuture<Void> refresh() {
        if (!reading.compareAndSet(false, true)) {
            again.set(true);
            return lastReading;
        }
        long number = begun.incrementAndGet();
        CompletableFuture<Void> done = new CompletableFuture<>();
        lastReading = done;
        List<CompletableFuture<Boolean>> each = new ArrayList<>();
        Collection<BackendPool> current = pools.get();
        // a data source a reload removed is no longer read, and what it had no longer counts
        readings.keySet().retainAll(current.stream().map(pool -> pool.dataSource().name()).toList());
        for (BackendPool pool : current) {
            each.add(read(pool));
        }
        CompletableFuture.allOf(each.toArray(new CompletableFuture<?>[0])).whenComplete((ignored, error) -> {
            if (each.stream().allMatch(CompletableFuture::join)) {
                // a data source not read keeps its last reading, which may not have the definition yet
                provisional.values().removeIf(firstToDrop -> firstToDrop <= number);
            }
            publish(analyse(readings.values()));
            reading.set(false);
            done.complete(null);
            if (again.getAndSet(false)) {
                refresh();
            }
        });
        return done;
    }

    /** @return whether the data source was read (never exceptional) */
    private CompletableFuture<Boolean> read(BackendPool pool) {
        String name = pool.dataSource().name();
        long timeout = Math.min(MAX_READ_MILLIS, pool.dataSource().connectionTimeoutMilliseconds());
        return pool.ownConnections().query("information_schema", CATALOGUE, timeout)
                .handle((rows, error) -> {
                    if (rows != null) {
                        readings.put(name, rows);
                    } else {
                        log.warn("{}: cannot read the triggers and views whose code leaves session state, the last"
                                + " reading stands: {}", name, error.getMessage());
                    }
                    return rows != null;
                });
    }

    /**
     * What the last reading found, with the {@link #provisional} names: one at a time, so that a reading's end and
     * a definition's start never publish over each other.
     */
    private synchronized void publish(HiddenCodeNames reading) {
        HiddenCodeNames found = reading == null ? read : reading;
        HiddenCodeNames now = found;
        if (!provisional.isEmpty()) {
            Set<String> all = new TreeSet<>(found.names());
            all.addAll(provisional.keySet());
            now = HiddenCodeNames.of(all);
        }
        if (!read.names().equals(found.names())) {
            log.info("tables and views whose triggers or definitions leave session state (their statements keep"
                    + " the session on its connection): {}", found.names().isEmpty() ? "none" : found.names());
        }
        read = found;
        names = now;
    }

    /**
     * The names whose code leaves state: a body that leaves any but {@link #HARMLESS} effects, or that names such a
     * name, until no more are found.
     *
     * @param readings rows of {@code name} and {@code code}, of every data source
     */
    static HiddenCodeNames analyse(Collection<List<Map<String, String>>> readings) {
        Set<String> found = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
        boolean more = true;
        while (more) {
            more = false;
            HiddenCodeNames known = HiddenCodeNames.of(found);
            StatementScan scan = new StatementScan(() -> known);
            for (List<Map<String, String>> rows : readings) {
                for (Map<String, String> row : rows) {
                    String name = row.get("name");
                    String code = row.get("code");
                    if (name == null || found.contains(name)) {
                        continue;
                    }
                    // An empty definition: the account may not read the view's (no SHOW VIEW), what it runs is unknown
                    if (code == null || code.isEmpty() || (scan.scanBody(code).effects() & ~HARMLESS) != 0) {
                        found.add(name);
                        more = true;
                    }
                }
            }
        }
        return HiddenCodeNames.of(found);
    }
}
