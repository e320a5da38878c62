package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.ClientCounts;
import io.sluice.balancer.Policy;
import io.sluice.config.PoolingConfig;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.TestMariaDb;
import io.sluice.testing.Tool;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue #31's acceptance run in session pooling (decision 106): one of three backends is drained under sysbench
 * {@code oltp_read_write}, whose sessions keep their server-side prepared statements (BEGIN and COMMIT among them)
 * open for life and whose client (libmariadb) sends parameter types only on a statement's first execute. Every
 * session leaves the drained backend within a few seconds, and sysbench sees no error at all.
 */
@Tag("server")
@Tag("tools")
class SessionPoolingSysbenchDrainTest {
    private static final String DB = "sysbench_drain";
    private static final int THREADS = 6;
    private static final int SECONDS = 14;
    private static BackendCluster cluster;
    private static Path sysbench;

    @BeforeAll
    static void prepareTables() throws Exception {
        sysbench = Tool.SYSBENCH.path();
        cluster = BackendCluster.shared();
        for (String name : BackendCluster.NAMES) {
            // Each server has its own copy of the tables: a session that moves goes on with the other's rows.
            cluster.server(name).execute("DROP DATABASE IF EXISTS " + DB, "CREATE DATABASE " + DB);
            Process prepare = new ProcessBuilder(command(cluster.server(name).port(), TestMariaDb.ROOT_USER,
                    TestMariaDb.ROOT_PASSWORD, "prepare")).redirectErrorStream(true).start();
            String out = new String(prepare.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(prepare.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(prepare.exitValue()).as(out).isZero();
        }
    }

    private static List<String> command(int port, String user, String password, String... last) {
        List<String> command = new ArrayList<>(List.of(sysbench.toString(), "oltp_read_write", "--db-driver=mysql",
                "--mysql-host=127.0.0.1", "--mysql-port=" + port, "--mysql-user=" + user,
                "--mysql-password=" + password, "--mysql-db=" + DB, "--tables=4", "--table-size=10000",
                // uniform keys: the default ("special") piles the threads onto a few rows, whose deadlocks sysbench
                // counts as ignored errors with or without Sluice
                "--rand-type=uniform", "--db-ps-mode=auto"));
        command.addAll(List.of(last));
        return command;
    }

    @Test
    void drainingOneOfThreeBackendsUnderSysbenchMovesEverySessionWithoutAnError() throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN, BackendCluster.FAST_CHECKS, name -> 1,
                PoolingConfig.defaults())) {
            Path log = Files.createTempFile("sysbench-drain", ".log");
            Process run = new ProcessBuilder(command(sluice.port(), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD,
                    "--threads=" + THREADS, "--time=" + SECONDS, "--report-interval=1", "run"))
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (sluice.sessions().size() < THREADS && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                }
                assertThat(sluice.sessions()).hasSize(THREADS);
                Thread.sleep(3000); // under way: every session has prepared and run its statements
                long onB = sluice.sessions().stream().filter(s -> "b".equals(s.backend())).count();
                assertThat(onB).as("sessions on b: %s", sluice.sessions()).isPositive();

                assertThat(sluice.drain("b")).isTrue();
                long drained = System.nanoTime();
                deadline = drained + TimeUnit.SECONDS.toNanos(5);
                while (sluice.sessions().stream().anyMatch(s -> "b".equals(s.backend()))
                        && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - drained);
                assertThat(sluice.sessions()).as("sessions %d ms after the drain", tookMillis)
                        .noneMatch(s -> "b".equals(s.backend()));
                assertThat(moves(sluice)).isEqualTo(onB);
                assertThat(sluice.sessions()).hasSize(THREADS).allMatch(s -> s.backend().matches("[ac]"));

                assertThat(run.waitFor(SECONDS + 30, TimeUnit.SECONDS)).isTrue();
                String out = Files.readString(log);
                assertThat(run.exitValue()).as(out).isZero();
                assertThat(out).doesNotContain("FATAL").contains("transactions:");
                assertThat(count(out, "ignored errors")).as(out).isZero();
                assertThat(count(out, "reconnects")).as(out).isZero();
                assertThat(count(out, "transactions")).as(out).isGreaterThan(THREADS * 10L);
                // The moved sessions' old connections were closed; b holds no session's any more.
                assertThat(sluice.backends()).filteredOn(b -> b.state().name().equals("b")).singleElement()
                        .satisfies(b -> assertThat(b.openConnections()).isZero());
            } finally {
                run.destroyForcibly();
                sluice.undrain("b");
                Files.deleteIfExists(log);
            }
        }
    }

    /** A count of sysbench's summary, such as {@code ignored errors:  0  (0.00 per sec.)}. */
    private static long count(String out, String what) {
        Matcher m = Pattern.compile("\\n\\s*" + Pattern.quote(what) + ":\\s+(\\d+)").matcher(out);
        assertThat(m.find()).as("%s in %s", what, out).isTrue();
        return Long.parseLong(m.group(1));
    }

    private static long moves(Sluice sluice) {
        ClientCounts counts = sluice.metricSources().clients();
        return counts.moves(counts.moveReasons().indexOf("drain"));
    }
}
