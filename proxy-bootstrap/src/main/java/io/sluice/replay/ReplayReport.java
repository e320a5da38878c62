package io.sluice.replay;

import io.sluice.json.Json;
import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;

/**
 * What a replay found, compared with the capture: commands replayed and skipped, errors that appeared or vanished,
 * affected-row and row-count mismatches, latency captured against replayed, and the slowest statements by digest.
 * Sessions keep their own {@link Part} and merge it when they end, so replaying threads share only counters.
 *
 * <p>Latencies go into HdrHistograms in nanoseconds, {@value #LATENCY_DIGITS} significant digits (within 1%) from
 * 1 µs, growing to whatever the slowest command took: 6 KB a histogram when that was 1 ms, 21 KB when it was 30 s,
 * for percentiles of millions of commands without keeping them. They are not thread-safe, hence the parts.
 */
public final class ReplayReport {
    private static final int EXAMPLES = 20;
    private static final int SLOWEST = 10;
    /** Enough to tell 1.00 ms from 1.01 ms; three would cost several times the memory per digest. */
    private static final int LATENCY_DIGITS = 2;
    /** Below a microsecond nothing a network round trip measures is meaningful. */
    private static final long LATENCY_RESOLUTION_NANOS = 1_000;

    final LongAdder replayed = new LongAdder();
    final LongAdder skipped = new LongAdder();
    final LongAdder newErrors = new LongAdder();
    final LongAdder vanishedErrors = new LongAdder();
    final LongAdder sessionsStarted = new LongAdder();

    private final ReplayOptions options;
    private final Instant startedAt = Instant.now();
    private long elapsedNanos;
    private long capturedSpanNanos;
    private long capturedCommands;
    private Long captureDropped;
    private String captureStopReason;
    private long sessionsFailed;
    private final Map<String, Long> skippedBy = new LinkedHashMap<>();
    private final Map<String, Tally> newErrorsBy = new HashMap<>();
    private final Map<String, Tally> vanishedErrorsBy = new HashMap<>();
    private long affectedMismatches;
    private long rowMismatches;
    private final List<Map<String, Object>> mismatchExamples = new ArrayList<>();
    private final Histogram captured = latencyHistogram();
    private final Histogram replayedLatency = latencyHistogram();
    private final Map<String, DigestStats> digests = new HashMap<>();

    ReplayReport(ReplayOptions options) {
        this.options = options;
    }

    /** Errors of one code on one digest. */
    private static final class Tally {
        final int code;
        final String digest;
        final String message;
        long count;

        Tally(int code, String digest, String message) {
            this.code = code;
            this.digest = digest;
            this.message = message;
        }
    }

    /** An empty latency histogram; it grows to the largest value recorded. */
    private static Histogram latencyHistogram() {
        Histogram histogram = new Histogram(LATENCY_RESOLUTION_NANOS, 2 * LATENCY_RESOLUTION_NANOS, LATENCY_DIGITS);
        histogram.setAutoResize(true);
        return histogram;
    }

    static final class DigestStats {
        final Histogram captured = latencyHistogram();
        final Histogram replayed = latencyHistogram();
    }

    /** One session's findings, kept by its thread and merged when the session ends. */
    final class Part {
        private final Map<String, Long> skippedBy = new HashMap<>();
        private final Map<String, Tally> newErrorsBy = new HashMap<>();
        private final Map<String, Tally> vanishedErrorsBy = new HashMap<>();
        private long affectedMismatches;
        private long rowMismatches;
        private final List<Map<String, Object>> examples = new ArrayList<>();
        private final Histogram captured = latencyHistogram();
        private final Histogram replayedLatency = latencyHistogram();
        private final Map<String, DigestStats> digests = new HashMap<>();
        private boolean failedToConnect;

        void skip(String reason) {
            skipped.increment();
            skippedBy.merge(reason, 1L, Long::sum);
        }

        void failedToConnect() {
            failedToConnect = true;
        }

        /**
         * Compares one replayed command with its capture.
         *
         * @param compare whether the captured outcome is known (the capture saw the whole response)
         * @param timed whether the command has a response whose latency means something
         */
        void replayed(String digest, boolean compare, boolean timed, int capturedError, long capturedAffected,
                long capturedRows, long capturedNanos, ReplayConnection.Result result, long replayNanos) {
            replayed.increment();
            if (timed) {
                // A clock step can make a duration negative; HdrHistogram takes none.
                long capturedValue = Math.max(0, capturedNanos);
                long replayedValue = Math.max(0, replayNanos);
                captured.recordValue(capturedValue);
                replayedLatency.recordValue(replayedValue);
                DigestStats stats = digests.computeIfAbsent(digest, d -> new DigestStats());
                stats.captured.recordValue(capturedValue);
                stats.replayed.recordValue(replayedValue);
            }
            if (!compare) {
                return;
            }
            if (capturedError != result.errorCode()) {
                if (result.errorCode() != 0) {
                    newErrors.increment();
                    tally(newErrorsBy, result.errorCode(), digest, result.errorMessage());
                }
                if (capturedError != 0) {
                    vanishedErrors.increment();
                    tally(vanishedErrorsBy, capturedError, digest, null);
                }
                return;
            }
            if (capturedError != 0) {
                return;
            }
            if (capturedAffected != result.affectedRows()) {
                affectedMismatches++;
                example("affectedRows", digest, capturedAffected, result.affectedRows());
            }
            if (capturedRows != result.rows()) {
                rowMismatches++;
                example("rows", digest, capturedRows, result.rows());
            }
        }

        private void example(String kind, String digest, long capturedValue, long replayedValue) {
            if (examples.size() < EXAMPLES) {
                Map<String, Object> json = new LinkedHashMap<>();
                json.put("kind", kind);
                json.put("digest", digest);
                json.put("captured", capturedValue);
                json.put("replayed", replayedValue);
                examples.add(json);
            }
        }

        private void tally(Map<String, Tally> into, int code, String digest, String message) {
            into.computeIfAbsent(code + "\0" + digest, k -> new Tally(code, digest, message)).count++;
        }
    }

    Part newPart() {
        return new Part();
    }

    synchronized void merge(Part part) {
        part.skippedBy.forEach((k, v) -> skippedBy.merge(k, v, Long::sum));
        mergeTallies(part.newErrorsBy, newErrorsBy);
        mergeTallies(part.vanishedErrorsBy, vanishedErrorsBy);
        affectedMismatches += part.affectedMismatches;
        rowMismatches += part.rowMismatches;
        for (Map<String, Object> example : part.examples) {
            if (mismatchExamples.size() < EXAMPLES) {
                mismatchExamples.add(example);
            }
        }
        captured.add(part.captured);
        replayedLatency.add(part.replayedLatency);
        part.digests.forEach((digest, stats) -> {
            DigestStats into = digests.computeIfAbsent(digest, d -> new DigestStats());
            into.captured.add(stats.captured);
            into.replayed.add(stats.replayed);
        });
        if (part.failedToConnect) {
            sessionsFailed++;
        }
    }

    private static void mergeTallies(Map<String, Tally> from, Map<String, Tally> into) {
        from.forEach((key, tally) -> into.merge(key, tally, (a, b) -> {
            a.count += b.count;
            return a;
        }));
    }

    synchronized void finish(long elapsedNanos, long capturedSpanNanos, long capturedCommands, Long dropped,
            String stopReason) {
        this.elapsedNanos = elapsedNanos;
        this.capturedSpanNanos = capturedSpanNanos;
        this.capturedCommands = capturedCommands;
        this.captureDropped = dropped;
        this.captureStopReason = stopReason;
    }

    public long replayed() {
        return replayed.sum();
    }

    public long skipped() {
        return skipped.sum();
    }

    public long newErrors() {
        return newErrors.sum();
    }

    public long vanishedErrors() {
        return vanishedErrors.sum();
    }

    public synchronized long capturedCommands() {
        return capturedCommands;
    }

    public synchronized long affectedRowMismatches() {
        return affectedMismatches;
    }

    public synchronized long rowCountMismatches() {
        return rowMismatches;
    }

    public synchronized long elapsedNanos() {
        return elapsedNanos;
    }

    public synchronized long capturedSpanNanos() {
        return capturedSpanNanos;
    }

    public synchronized Map<String, Long> skippedBy() {
        return new LinkedHashMap<>(skippedBy);
    }

    /** The report as written to {@code --report}. */
    public synchronized Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("input", options.input().toString());
        json.put("target", options.target());
        json.put("speed", options.speed());
        json.put("readOnly", options.readOnly());
        json.put("startedAt", startedAt.toString());
        json.put("elapsedMillis", elapsedNanos / 1_000_000);
        json.put("capturedSpanMillis", capturedSpanNanos / 1_000_000);
        Map<String, Object> capture = new LinkedHashMap<>();
        capture.put("dropped", captureDropped);
        capture.put("stopReason", captureStopReason);
        json.put("capture", capture);
        Map<String, Object> sessions = new LinkedHashMap<>();
        sessions.put("replayed", sessionsStarted.sum());
        sessions.put("failedToConnect", sessionsFailed);
        json.put("sessions", sessions);
        Map<String, Object> commands = new LinkedHashMap<>();
        commands.put("captured", capturedCommands);
        commands.put("replayed", replayed.sum());
        commands.put("skipped", skipped.sum());
        commands.put("skippedBy", new LinkedHashMap<>(skippedBy));
        json.put("commands", commands);
        Map<String, Object> errors = new LinkedHashMap<>();
        errors.put("new", newErrors.sum());
        errors.put("vanished", vanishedErrors.sum());
        errors.put("newByCode", tallies(newErrorsBy));
        errors.put("vanishedByCode", tallies(vanishedErrorsBy));
        json.put("errors", errors);
        Map<String, Object> mismatches = new LinkedHashMap<>();
        mismatches.put("affectedRows", affectedMismatches);
        mismatches.put("rows", rowMismatches);
        mismatches.put("examples", new ArrayList<>(mismatchExamples));
        json.put("mismatches", mismatches);
        Map<String, Object> latency = new LinkedHashMap<>();
        latency.put("captured", latencyJson(captured));
        latency.put("replayed", latencyJson(replayedLatency));
        json.put("latencyMillis", latency);
        List<Map<String, Object>> slowest = new ArrayList<>();
        digests.entrySet().stream()
                .sorted(Comparator.comparingDouble((Map.Entry<String, DigestStats> e) ->
                        averageMillis(e.getValue().replayed)).reversed())
                .limit(SLOWEST)
                .forEach(e -> {
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("digest", e.getKey());
                    row.put("count", e.getValue().replayed.getTotalCount());
                    row.put("capturedAvgMillis", round(averageMillis(e.getValue().captured)));
                    row.put("capturedP95Millis", round(percentileMillis(e.getValue().captured, 95)));
                    row.put("replayedAvgMillis", round(averageMillis(e.getValue().replayed)));
                    row.put("replayedP95Millis", round(percentileMillis(e.getValue().replayed, 95)));
                    slowest.add(row);
                });
        json.put("slowest", slowest);
        return json;
    }

    private static Map<String, Object> latencyJson(Histogram histogram) {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("count", histogram.getTotalCount());
        json.put("avg", round(averageMillis(histogram)));
        json.put("p50", round(percentileMillis(histogram, 50)));
        json.put("p95", round(percentileMillis(histogram, 95)));
        json.put("p99", round(percentileMillis(histogram, 99)));
        json.put("max", round(histogram.getMaxValue() / 1e6));
        return json;
    }

    /** The mean over the histogram's buckets: within its precision of the exact one, and no sum to keep beside it. */
    private static double averageMillis(Histogram histogram) {
        return histogram.getMean() / 1e6;
    }

    /** The latency at or below which {@code percentile} % of the values lie (0 with none). */
    private static double percentileMillis(Histogram histogram, double percentile) {
        return histogram.getValueAtPercentile(percentile) / 1e6;
    }

    /** Milliseconds to the microsecond, as the report shows them. */
    private static double round(double millis) {
        return Math.round(millis * 1000) / 1000.0;
    }

    private static List<Map<String, Object>> tallies(Map<String, Tally> tallies) {
        List<Map<String, Object>> list = new ArrayList<>();
        tallies.values().stream().sorted(Comparator.comparingLong((Tally t) -> t.count).reversed()).limit(EXAMPLES)
                .forEach(t -> {
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("code", t.code);
                    row.put("count", t.count);
                    row.put("digest", t.digest);
                    if (t.message != null) {
                        row.put("message", t.message);
                    }
                    list.add(row);
                });
        return list;
    }

    public String toJsonText() {
        return Json.writePretty(toJson());
    }

    /** The human summary printed when the replay ends. */
    @SuppressWarnings("unchecked")
    public synchronized void printSummary(PrintStream out) {
        Map<String, Object> json = toJson();
        out.printf("Replayed %s against %s at speed %s%s in %.1f s (captured span %.1f s)%n", options.input(),
                options.target(), options.speed(), options.readOnly() ? ", read-only" : "", elapsedNanos / 1e9,
                capturedSpanNanos / 1e9);
        if (captureDropped != null && captureDropped > 0) {
            out.printf("  note: the capture dropped %d records (the disk did not keep up)%n", captureDropped);
        }
        out.printf("  sessions:  %d replayed, %d could not connect%n", sessionsStarted.sum(), sessionsFailed);
        out.printf("  commands:  %d captured, %d replayed, %d skipped %s%n", capturedCommands, replayed.sum(),
                skipped.sum(), skippedBy.isEmpty() ? "" : skippedBy);
        out.printf("  errors:    %d new on replay, %d vanished%n", newErrors.sum(), vanishedErrors.sum());
        for (Map<String, Object> row : (List<Map<String, Object>>) ((Map<String, Object>) json.get("errors"))
                .get("newByCode")) {
            out.printf("    new %s x%s: %s (%s)%n", row.get("code"), row.get("count"), row.get("digest"),
                    row.get("message"));
        }
        out.printf("  mismatches: %d affected-row, %d row-count%n", affectedMismatches, rowMismatches);
        out.printf("  latency ms   %10s %10s %10s%n", "p50", "p95", "p99");
        for (String which : List.of("captured", "replayed")) {
            Histogram h = which.equals("captured") ? captured : replayedLatency;
            out.printf("    %-10s %10.3f %10.3f %10.3f%n", which, percentileMillis(h, 50), percentileMillis(h, 95),
                    percentileMillis(h, 99));
        }
        List<Map<String, Object>> slowest = (List<Map<String, Object>>) json.get("slowest");
        if (!slowest.isEmpty()) {
            out.println("  slowest statements (replayed avg ms, captured avg ms, count):");
            for (Map<String, Object> row : slowest) {
                String digest = String.valueOf(row.get("digest"));
                out.printf("    %9.3f %9.3f %7d  %s%n", (Double) row.get("replayedAvgMillis"),
                        (Double) row.get("capturedAvgMillis"), (Long) row.get("count"),
                        digest.length() > 100 ? digest.substring(0, 97) + "..." : digest);
            }
        }
    }
}
