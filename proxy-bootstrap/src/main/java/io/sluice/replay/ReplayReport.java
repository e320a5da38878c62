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

/**
 * What a replay found, compared with the capture: commands replayed and skipped, errors that appeared or vanished,
 * affected-row and row-count mismatches, latency captured against replayed, and the slowest statements by digest.
 * Sessions keep their own {@link Part} and merge it when they end, so replaying threads share only counters.
 */
public final class ReplayReport {
    private static final int EXAMPLES = 20;
    private static final int SLOWEST = 10;

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
    private final LatencyHistogram captured = new LatencyHistogram();
    private final LatencyHistogram replayedLatency = new LatencyHistogram();
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

    static final class DigestStats {
        final LatencyHistogram captured = new LatencyHistogram();
        final LatencyHistogram replayed = new LatencyHistogram();
    }

    /** One session's findings, kept by its thread and merged when the session ends. */
    final class Part {
        private final Map<String, Long> skippedBy = new HashMap<>();
        private final Map<String, Tally> newErrorsBy = new HashMap<>();
        private final Map<String, Tally> vanishedErrorsBy = new HashMap<>();
        private long affectedMismatches;
        private long rowMismatches;
        private final List<Map<String, Object>> examples = new ArrayList<>();
        private final LatencyHistogram captured = new LatencyHistogram();
        private final LatencyHistogram replayedLatency = new LatencyHistogram();
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
                captured.add(capturedNanos);
                replayedLatency.add(replayNanos);
                DigestStats stats = digests.computeIfAbsent(digest, d -> new DigestStats());
                stats.captured.add(capturedNanos);
                stats.replayed.add(replayNanos);
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
        captured.merge(part.captured);
        replayedLatency.merge(part.replayedLatency);
        part.digests.forEach((digest, stats) -> {
            DigestStats into = digests.computeIfAbsent(digest, d -> new DigestStats());
            into.captured.merge(stats.captured);
            into.replayed.merge(stats.replayed);
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
        latency.put("captured", captured.toJson());
        latency.put("replayed", replayedLatency.toJson());
        json.put("latencyMillis", latency);
        List<Map<String, Object>> slowest = new ArrayList<>();
        digests.entrySet().stream()
                .sorted(Comparator.comparingDouble((Map.Entry<String, DigestStats> e) ->
                        e.getValue().replayed.averageMillis()).reversed())
                .limit(SLOWEST)
                .forEach(e -> {
                    Map<String, Object> row = new LinkedHashMap<>();
                    row.put("digest", e.getKey());
                    row.put("count", e.getValue().replayed.count());
                    row.put("capturedAvgMillis", LatencyHistogram.round(e.getValue().captured.averageMillis()));
                    row.put("capturedP95Millis", LatencyHistogram.round(e.getValue().captured.percentileMillis(0.95)));
                    row.put("replayedAvgMillis", LatencyHistogram.round(e.getValue().replayed.averageMillis()));
                    row.put("replayedP95Millis", LatencyHistogram.round(e.getValue().replayed.percentileMillis(0.95)));
                    slowest.add(row);
                });
        json.put("slowest", slowest);
        return json;
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
            LatencyHistogram h = which.equals("captured") ? captured : replayedLatency;
            out.printf("    %-10s %10.3f %10.3f %10.3f%n", which, h.percentileMillis(0.50), h.percentileMillis(0.95),
                    h.percentileMillis(0.99));
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
