package io.sluice.bootstrap;

import io.sluice.json.Json;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code sluice-ctl top}: the statements that load the database, by digest, refreshed every few seconds as
 * {@code top} and {@code mytop} do ({@code GET /api/digests}). A letter and Enter change the order; {@code q} quits.
 * {@code --once} prints one table and returns, for scripts and tests.
 */
@Command(name = "top", mixinStandardHelpOptions = true, versionProvider = SluiceCtl.Version.class, separator = " ",
        description = {"statement digests by total time (or --order-by), refreshed like top; keys while it runs:",
            "t total time, c count, e errors, a average, m max, p p99, r rows sent, l last seen, q quit (then Enter)"})
final class TopCommand implements Callable<Integer> {

    /** ANSI: cursor home, clear the screen. */
    private static final String CLEAR = "\033[H\033[2J";
    private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("HH:mm:ss");
    /** The keys that change the order, and the orders they pick. */
    private static final Map<String, String> KEYS = Map.of("t", "totalTime", "c", "count", "e", "errors",
            "a", "avgTime", "m", "maxTime", "p", "p99", "r", "rowsSent", "l", "lastSeen");

    @Mixin
    private AdminApi admin;

    @Spec
    private CommandSpec spec;

    @Option(names = "--order-by", paramLabel = "ORDER", description = "totalTime (default), count, errors, avgTime,"
            + " maxTime, p99, rowsSent, rowsAffected, warnings, lastSeen")
    private String orderBy = "totalTime";

    @Option(names = "--limit", paramLabel = "N", description = "rows shown (default: 20)")
    private int limit = 20;

    @Option(names = "--interval", paramLabel = "SECONDS", description = "seconds between refreshes (default: 2)")
    private double interval = 2;

    @Option(names = "--once", description = "print the table once and exit, without clearing the screen")
    private boolean once;

    @Option(names = "--width", paramLabel = "COLUMNS", description = "line width (default: $COLUMNS or 160)")
    private Integer width;

    @Override
    public Integer call() throws Exception {
        SluiceCtl ctl = SluiceCtl.of(spec);
        int columns = width != null ? width : columns(ctl.env.get("COLUMNS"));
        if (once) {
            return show(ctl.out, ctl.err, columns) ? 0 : SluiceCtl.EXIT_FAILED;
        }
        BufferedReader keys = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (true) {
            ctl.out.print(CLEAR);
            show(ctl.out, ctl.err, columns);
            ctl.out.flush();
            long until = System.nanoTime() + (long) (interval * 1e9);
            while (System.nanoTime() < until) {
                if (System.in.available() > 0) {
                    String key = keys.readLine();
                    if (key == null || key.strip().equalsIgnoreCase("q")) {
                        return 0;
                    }
                    String picked = KEYS.get(key.strip().toLowerCase(Locale.ROOT));
                    if (picked != null) {
                        orderBy = picked;
                        break;
                    }
                }
                Thread.sleep(100);
            }
        }
    }

    /** One table; an error goes to {@code err}. */
    private boolean show(PrintStream out, PrintStream err, int columns) throws InterruptedException {
        List<?> rows;
        try {
            rows = (List<?>) Json.parse(admin.get("/api/digests?orderBy=" + URLEncoder.encode(orderBy,
                    StandardCharsets.UTF_8) + "&limit=" + limit));
        } catch (IOException | IllegalArgumentException | ClassCastException e) {
            err.println("sluice-ctl: top: " + e.getMessage());
            return false;
        }
        out.println(format(rows, orderBy, columns, LocalTime.now().format(CLOCK)));
        return true;
    }

    /** The table: a heading line, the column names, one line per digest cut to {@code columns}. */
    static String format(List<?> rows, String orderBy, int columns, String clock) {
        StringBuilder text = new StringBuilder();
        long statements = 0;
        long errors = 0;
        for (Object each : rows) {
            Map<?, ?> row = (Map<?, ?>) each;
            statements += number(row, "count");
            errors += number(row, "errors");
        }
        text.append(String.format(Locale.ROOT, "sluice top - %s - %d digests shown, %d statements, %d errors,"
                + " ordered by %s%n%n", clock, rows.size(), statements, errors, orderBy));
        String heading = String.format(Locale.ROOT, "%10s %7s %12s %10s %10s %10s %10s  %-12s %-12s %s",
                "COUNT", "ERRORS", "TOTAL_MS", "AVG_US", "P99_US", "MAX_US", "ROWS", "USER", "SCHEMA", "DIGEST_TEXT");
        text.append(cut(heading, columns)).append('\n');
        for (Object each : rows) {
            Map<?, ?> row = (Map<?, ?>) each;
            String line = String.format(Locale.ROOT, "%10d %7d %12.1f %10d %10d %10d %10d  %-12s %-12s %s",
                    number(row, "count"), number(row, "errors"), number(row, "totalMicros") / 1000.0,
                    number(row, "avgMicros"), number(row, "p99Micros"), number(row, "maxMicros"),
                    number(row, "rowsSent"), cut(String.valueOf(row.get("user")), 12),
                    cut(String.valueOf(row.get("schema")), 12), row.get("digestText"));
            text.append(cut(line, columns)).append('\n');
        }
        return text.toString();
    }

    private static long number(Map<?, ?> row, String key) {
        Object value = row.get(key);
        return value instanceof Number n ? n.longValue() : 0;
    }

    private static String cut(String text, int columns) {
        return text.length() <= columns ? text : text.substring(0, Math.max(0, columns - 3)) + "...";
    }

    private static int columns(String env) {
        try {
            return env == null ? 160 : Math.max(60, Integer.parseInt(env.strip()));
        } catch (NumberFormatException e) {
            return 160;
        }
    }
}
