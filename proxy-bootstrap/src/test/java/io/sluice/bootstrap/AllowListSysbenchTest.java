package io.sluice.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.capture.CaptureOptions;
import io.sluice.config.AllowListConfig;
import io.sluice.config.QueryRulesFile;
import io.sluice.replay.RuleCheck;
import io.sluice.rules.QueryRules;
import io.sluice.sql.SqlDigest;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.SluiceExtension;
import io.sluice.testing.TestMariaDb;
import io.sluice.testing.Tool;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue #41's done-when for the allow-list, with sysbench itself: learn from a capture of {@code oltp_read_write}
 * (server-side prepared statements) taken through Sluice; {@code rules check} of that capture finds 0 would-be
 * refusals; of a capture that adds {@code select_random_points}, exactly that shape; then the list in the proxy: in
 * {@code DRY_RUN} a new {@code oltp_read_write} run is outside it in nothing, in {@code ENFORCE} it runs without an
 * error while {@code select_random_points} is refused with ERR 1148 and is the one shape counted outside.
 */
@Tag("server")
@Tag("tools")
class AllowListSysbenchTest {
    private static final String RANDOM_POINTS = "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?, ?, ?, ?, ?, ?,"
            + " ?, ?)";

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults().requires(Tool.SYSBENCH)
            .sluiceOnly("Sluice's own allow-list").database("allow_sb_");

    @TempDir
    Path tmp;

    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private final ByteArrayOutputStream err = new ByteArrayOutputStream();

    private int ctl(String... args) {
        out.reset();
        err.reset();
        return SluiceCtl.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());
    }

    private static List<String> command(String test, int port, String user, String password, String... last) {
        List<String> command = new ArrayList<>(List.of(Tool.SYSBENCH.path().toString(), test,
                "--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=" + port, "--mysql-user=" + user,
                "--mysql-password=" + password, "--mysql-db=" + proxy.db(), "--tables=1", "--table-size=1000",
                "--rand-type=uniform", "--db-ps-mode=auto"));
        command.addAll(List.of(last));
        return command;
    }

    private Process sysbench(String test, int threads, int seconds, Path log) throws Exception {
        return new ProcessBuilder(command(test, proxy.port(), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD,
                "--threads=" + threads, "--time=" + seconds, "run")).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
    }

    private static int finish(Process process, Path log) throws Exception {
        assertThat(process.waitFor(60, TimeUnit.SECONDS)).as(Files.readString(log)).isTrue();
        return process.exitValue();
    }

    private void capture(Path dir, String... tests) throws Exception {
        proxy.sluice().startCapture(CaptureOptions.of(dir).withMinFreeSpace(0));
        List<Process> runs = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        for (String test : tests) {
            Path log = tmp.resolve(dir.getFileName() + "-" + test + ".log");
            logs.add(log);
            runs.add(sysbench(test, 2, 3, log));
        }
        for (int i = 0; i < runs.size(); i++) {
            assertThat(finish(runs.get(i), logs.get(i))).as(Files.readString(logs.get(i))).isZero();
        }
        Thread.sleep(200); // the session ends reach the proxy a moment after sysbench exits
        assertThat(proxy.sluice().stopCapture().dropped()).isZero();
    }

    @Test
    void learnedFromOltpReadWriteRefusesNothingOfItAndExactlyTheExtraShape() throws Exception {
        Process prepare = new ProcessBuilder(command("oltp_read_write", TestMariaDb.get().port(),
                TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD, "prepare")).redirectErrorStream(true).start();
        String prepared = new String(prepare.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(prepare.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(prepare.exitValue()).as(prepared).isZero();
        Path learnFrom = tmp.resolve("oltp");
        Path withExtra = tmp.resolve("oltp-and-points");
        capture(learnFrom, "oltp_read_write");
        capture(withExtra, "oltp_read_write", "select_random_points");

        Path list = tmp.resolve("allow.yaml");
        assertThat(ctl("rules", "learn", "--capture", learnFrom.toString(), "--output", list.toString()))
                .as(err.toString()).isZero();
        assertThat(Files.readString(list)).contains("select c from sbtest1 where id = ?", "mode: DRY_RUN");
        assertThat(ctl("rules", "check", "--capture", learnFrom.toString(), "--rules", list.toString()))
                .as(err.toString()).isZero();
        assertThat(out.toString()).contains("Would refuse 0 statement(s) of 0 shape(s)");
        String points = SqlDigest.of(RANDOM_POINTS).hash();
        QueryRulesFile rules = QueryRulesFile.load(list);
        RuleCheck check = RuleCheck.run(rules, withExtra, null);
        assertThat(check.refused()).singleElement().satisfies(entry -> {
            assertThat(entry.getKey().digest()).isEqualTo(points);
            assertThat(entry.getKey().user()).isEqualTo(ProxyUnderTest.USER);
            assertThat(entry.getValue()).isPositive();
        });

        AllowListConfig learned = rules.allowList();
        proxy.sluice().reload(proxy.sluice().config().withAllowList(learned));
        Path dryRunLog = tmp.resolve("dry-run.log");
        assertThat(finish(sysbench("oltp_read_write", 2, 2, dryRunLog), dryRunLog)).isZero();
        assertThat(proxy.sluice().queryRules().outsideAllowList()).as("a new run of the learned workload").isEmpty();

        proxy.sluice().reload(proxy.sluice().config().withAllowList(
                new AllowListConfig(AllowListConfig.Mode.ENFORCE, learned.users())));
        try {
            Path oltpLog = tmp.resolve("enforce-oltp.log");
            Path pointsLog = tmp.resolve("enforce-points.log");
            Process oltp = sysbench("oltp_read_write", 2, 2, oltpLog);
            Process refused = sysbench("select_random_points", 1, 2, pointsLog);
            assertThat(finish(oltp, oltpLog)).as(Files.readString(oltpLog)).isZero();
            assertThat(Files.readString(oltpLog)).containsPattern("ignored errors:\\s+0 ");
            assertThat(finish(refused, pointsLog)).isNotZero();
            assertThat(Files.readString(pointsLog)).contains("1148", "allow-list", points);
            List<QueryRules.OutsideShape> outside = proxy.sluice().queryRules().outsideAllowList();
            assertThat(outside).singleElement().satisfies(shape -> assertThat(shape.digest()).isEqualTo(points));
        } finally {
            proxy.sluice().reload(proxy.sluice().config().withAllowList(null));
        }
    }
}
