package io.sluice.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import io.sluice.capture.CaptureEndpoints;
import io.sluice.json.Json;
import io.sluice.capture.TrafficCapture;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code sluice-ctl} end to end: its capture commands over real HTTP to {@link CaptureEndpoints} (served here by the
 * JDK's HTTP server with a bearer token, as the admin server will), its usage errors, and a damaged capture given to
 * replay.
 */
class SluiceCtlTest {
    private static final String TOKEN = "s3cret";

    @TempDir
    Path tmp;

    private final TrafficCapture capture = new TrafficCapture();
    private HttpServer admin;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    @BeforeEach
    void startAdmin() throws IOException {
        CaptureEndpoints endpoints = new CaptureEndpoints(capture);
        admin = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        admin.createContext("/api/traffic/", exchange -> {
            byte[] body;
            int status;
            if (!("Bearer " + TOKEN).equals(exchange.getRequestHeaders().getFirst("Authorization"))) {
                status = 401;
                body = "{\"error\":\"unauthorized\"}".getBytes(StandardCharsets.UTF_8);
            } else {
                CaptureEndpoints.Response response = endpoints.handle(exchange.getRequestMethod(),
                        exchange.getRequestURI().toString(),
                        new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
                status = response.status();
                body = response.json().getBytes(StandardCharsets.UTF_8);
            }
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(status, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        admin.start();
    }

    @AfterEach
    void stopAdmin() {
        capture.stop("test over", false);
        admin.stop(0);
    }

    private int ctl(Map<String, String> env, String... args) {
        out.reset();
        err.reset();
        return SluiceCtl.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), env);
    }

    private String adminAddress() {
        return "127.0.0.1:" + admin.getAddress().getPort();
    }

    private String stdout() {
        return out.toString(StandardCharsets.UTF_8);
    }

    private String stderr() {
        return err.toString(StandardCharsets.UTF_8);
    }

    @Test
    void captureStartStatusStopThroughTheAdminApi() {
        Path dir = tmp.resolve("capture");
        Map<String, String> env = Map.of("SLUICE_ADMIN", adminAddress(), "SLUICE_ADMIN_TOKEN", TOKEN);

        assertThat(ctl(env, "traffic", "capture", "start", "--output", dir.toString(), "--duration", "10m",
                "--compress", "false", "--min-free-space", "0")).as(stderr()).isZero();
        assertThat(Json.parseObject(stdout())).containsEntry("state", "running").containsEntry("compress", false)
                .containsEntry("output", dir.toString());
        assertThat(capture.status().running()).isTrue();

        assertThat(ctl(env, "traffic", "capture", "status")).isZero();
        assertThat(Json.parseObject(stdout())).containsEntry("state", "running");

        assertThat(ctl(env, "traffic", "capture", "stop")).isZero();
        assertThat(Json.parseObject(stdout())).containsEntry("state", "stopped");
        assertThat(dir.resolve("capture-000001.cap")).exists();

        assertThat(ctl(env, "traffic", "capture", "stop")).isEqualTo(SluiceCtl.EXIT_FAILED);
        assertThat(stderr()).contains("HTTP 409: no capture is running");
    }

    @Test
    void theTokenComesFromTheOptionAndAWrongOneIsRefused() {
        assertThat(ctl(Map.of(), "traffic", "capture", "status", "--admin", adminAddress(), "--token", TOKEN))
                .isZero();
        assertThat(ctl(Map.of(), "traffic", "capture", "status", "--admin", adminAddress(), "--token", "wrong"))
                .isEqualTo(SluiceCtl.EXIT_FAILED);
        assertThat(stderr()).contains("HTTP 401: unauthorized");
    }

    @Test
    void anUnreachableAdminApiIsSaidPlainly() throws IOException {
        int closed;
        try (ServerSocket socket = new ServerSocket(0)) {
            closed = socket.getLocalPort();
        }
        assertThat(ctl(Map.of(), "traffic", "capture", "status", "--admin", "127.0.0.1:" + closed))
                .isEqualTo(SluiceCtl.EXIT_FAILED);
        assertThat(stderr()).contains("cannot reach the admin API at http://127.0.0.1:" + closed);
    }

    @Test
    void badArgumentsGiveUsageAndStatusTwo() {
        assertThat(ctl(Map.of(), "traffic", "capture", "start")).isEqualTo(SluiceCtl.EXIT_BAD_ARGUMENTS);
        // picocli's words for a missing option, then the usage of the command it was missing from
        assertThat(stderr()).contains("Missing required option: '--output DIR'")
                .contains("Usage: sluice-ctl traffic capture start");
        assertThat(ctl(Map.of(), "traffic", "capture", "start", "--output", "x", "--duration", "soon"))
                .isEqualTo(SluiceCtl.EXIT_BAD_ARGUMENTS);
        assertThat(stderr()).contains("duration: \"soon\"");
        assertThat(ctl(Map.of(), "traffic", "replay", "--input", "x", "--target", "nohostport", "--user", "u",
                "--password", "p")).isEqualTo(SluiceCtl.EXIT_BAD_ARGUMENTS);
        assertThat(ctl(Map.of(), "traffic", "replay", "--input", "x", "--target", "h:1", "--user", "u",
                "--password", "p", "--speed", "0")).isEqualTo(SluiceCtl.EXIT_BAD_ARGUMENTS);
        assertThat(stderr()).contains("--speed: 0.0 (expected: a number above 0");
        assertThat(ctl(Map.of(), "--help")).isZero();
        assertThat(stdout()).contains("sluice-ctl traffic replay --input DIR --target HOST:PORT");
        assertThat(ctl(Map.of(), "frobnicate")).isEqualTo(SluiceCtl.EXIT_BAD_ARGUMENTS);
        assertThat(stderr()).contains("Unmatched argument at index 0: 'frobnicate'").contains("Usage:");
        assertThat(ctl(Map.of())).isEqualTo(SluiceCtl.EXIT_BAD_ARGUMENTS);
        assertThat(stderr()).contains("Missing required subcommand")
                .contains("sluice-ctl traffic capture start --output DIR");
        assertThat(ctl(Map.of(), "sessions", "--admin", "a:1", "--admin", "b:2"))
                .isEqualTo(SluiceCtl.EXIT_BAD_ARGUMENTS);
        assertThat(stderr()).contains("option '--admin' (HOST:PORT[,HOST:PORT...]) should be specified only once");
        assertThat(ctl(Map.of(), "traffic", "replay", "--input", "x", "--target", "h:1", "--user", "u", "--admin",
                "a:1")).as("replay calls no admin API").isEqualTo(SluiceCtl.EXIT_BAD_ARGUMENTS);
        assertThat(stderr()).contains("Unknown options: '--admin', 'a:1'");
    }

    @Test
    void eachCommandExplainsItsOwnOptions() {
        assertThat(ctl(Map.of(), "drain", "--help")).isZero();
        assertThat(stdout()).contains("Usage: sluice-ctl drain").contains("NAME").contains("--admin HOST:PORT")
                .contains("--token TOKEN").doesNotContain("traffic replay");
        assertThat(ctl(Map.of(), "traffic", "capture", "start", "--help")).isZero();
        assertThat(stdout()).contains("--output DIR").contains("--min-free-space SIZE").contains("--key-file FILE");
        assertThat(ctl(Map.of(), "--version")).isZero();
        assertThat(stdout()).startsWith("sluice-ctl ");
    }

    @Test
    void aTruncatedCaptureIsNamedWithItsOffset() throws Exception {
        Path dir = tmp.resolve("damaged");
        capture.start(io.sluice.capture.CaptureOptions.of(dir).withMinFreeSpace(0));
        capture.stop(); // the header and a block with the end-of-file record
        Path file = dir.resolve("capture-000001.cap");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(raf.length() - 3);
        }

        int status = ctl(Map.of(), "traffic", "replay", "--input", dir.toString(), "--target", "127.0.0.1:1",
                "--user", "u", "--password", "p");

        assertThat(status).isEqualTo(SluiceCtl.EXIT_FAILED);
        assertThat(stderr()).contains("sluice-ctl: damaged capture: " + file + ": at offset 40: truncated");
    }
}
