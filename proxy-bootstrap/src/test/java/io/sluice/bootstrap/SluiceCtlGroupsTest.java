package io.sluice.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice-ctl groups}, {@code events}, {@code switchover} and {@code rejoin} (issue #40): the admin API calls they make, with
 * the token, over real HTTP to a recording server; the switchover itself is tested against real servers in
 * proxy-core's {@code SwitchoverTest}.
 */
class SluiceCtlGroupsTest {
    private static final String TOKEN = "t0ken";

    private final List<String> requests = new CopyOnWriteArrayList<>();
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();
    private HttpServer admin;

    @BeforeEach
    void startAdmin() throws IOException {
        admin = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        admin.createContext("/api/groups", exchange -> {
            requests.add(exchange.getRequestMethod() + " " + exchange.getRequestURI() + " "
                    + exchange.getRequestHeaders().getFirst("Authorization"));
            boolean refused = exchange.getRequestURI().getQuery() != null
                    && exchange.getRequestURI().getQuery().contains("to=busy");
            byte[] body = (refused ? "{\"error\":\"abandoned: 1 write transaction(s) still open\"}"
                    : "{\"group\":\"app_rw\"}").getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(refused ? 409 : 200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        admin.start();
    }

    @AfterEach
    void stopAdmin() {
        admin.stop(0);
    }

    private int ctl(String... args) {
        out.reset();
        err.reset();
        return SluiceCtl.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8),
                Map.of("SLUICE_ADMIN", "127.0.0.1:" + admin.getAddress().getPort(), "SLUICE_ADMIN_TOKEN", TOKEN));
    }

    @Test
    void groupCommandsCallTheGroupEndpoints() {
        assertThat(ctl("groups")).isZero();
        assertThat(ctl("groups", "app_rw")).isZero();
        assertThat(out.toString(StandardCharsets.UTF_8)).contains("\"group\": \"app_rw\"");
        assertThat(ctl("events", "app_rw")).isZero();
        assertThat(ctl("switchover", "app_rw", "--to", "replica_0", "--dry-run")).isZero();
        assertThat(ctl("switchover", "app_rw", "--force", "--timeout", "2000")).isZero();
        assertThat(requests).containsExactly(
                "GET /api/groups Bearer " + TOKEN,
                "GET /api/groups/app_rw Bearer " + TOKEN,
                "GET /api/groups/app_rw/events Bearer " + TOKEN,
                "POST /api/groups/app_rw/switchover?to=replica_0&dryRun=true Bearer " + TOKEN,
                "POST /api/groups/app_rw/switchover?force=true&timeout=2000 Bearer " + TOKEN);
    }

    @Test
    void rejoinPostsTheFencedServer() {
        assertThat(ctl("rejoin", "app_rw", "primary")).isZero();
        assertThat(requests).containsExactly("POST /api/groups/app_rw/rejoin?datasource=primary Bearer " + TOKEN);
        assertThat(ctl("rejoin", "app_rw")).isEqualTo(SluiceCtl.EXIT_BAD_ARGUMENTS);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("DATASOURCE");
    }

    @Test
    void aRefusedSwitchoverFailsWithItsReason() {
        assertThat(ctl("switchover", "app_rw", "--to", "busy")).isEqualTo(SluiceCtl.EXIT_FAILED);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("HTTP 409").contains("still open");
        assertThat(ctl("switchover")).isEqualTo(SluiceCtl.EXIT_BAD_ARGUMENTS);
        assertThat(err.toString(StandardCharsets.UTF_8)).contains("Missing required parameter: 'GROUP'");
    }
}
