package io.sluice.admin;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.api.BackendSnapshot;
import io.sluice.api.ProxyControl;
import io.sluice.api.ReloadResult;
import io.sluice.api.SessionSnapshot;
import io.sluice.balancer.BackendState;
import io.sluice.balancer.BackendStatus;
import io.sluice.capture.TrafficCapture;
import io.sluice.config.AdminConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.TlsConfig;
import java.nio.file.Path;
import io.sluice.testing.AdminClient;
import io.sluice.testing.AdminClient.Response;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The admin server in front of a proxy whose state the test sets: readiness by backend and drain state, who may read
 * sessions and configuration, and that a slow reload holds up no probe.
 */
class AdminServerTest {
    private static final String TOKEN = "write-token";
    private static final String READ_TOKEN = "read-token";

    private final FakeProxy proxy = new FakeProxy();
    private AdminServer server;

    @AfterEach
    void close() {
        proxy.releaseReload.countDown();
        if (server != null) {
            server.close();
        }
    }

    private AdminClient start(AdminConfig config) {
        server = AdminServer.start(config, proxy, new TrafficCapture(), null);
        return new AdminClient("127.0.0.1", server.port());
    }

    private AdminClient start() {
        return start(new AdminConfig(true, "127.0.0.1", 0, TOKEN, READ_TOKEN));
    }

    @Test
    void readyOnlyWithABackendUpAndNotDraining() {
        AdminClient admin = start();

        proxy.backends = List.of(backend("ds_0", BackendStatus.DOWN, 1), backend("ds_1", BackendStatus.UP, 1));
        Response oneUp = admin.get("/readyz");
        proxy.backends = List.of(backend("ds_0", BackendStatus.DOWN, 1), backend("ds_1", BackendStatus.DRAINING, 1));
        Response noneUp = admin.get("/readyz");
        proxy.backends = List.of(backend("ds_0", BackendStatus.UP, 0));
        Response upButWeightZero = admin.get("/readyz");
        proxy.backends = List.of(backend("ds_0", BackendStatus.UP, 1));
        proxy.draining = true;
        Response draining = admin.get("/readyz");

        assertThat(oneUp.status()).isEqualTo(200);
        assertThat(oneUp.body()).isEqualTo("{\"status\":\"ready\",\"backendsUp\":1,\"backends\":2}");
        assertThat(noneUp.status()).isEqualTo(503);
        assertThat(noneUp.body()).isEqualTo("{\"status\":\"no backend up\",\"backendsUp\":0,\"backends\":2}");
        assertThat(upButWeightZero.status()).isEqualTo(503);
        assertThat(draining.status()).isEqualTo(503);
        assertThat(draining.body()).isEqualTo("{\"status\":\"draining\",\"backendsUp\":1,\"backends\":1}");
    }

    @Test
    void aliveWhileDrainingAndWithEveryBackendDown() {
        AdminClient admin = start();
        proxy.draining = true;
        proxy.backends = List.of(backend("ds_0", BackendStatus.DOWN, 1));

        Response live = admin.get("/livez");

        assertThat(live.status()).isEqualTo(200);
        assertThat(admin.get("/health").status()).isEqualTo(503); // the old combined check, unchanged
    }

    @Test
    void aSlowReloadHoldsUpNoProbe() throws Exception {
        AdminClient admin = start();
        proxy.backends = List.of(backend("ds_0", BackendStatus.UP, 1));

        CompletableFuture<Response> reload = CompletableFuture.supplyAsync(
                () -> admin.post("/api/config/reload", TOKEN));
        assertThat(proxy.reloadEntered.await(30, TimeUnit.SECONDS)).as("the reload started").isTrue();

        // The reload holds one admin thread until released; with a single thread these would wait for it.
        assertThat(admin.get("/livez").status()).isEqualTo(200);
        assertThat(admin.get("/readyz").status()).isEqualTo(200);
        assertThat(admin.get("/api/sessions", READ_TOKEN).status()).isEqualTo(200);
        assertThat(reload).isNotDone();

        proxy.releaseReload.countDown();
        assertThat(reload.get(30, TimeUnit.SECONDS).status()).isEqualTo(200);
    }

    @Test
    void theReadTokenOpensSessionsAndConfigButNoPost() {
        AdminClient admin = start();

        assertThat(admin.get("/api/sessions", READ_TOKEN).status()).isEqualTo(200);
        assertThat(admin.get("/api/config", READ_TOKEN).status()).isEqualTo(200);
        assertThat(admin.get("/api/sessions", TOKEN).status()).isEqualTo(200);
        assertThat(admin.get("/api/sessions").status()).isEqualTo(401);
        Response drain = admin.post("/api/backends/ds_0/drain", READ_TOKEN);
        assertThat(drain.status()).isEqualTo(401);
        assertThat(drain.body()).contains("wrong token");
        assertThat(proxy.drained).isFalse();
        // probes, metrics and backends stay open to whoever reaches the port
        assertThat(admin.get("/readyz").status()).isIn(200, 503);
        assertThat(admin.get("/api/backends").status()).isEqualTo(200);
        assertThat(admin.get("/api/version").status()).isEqualTo(200);
    }

    @Test
    void withoutTokensSessionsAreOpenOnLoopbackOnly() {
        AdminClient loopback = start(new AdminConfig(true, "127.0.0.1", 0, null, null));
        assertThat(loopback.get("/api/sessions").status()).isEqualTo(200);
        server.close();

        AdminClient open = start(new AdminConfig(true, "0.0.0.0", 0, null, null));
        Response sessions = open.get("/api/sessions?verbose");
        Response config = open.get("/api/config");

        assertThat(sessions.status()).isEqualTo(403);
        assertThat(sessions.body()).contains("admin.readToken");
        assertThat(config.status()).isEqualTo(403);
        assertThat(open.get("/livez").status()).isEqualTo(200);
    }

    @Test
    void configIsMaskedWhereverASecretSits() {
        proxy.config = ProxyConfig.builder().dataSource("ds_0", "jdbc:mysql://127.0.0.1:3306/test", "root", "db-pw")
                .user("app", "app-pw").user("nopass", "")
                .server(ServerConfig.defaults().withTls(TlsConfig.defaults().withGeneratedDirectory(
                        Path.of("/etc/sluice"))))
                .admin("127.0.0.1", 0, "admin-pw").build();
        AdminClient admin = start();

        Response config = admin.get("/api/config", READ_TOKEN);

        assertThat(config.status()).isEqualTo(200);
        assertThat(config.body()).doesNotContain("db-pw").doesNotContain("app-pw").doesNotContain("admin-pw")
                .contains("\"username\":\"root\",\"password\":\"****\"")
                .contains("{\"user\":\"app\",\"host\":\"%\",\"password\":\"****\",\"passwordHash\":null")
                .contains("{\"user\":\"nopass\",\"host\":\"%\",\"password\":\"\"")
                .contains("\"token\":\"****\",\"readToken\":null")
                // a Path is also an Iterable of Paths: written as its text, not walked
                .contains("\"generatedDirectory\":\"/etc/sluice\"");
    }

    private static BackendSnapshot backend(String name, BackendStatus status, int weight) {
        BackendState state = new BackendState(name, "127.0.0.1:3306", status, status == BackendStatus.DRAINING,
                weight, 0, 0, null, 0, 0);
        return new BackendSnapshot(state, 0, 0, 0, 10, 0, 0, 0, new long[0], 0);
    }

    /** A proxy whose state the test sets; its reload waits until the test releases it. */
    private static final class FakeProxy implements ProxyControl {
        volatile boolean draining;
        volatile boolean drained;
        volatile List<BackendSnapshot> backends = List.of();
        volatile ProxyConfig config = ProxyConfig.builder()
                .dataSource("ds_0", "jdbc:mysql://127.0.0.1:3306/test", "root", "").build();
        final CountDownLatch reloadEntered = new CountDownLatch(1);
        final CountDownLatch releaseReload = new CountDownLatch(1);

        @Override
        public List<BackendSnapshot> backends() {
            return backends;
        }

        @Override
        public int clientConnections() {
            return 0;
        }

        @Override
        public List<SessionSnapshot> sessions() {
            return List.of();
        }

        @Override
        public ProxyConfig config() {
            return config;
        }

        @Override
        public boolean isDraining() {
            return draining;
        }

        @Override
        public boolean drain(String name) {
            drained = true;
            return true;
        }

        @Override
        public boolean undrain(String name) {
            return true;
        }

        @Override
        public ReloadResult reload() {
            reloadEntered.countDown();
            try {
                releaseReload.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return new ReloadResult(List.of(), List.of());
        }
    }
}
