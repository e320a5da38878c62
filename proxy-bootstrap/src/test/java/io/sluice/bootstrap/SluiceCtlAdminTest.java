package io.sluice.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.sluice.api.BuildInfo;
import io.sluice.config.AdminConfig;
import io.sluice.testing.ProxyUnderTest;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@code sluice-ctl}'s admin commands against two running Sluice instances at once (a fleet behind one Service):
 * backends, drain and undrain on both, sessions, version, reload, and the exit status when one instance is gone.
 */
@Tag("server")
class SluiceCtlAdminTest {
    private static final String TOKEN = "fleet-token";

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int ctl(String... args) {
        out.reset();
        err.reset();
        return SluiceCtl.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of("SLUICE_ADMIN_TOKEN", TOKEN));
    }

    private String out() {
        return out.toString(StandardCharsets.UTF_8);
    }

    @Test
    void drainsUndrainsAndDescribesSeveralInstancesInTurn() {
        assumeFalse(ProxyUnderTest.isDirect(), "the admin API is Sluice's");
        try (ProxyUnderTest a = ProxyUnderTest.builder().admin(AdminConfig.on("127.0.0.1", 0, TOKEN)).start();
             ProxyUnderTest b = ProxyUnderTest.builder().admin(AdminConfig.on("127.0.0.1", 0, TOKEN)).start()) {
            String both = "127.0.0.1:" + a.adminPort() + ",127.0.0.1:" + b.adminPort();

            assertThat(ctl("backends", "--admin", both)).isZero();
            assertThat(out()).contains("== 127.0.0.1:" + a.adminPort(), "== 127.0.0.1:" + b.adminPort())
                    .contains("\"ds_0\"").contains("UP");

            assertThat(ctl("drain", "ds_0", "--admin", both)).as(err.toString(StandardCharsets.UTF_8)).isZero();
            assertThat(a.sluice().backends().get(0).state().status()).hasToString("DRAINING");
            assertThat(b.sluice().backends().get(0).state().status()).hasToString("DRAINING");
            assertThat(ctl("undrain", "ds_0", "--admin", both)).isZero();
            assertThat(a.sluice().backends().get(0).state().status()).hasToString("UP");
            assertThat(b.sluice().backends().get(0).state().status()).hasToString("UP");

            assertThat(ctl("sessions", "--verbose", "--admin", both)).isZero();
            assertThat(out()).contains("\"total\"");
            assertThat(ctl("version", "--admin", both)).isZero();
            assertThat(out()).contains("\"version\": \"" + BuildInfo.version() + "\"");
            assertThat(ctl("reload", "--admin", "127.0.0.1:" + a.adminPort())).as("started from code: no file")
                    .isEqualTo(SluiceCtl.EXIT_FAILED);
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("HTTP 409");

            assertThat(ctl("drain", "no_such_backend", "--admin", both)).isEqualTo(SluiceCtl.EXIT_FAILED);
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("HTTP 404");
            assertThat(ctl("drain", "--admin", both)).isEqualTo(SluiceCtl.EXIT_BAD_ARGUMENTS);
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("Missing required parameter: 'NAME'")
                    .contains("Usage: sluice-ctl drain");

            // options may also come before the backend's name
            assertThat(ctl("drain", "--admin", both, "ds_0")).isZero();
            assertThat(a.sluice().backends().get(0).state().status()).hasToString("DRAINING");
            assertThat(ctl("undrain", "--admin", both, "ds_0")).isZero();
            assertThat(b.sluice().backends().get(0).state().status()).hasToString("UP");
        }
    }

    @Test
    void oneInstanceGoneFailsTheCommandButTheOthersAreStillServed() {
        assumeFalse(ProxyUnderTest.isDirect(), "the admin API is Sluice's");
        int gone;
        try (java.net.ServerSocket free = new java.net.ServerSocket(0)) {
            gone = free.getLocalPort();
        } catch (java.io.IOException e) {
            throw new AssertionError(e);
        }
        try (ProxyUnderTest a = ProxyUnderTest.builder().admin(AdminConfig.on("127.0.0.1", 0, TOKEN)).start()) {
            assertThat(ctl("version", "--admin", "127.0.0.1:" + gone + ",127.0.0.1:" + a.adminPort()))
                    .isEqualTo(SluiceCtl.EXIT_FAILED);
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("cannot reach the admin API at http://127.0.0.1:"
                    + gone);
            assertThat(out()).contains("== 127.0.0.1:" + a.adminPort()).contains("\"version\"");
        }
    }
}
