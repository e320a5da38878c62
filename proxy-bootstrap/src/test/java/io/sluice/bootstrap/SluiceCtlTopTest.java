package io.sluice.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.sluice.config.AdminConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** {@code sluice-ctl top --once} against a running Sluice: the statements sent show with their counts, in order. */
@Tag("server")
class SluiceCtlTopTest {
    private static final String TOKEN = "top-token";

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int ctl(String... args) {
        out.reset();
        err.reset();
        return SluiceCtl.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of("SLUICE_ADMIN_TOKEN", TOKEN));
    }

    @Test
    void topOnceShowsTheDigestsByTheOrderAsked() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "the admin API is Sluice's");
        try (ProxyUnderTest proxy = ProxyUnderTest.builder().admin(AdminConfig.on("127.0.0.1", 0, TOKEN)).start()) {
            try (Connection c = proxy.connect(JdbcDriver.MARIADB, null, "useServerPrepStmts=true");
                    Statement s = c.createStatement();
                    PreparedStatement p = c.prepareStatement("SELECT ? + 1 AS next_value")) {
                for (int i = 0; i < 40; i++) {
                    p.setInt(1, i);
                    try (ResultSet rs = p.executeQuery()) {
                        assertThat(rs.next()).isTrue();
                    }
                }
                s.executeQuery("SELECT SLEEP(0.2)").close();
            }
            String admin = "127.0.0.1:" + proxy.adminPort();

            assertThat(ctl("top", "--once", "--admin", admin, "--order-by", "count", "--limit", "5"))
                    .as(err.toString(StandardCharsets.UTF_8)).isZero();
            List<String> lines = out.toString(StandardCharsets.UTF_8).lines().toList();
            assertThat(lines.get(0)).startsWith("sluice top - ").contains("ordered by count");
            assertThat(lines.get(2)).contains("COUNT", "ERRORS", "TOTAL_MS", "P99_US", "USER", "DIGEST_TEXT");
            assertThat(lines.get(3)).matches("\\s+40\\s+0\\s.*").contains(ProxyUnderTest.USER)
                    .endsWith("select ? + ? as next_value");

            assertThat(ctl("top", "--once", "--admin", admin)).isZero();
            assertThat(out.toString(StandardCharsets.UTF_8).lines().toList().get(3)).contains("select sleep (?)")
                    .matches("\\s+1\\s+0\\s+2\\d\\d\\.\\d .*");

            assertThat(ctl("top", "--once", "--admin", admin, "--order-by", "bogus"))
                    .isEqualTo(SluiceCtl.EXIT_FAILED);
            assertThat(err.toString(StandardCharsets.UTF_8)).contains("HTTP 400", "orderBy: bogus");
        }
    }
}
