package io.sluice.operations;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.BuildInfo;
import io.sluice.balancer.BackendStatus;
import io.sluice.config.AdminConfig;
import io.sluice.config.MetricsConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.ops.SluiceServer;
import io.sluice.testing.AdminClient;
import io.sluice.testing.AdminClient.Response;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.SluiceExtension;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The admin API over real HTTP: reads, drain and undrain, the bearer token, and bad requests. */
@Tag("server")
class AdminApiTest {
    private static final String TOKEN = "s3cret-token";

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.with(b -> b.admin(AdminConfig.on("127.0.0.1", 0, TOKEN)))
            .sluiceOnly("Sluice's own admin API");

    private static AdminClient admin;

    @BeforeAll
    static void adminClient() {
        admin = new AdminClient("127.0.0.1", proxy.adminPort());
    }

    private static Sluice sluice() {
        return proxy.sluice();
    }

    private static ProxyConfig withAdmin(AdminConfig adminConfig) {
        return ProxyUnderTest.builder().admin(adminConfig).config();
    }

    private static Connection connect() throws SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice().port(), null, ""),
                ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
    }

    @Test
    void healthIsOkWhileServing() {
        Response health = admin.get("/health");

        assertThat(health.status()).isEqualTo(200);
        assertThat(health.body()).contains("\"status\":\"serving\"")
                .contains("\"version\":\"" + BuildInfo.version() + "\"");
        assertThat(health.header("content-type")).startsWith("application/json");
    }

    @Test
    void probesSayAliveAndReadyWithTheBackendUp() {
        Response live = admin.get("/livez");
        Response ready = admin.get("/readyz");

        assertThat(live.status()).isEqualTo(200);
        assertThat(live.body()).isEqualTo("{\"status\":\"alive\"}");
        assertThat(ready.status()).isEqualTo(200);
        assertThat(ready.body()).isEqualTo("{\"status\":\"ready\",\"backendsUp\":1,\"backends\":1}");
    }

    @Test
    void versionIsTheBuildsAndNotUnknown() {
        Response version = admin.get("/api/version");

        assertThat(version.status()).isEqualTo(200);
        assertThat(BuildInfo.version()).matches("\\d+\\.\\d+\\.\\d+.*");
        assertThat(version.body()).isEqualTo("{\"version\":\"" + BuildInfo.version() + "\",\"java\":\""
                + Runtime.version() + "\"}");
    }

    @Test
    void configShowsTheRunningConfigurationWithSecretsMasked() {
        Response config = admin.get("/api/config", TOKEN);

        assertThat(config.status()).as(config.body()).isEqualTo(200);
        assertThat(config.body()).contains("\"dataSources\":{\"ds_0\":{\"name\":\"ds_0\"")
                .contains("\"users\":[{\"user\":\"" + ProxyUnderTest.USER + "\"")
                .contains("\"password\":\"****\"").contains("\"token\":\"****\"")
                .doesNotContain(ProxyUnderTest.PASSWORD).doesNotContain(TOKEN);
    }

    @Test
    void sessionsAndConfigNeedATokenOnceOneIsSet() {
        Response sessions = admin.get("/api/sessions");
        Response config = admin.get("/api/config", "guess");

        assertThat(sessions.status()).isEqualTo(401);
        assertThat(sessions.body()).contains("missing Authorization");
        assertThat(config.status()).isEqualTo(401);
        assertThat(config.body()).contains("wrong token");
    }

    @Test
    void backendsShowStatusWeightSessionsAndPool() throws Exception {
        try (Connection connection = connect()) {
            connection.createStatement().executeQuery("SELECT 1").close();
            Response backends = admin.get("/api/backends");

            assertThat(backends.status()).isEqualTo(200);
            assertThat(backends.body()).startsWith("[{\"name\":\"ds_0\"").contains("\"status\":\"UP\"")
                    .contains("\"weight\":1").contains("\"activeSessions\":1").contains("\"pool\":{\"open\":")
                    .contains("\"max\":100").doesNotContain("password");
        }
    }

    @Test
    void mutatingCallsWithoutTheRightTokenAreRefusedAndChangeNothing() {
        Response none = admin.post("/api/backends/ds_0/drain", null);
        Response wrong = admin.post("/api/backends/ds_0/drain", "guess");
        Response reload = admin.post("/api/config/reload", null);

        assertThat(none.status()).isEqualTo(401);
        assertThat(none.header("www-authenticate")).isEqualTo("Bearer realm=\"sluice\"");
        assertThat(none.body()).contains("missing Authorization");
        assertThat(wrong.status()).isEqualTo(401);
        assertThat(wrong.body()).contains("wrong token").doesNotContain(TOKEN);
        assertThat(reload.status()).isEqualTo(401);
        assertThat(sluice().backends().get(0).state().status()).isEqualTo(BackendStatus.UP);
    }

    @Test
    void drainAndUndrainWithTheToken() {
        try {
            Response drained = admin.post("/api/backends/ds_0/drain", TOKEN);

            assertThat(drained.status()).isEqualTo(200);
            assertThat(drained.body()).contains("\"status\":\"DRAINING\"").contains("\"draining\":true");
            assertThat(sluice().backends().get(0).state().status()).isEqualTo(BackendStatus.DRAINING);
            assertThat(admin.get("/api/backends").body()).contains("\"status\":\"DRAINING\"");
        } finally {
            Response undrained = admin.post("/api/backends/ds_0/undrain", TOKEN);
            assertThat(undrained.status()).isEqualTo(200);
            assertThat(undrained.body()).contains("\"status\":\"UP\"");
        }
        assertThat(sluice().backends().get(0).state().status()).isEqualTo(BackendStatus.UP);
    }

    @Test
    void trafficCaptureIsDrivenThroughTheAdminApi(@TempDir Path dir) throws Exception {
        String start = "{\"output\": \"" + dir.resolve("capture") + "\", \"duration\": \"1m\"}";
        assertThat(admin.post("/api/traffic/capture/start", null, start).status()).isEqualTo(401);
        assertThat(admin.get("/api/traffic/capture").body()).doesNotContainPattern("\"state\"\\s*:\\s*\"running\"");

        Response started = admin.post("/api/traffic/capture/start", TOKEN, start);
        assertThat(started.status()).as(started.body()).isEqualTo(200);
        assertThat(started.body()).containsPattern("\"state\"\\s*:\\s*\"running\"");
        try (Connection connection = connect()) {
            connection.createStatement().executeQuery("SELECT 42").close();
        }
        Response status = admin.get("/api/traffic/capture");
        assertThat(status.status()).isEqualTo(200);
        assertThat(status.body()).containsPattern("\"state\"\\s*:\\s*\"running\"");
        assertThat(admin.post("/api/traffic/capture/start", TOKEN, start).status()).isEqualTo(409);
        assertThat(admin.get("/api/traffic/capture/stop").status()).isEqualTo(405);

        Response stopped = admin.post("/api/traffic/capture/stop", TOKEN, null);
        assertThat(stopped.status()).as(stopped.body()).isEqualTo(200);
        try (var files = Files.list(dir.resolve("capture"))) {
            assertThat(files.toList()).isNotEmpty();
        }
    }

    @Test
    void unknownBackendIs404() {
        Response response = admin.post("/api/backends/nope/drain", TOKEN);

        assertThat(response.status()).isEqualTo(404);
        assertThat(response.body()).contains("no backend named 'nope'");
    }

    @Test
    void reloadWithoutAConfigFileIsAConflict() {
        Response response = admin.post("/api/config/reload", TOKEN);

        assertThat(response.status()).isEqualTo(409);
        assertThat(response.body()).contains("no config file to reload");
    }

    @Test
    void sessionsCountsAndVerboseList() throws Exception {
        try (Connection connection = connect()) {
            connection.createStatement().executeQuery("SELECT 1").close();
            Response counts = admin.get("/api/sessions", TOKEN);
            Response verbose = admin.get("/api/sessions?verbose", TOKEN);

            assertThat(counts.status()).isEqualTo(200);
            assertThat(counts.body()).contains("\"total\":1").contains("\"byBackend\":{\"ds_0\":1}")
                    .doesNotContain("\"sessions\"");
            assertThat(verbose.body()).contains("\"sessions\":[{\"id\":").contains("\"user\":\"app\"")
                    .contains("\"backend\":\"ds_0\"").contains("\"state\":\"idle\"").contains("\"byState\":{\"idle\":1}");
        }
    }

    @Test
    void wrongMethodsAndUnknownPathsGetHttpErrors() {
        Response postHealth = admin.post("/health", TOKEN);
        Response getDrain = admin.get("/api/backends/ds_0/drain");
        Response getReload = admin.get("/api/config/reload");
        Response getCaptureStart = admin.get("/api/traffic/capture/start");
        Response postCaptureStatus = admin.post("/api/traffic/capture", TOKEN);
        Response unknown = admin.get("/nothing-here");

        assertThat(getReload.status()).isEqualTo(405);
        assertThat(getReload.header("allow")).isEqualTo("POST");
        assertThat(getCaptureStart.status()).isEqualTo(405);
        assertThat(getCaptureStart.header("allow")).isEqualTo("POST");
        assertThat(postCaptureStatus.status()).isEqualTo(405);
        assertThat(postCaptureStatus.header("allow")).isEqualTo("GET");
        assertThat(postHealth.status()).isEqualTo(405);
        assertThat(postHealth.header("allow")).isEqualTo("GET");
        assertThat(getDrain.status()).isEqualTo(405);
        assertThat(getDrain.header("allow")).isEqualTo("POST");
        assertThat(unknown.status()).isEqualTo(404);
        assertThat(unknown.body()).contains("no such endpoint");
    }

    @Test
    void malformedAndOversizedRequestsGetHttpErrorsAndTheServerCarriesOn() throws Exception {
        // Not a request line (the JDK server took it for method THIS on an unknown path: 404; decision 132)
        assertThat(raw("THIS IS NOT HTTP\r\n\r\n")).startsWith("HTTP/1.1 400");
        assertThat(raw("GET\r\n\r\n")).startsWith("HTTP/1.1 400");
        assertThat(raw("GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n")).startsWith("HTTP/1.1 400");
        assertThat(raw("POST /api/config/reload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n"))
                .startsWith("HTTP/1.1 413");
        // a chunked body declares no length: refused before it is read (decision 132)
        assertThat(raw("POST /api/config/reload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4e20\r\n"
                + "x".repeat(20_000) + "\r\n0\r\n\r\n")).startsWith("HTTP/1.1 411");
        assertThat(admin.get("/health").status()).isEqualTo(200);
    }

    @Test
    void withoutATokenConfiguredMutatingCallsAreForbidden() {
        try (SluiceServer open = SluiceServer.start(withAdmin(AdminConfig.on("127.0.0.1", 0, null)))) {
            AdminClient client = new AdminClient("127.0.0.1", open.adminPort());

            Response response = client.post("/api/backends/ds_0/drain", "anything");

            assertThat(response.status()).isEqualTo(403);
            assertThat(response.body()).contains("set admin.token");
            assertThat(open.sluice().backends().get(0).state().status()).isEqualTo(BackendStatus.UP);
        }
    }

    @Test
    void metricsSwitchedOffAnswer404AndTheRestStillWorks() {
        ProxyConfig base = withAdmin(AdminConfig.on("127.0.0.1", 0, null));
        try (SluiceServer off = SluiceServer.start(base.withOperations(base.operations()
                .withMetrics(new MetricsConfig(false))))) {
            AdminClient client = new AdminClient("127.0.0.1", off.adminPort());

            assertThat(off.metrics()).isNull();
            assertThat(client.get("/metrics").status()).isEqualTo(404);
            assertThat(client.get("/health").status()).isEqualTo(200);
        }
    }

    @Test
    void aTakenAdminPortRefusesToStart() {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0, 1,
                java.net.InetAddress.getByName("127.0.0.1"))) {
            ProxyConfig config = withAdmin(AdminConfig.on("127.0.0.1", taken.getLocalPort(), null));
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> SluiceServer.start(config))
                    .isInstanceOf(io.sluice.config.ConfigException.class)
                    .hasMessageContaining("admin.port: " + taken.getLocalPort());
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
    }

    /** Sends raw bytes and returns what comes back until the server closes or 2 s pass. */
    private static String raw(String request) throws Exception {
        try (Socket socket = new Socket("127.0.0.1", proxy.adminPort())) {
            socket.setSoTimeout(2000);
            OutputStream out = socket.getOutputStream();
            out.write(request.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[4096];
            int n = in.read(buffer);
            return n <= 0 ? "" : new String(buffer, 0, n, StandardCharsets.US_ASCII);
        }
    }
}
