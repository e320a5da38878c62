package io.sluice.replay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The report's latency numbers from known durations, without a server: what the histogram gives the JSON. */
class ReplayReportTest {
    private static final ReplayConnection.Result OK = new ReplayConnection.Result(0, null, 0, 0, 0);

    private final ReplayReport report = new ReplayReport(
            new ReplayOptions(Path.of("capture"), "127.0.0.1", 3306, "app", "", 1.0, false, null, null, 0));

    @Test
    void percentilesOfTwoSessionsMergedAreWithinOnePercent() {
        // 1..1000 µs replayed, spread over two sessions; captured twice as long.
        ReplayReport.Part odd = report.newPart();
        ReplayReport.Part even = report.newPart();
        for (int micros = 1; micros <= 1000; micros++) {
            (micros % 2 == 0 ? even : odd).replayed("select ?", true, true, 0, 0, 0, micros * 2_000L, OK,
                    micros * 1_000L);
        }
        report.merge(odd);
        report.merge(even);

        Map<String, Object> replayed = latency("replayed");
        assertThat(replayed.get("count")).isEqualTo(1000L);
        assertThat(millis(replayed, "avg")).isCloseTo(0.5005, within(0.005));
        assertThat(millis(replayed, "p50")).isCloseTo(0.500, within(0.005));
        assertThat(millis(replayed, "p95")).isCloseTo(0.950, within(0.0095));
        assertThat(millis(replayed, "p99")).isCloseTo(0.990, within(0.0099));
        assertThat(millis(replayed, "max")).isCloseTo(1.000, within(0.01));
        assertThat(millis(latency("captured"), "p50")).isCloseTo(1.000, within(0.01));
        Map<String, Object> slowest = slowest().get(0);
        assertThat(slowest.get("digest")).isEqualTo("select ?");
        assertThat(slowest.get("count")).isEqualTo(1000L);
        assertThat((Double) slowest.get("capturedAvgMillis")).isCloseTo(1.001, within(0.01));
        assertThat((Double) slowest.get("replayedP95Millis")).isCloseTo(0.950, within(0.0095));
    }

    @Test
    void slowestDigestsComeFirstAndUntimedCommandsCountNowhere() {
        ReplayReport.Part part = report.newPart();
        part.replayed("fast", true, true, 0, 0, 0, 1_000_000, OK, 1_000_000);
        part.replayed("slow", true, true, 0, 0, 0, 1_000_000, OK, 30_000_000_000L); // 30 s: the histogram grows
        part.replayed("COM_STMT_CLOSE", false, false, 0, 0, 0, 0, OK, 5);
        part.replayed("clock step", true, true, 0, 0, 0, -5, OK, 1_000);
        report.merge(part);

        assertThat(slowest()).extracting(row -> row.get("digest")).containsExactly("slow", "fast", "clock step");
        assertThat(millis(latency("replayed"), "max")).isCloseTo(30_000.0, within(300.0));
        assertThat(latency("captured").get("count")).isEqualTo(3L);
        assertThat(millis(latency("captured"), "p50")).isCloseTo(1.0, within(0.01));
    }

    @Test
    void anEmptyReportHasZeroLatenciesAndPrintsItsTable() {
        assertThat(latency("replayed")).containsEntry("count", 0L).containsEntry("avg", 0.0).containsEntry("p99", 0.0);
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        report.printSummary(new PrintStream(out, true, StandardCharsets.UTF_8));

        assertThat(out.toString(StandardCharsets.UTF_8)).contains("latency ms          p50        p95        p99")
                .contains("    replayed        0.000      0.000      0.000");
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> latency(String which) {
        return (Map<String, Object>) ((Map<String, Object>) report.toJson().get("latencyMillis")).get(which);
    }

    @SuppressWarnings("unchecked")
    private List<Map<String, Object>> slowest() {
        return (List<Map<String, Object>>) report.toJson().get("slowest");
    }

    private static double millis(Map<String, Object> json, String key) {
        return (Double) json.get(key);
    }
}
