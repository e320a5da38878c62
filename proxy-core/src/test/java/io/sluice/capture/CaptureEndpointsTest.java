package io.sluice.capture;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.json.Json;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The admin API's capture routes: status codes and JSON for each request an operator or sluice-ctl sends. */
class CaptureEndpointsTest {

    @TempDir
    Path tmp;

    private final TrafficCapture capture = new TrafficCapture();
    private final CaptureEndpoints endpoints = new CaptureEndpoints(capture);

    @AfterEach
    void stop() {
        capture.stop("test over", false);
    }

    private static Map<String, Object> json(CaptureEndpoints.Response response) {
        return Json.parseObject(response.json());
    }

    private String startBody(String dir, String extra) {
        return "{\"output\": \"" + tmp.resolve(dir).toString().replace("\\", "\\\\") + "\", \"duration\": \"10m\","
                + " \"compress\": true, \"minFreeSpace\": 0" + extra + "}";
    }

    @Test
    void startStatusStop() {
        assertThat(json(endpoints.handle("GET", "/api/traffic/capture", null))).isEqualTo(Map.of("state", "idle"));

        CaptureEndpoints.Response started = endpoints.handle("POST", "/api/traffic/capture/start", startBody("a", ""));

        assertThat(started.status()).isEqualTo(200);
        assertThat(json(started)).containsEntry("state", "running").containsEntry("duration", "10m")
                .containsEntry("compress", true).containsEntry("output", tmp.resolve("a").toString())
                .containsEntry("dropped", 0L);
        assertThat(json(endpoints.handle("GET", "/api/traffic/capture?verbose=1", null)))
                .containsEntry("state", "running");

        CaptureEndpoints.Response stopped = endpoints.handle("POST", "/api/traffic/capture/stop", "");

        assertThat(stopped.status()).isEqualTo(200);
        assertThat(json(stopped)).containsEntry("state", "stopped").containsEntry("stopReason", "stopped on request");
        assertThat(json(endpoints.handle("GET", "/api/traffic/capture", null))).containsEntry("state", "stopped");
    }

    @Test
    void conflictsAreRefusedWith409() {
        assertThat(endpoints.handle("POST", "/api/traffic/capture/stop", null).status()).isEqualTo(409);
        endpoints.handle("POST", "/api/traffic/capture/start", startBody("b", ""));

        CaptureEndpoints.Response again = endpoints.handle("POST", "/api/traffic/capture/start", startBody("c", ""));

        assertThat(again.status()).isEqualTo(409);
        assertThat(json(again).get("error").toString()).startsWith("a capture is already running");
    }

    @Test
    void badRequestsAreRefusedWith400NamingTheProblem() {
        assertThat(endpoints.handle("POST", "/api/traffic/capture/start", "{\"duration\": \"10m\"}"))
                .satisfies(r -> assertThat(r.status()).isEqualTo(400))
                .satisfies(r -> assertThat(json(r).get("error")).isEqualTo(
                        "output: null (expected: a directory path)"));
        assertThat(json(endpoints.handle("POST", "/api/traffic/capture/start", startBody("d", ", \"durration\": 1")))
                .get("error").toString()).startsWith("durration: unknown key");
        assertThat(json(endpoints.handle("POST", "/api/traffic/capture/start",
                startBody("e", "").replace("10m", "ten minutes"))).get("error"))
                .isEqualTo("duration: \"ten minutes\" (expected: e.g. 10m, 90s, 1h30m)");
        assertThat(endpoints.handle("POST", "/api/traffic/capture/start", "{not json").status()).isEqualTo(400);
        assertThat(json(endpoints.handle("POST", "/api/traffic/capture/start",
                startBody("f", ", \"keyFile\": \"/nonexistent/key\""))).get("error").toString())
                .startsWith("keyFile: /nonexistent/key: cannot be read");
        assertThat(capture.status().state()).isEqualTo("idle");
    }

    @Test
    void storageProblemsAreRefusedWith507() {
        CaptureEndpoints.Response response = endpoints.handle("POST", "/api/traffic/capture/start",
                startBody("g", "").replace("\"minFreeSpace\": 0", "\"minFreeSpace\": \"1000000t\""));

        assertThat(response.status()).isEqualTo(507);
        assertThat(json(response).get("error").toString()).contains("below minFreeSpace");
    }

    @Test
    void wrongMethodsAndPaths() {
        assertThat(endpoints.handle("GET", "/api/traffic/capture/start", null).status()).isEqualTo(405);
        assertThat(endpoints.handle("DELETE", "/api/traffic/capture", null).status()).isEqualTo(405);
        assertThat(endpoints.handle("GET", "/api/traffic/replay", null).status()).isEqualTo(404);
        assertThat(CaptureEndpoints.handles("/api/traffic/capture/stop")).isTrue();
        assertThat(CaptureEndpoints.handles("/api/backends")).isFalse();
    }

    @Test
    void sizesAndDurationsInTheirUsualForms() {
        assertThat(CaptureOptions.parseDuration("1h30m")).hasMinutes(90);
        assertThat(CaptureOptions.parseDuration("500ms").toMillis()).isEqualTo(500);
        assertThat(CaptureOptions.parseSize("10g")).isEqualTo(10L << 30);
        assertThat(CaptureOptions.parseSize("512MiB")).isEqualTo(512L << 20);
        assertThat(CaptureOptions.parseSize("4096")).isEqualTo(4096);
        assertThat(CaptureStatus.format(java.time.Duration.ofMinutes(90))).isEqualTo("1h30m");
    }
}
