package io.sluice.rules;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.config.QueryRuleConfig;
import io.sluice.config.QueryRuleConfig.Action;
import io.sluice.config.QueryRuleConfig.Block;
import io.sluice.sql.SqlDigest;
import io.sluice.statistics.DigestSummary;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.SluiceExtension;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A rule that blocks one digest refuses exactly that shape and nothing else over a mixed sysbench run: an
 * {@code oltp_read_only} run and a {@code select_random_points} run at once, with server-side prepared statements,
 * the rule added by a reload while they run (so after sysbench prepared its statements). The random points' thread
 * gets the rule's error at its next execution and stops; the read-only run, every shape of it, ends without an
 * error; the blocked shape reaches the server no more.
 */
@Tag("server")
@Tag("tools")
class QueryRuleSysbenchTest {
    private static final int THREADS = 3;
    private static final int SECONDS = 6;
    private static final String RANDOM_POINTS = "SELECT id, k, c, pad FROM sbtest1 WHERE k IN (?, ?, ?, ?, ?, ?, ?, ?,"
            + " ?, ?)";

    @RegisterExtension
    static final SluiceExtension proxy = SluiceExtension.withDefaults().requires(Tool.SYSBENCH)
            .sluiceOnly("Sluice's own query rules").database("rules_sb_");

    private static List<String> command(String test, int port, String user, String password, String... last) {
        List<String> command = new ArrayList<>(List.of(Tool.SYSBENCH.path().toString(), test,
                "--db-driver=mysql", "--mysql-host=127.0.0.1", "--mysql-port=" + port, "--mysql-user=" + user,
                "--mysql-password=" + password, "--mysql-db=" + proxy.db(), "--tables=1", "--table-size=2000",
                "--rand-type=uniform", "--db-ps-mode=auto"));
        command.addAll(List.of(last));
        return command;
    }

    @Test
    void blockingOneDigestRefusesThatShapeAndNothingElse() throws Exception {
        Process prepare = new ProcessBuilder(command("oltp_read_only", TestMariaDb.get().port(),
                TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD, "prepare")).redirectErrorStream(true).start();
        String prepared = new String(prepare.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(prepare.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(prepare.exitValue()).as(prepared).isZero();

        String digest = SqlDigest.of(RANDOM_POINTS).hash();
        Path readOnlyLog = Files.createTempFile("rules-sysbench-ro", ".log");
        Path pointsLog = Files.createTempFile("rules-sysbench-points", ".log");
        Process readOnly = new ProcessBuilder(command("oltp_read_only", proxy.port(), ProxyUnderTest.USER,
                ProxyUnderTest.PASSWORD, "--threads=" + THREADS, "--time=" + SECONDS, "run"))
                .redirectErrorStream(true).redirectOutput(readOnlyLog.toFile()).start();
        Process points = new ProcessBuilder(command("select_random_points", proxy.port(), ProxyUnderTest.USER,
                ProxyUnderTest.PASSWORD, "--threads=1", "--time=" + SECONDS, "run"))
                .redirectErrorStream(true).redirectOutput(pointsLog.toFile()).start();
        try {
            Thread.sleep(2000); // under way: every thread has prepared its statements
            assertThat(row(digest).count()).as("the shape ran before the rule").isPositive();
            proxy.sluice().reload(proxy.sluice().config().withQueryRules(List.of(new QueryRuleConfig(
                    "no-random-points", digest, null, List.of(), List.of(), List.of(), List.of(), Action.BLOCK, null,
                    new Block(1148, "42000", "random points refused by rule no-random-points")))));
            long afterReload = row(digest).count();

            assertThat(points.waitFor(SECONDS + 20, TimeUnit.SECONDS)).as(Files.readString(pointsLog)).isTrue();
            assertThat(points.exitValue()).isNotZero();
            assertThat(Files.readString(pointsLog)).contains("1148", "random points refused by rule no-random-points");
            assertThat(readOnly.waitFor(SECONDS + 20, TimeUnit.SECONDS)).as(Files.readString(readOnlyLog)).isTrue();
            String out = Files.readString(readOnlyLog);
            assertThat(readOnly.exitValue()).as(out).isZero();
            assertThat(count(out, "ignored errors")).as(out).isZero();
            assertThat(count(out, "reconnects")).as(out).isZero();

            QueryRule.Counters rule = proxy.sluice().queryRules().rules().get(0).counters();
            assertThat(rule.matchedCount()).isEqualTo(1); // the one thread's next execution, then it stopped
            assertThat(rule.actedCount()).isEqualTo(1);
            // never again on the server: at most the one execution in flight at the reload ends after it
            assertThat(row(digest).count()).isBetween(afterReload, afterReload + 1);
            List<DigestSummary> others = proxy.sluice().statistics().summaries().stream()
                    .filter(r -> r.user().equals(ProxyUnderTest.USER) && proxy.db().equals(r.schema()))
                    .filter(r -> !r.digest().equals(digest)).toList();
            assertThat(others).extracting(DigestSummary::digestText).contains("select c from sbtest1 where id = ?");
            assertThat(others).allSatisfy(r -> assertThat(r.errors()).as(r.digestText()).isZero());
            assertThat(row(digest).errors()).isZero(); // no refusal came from the server
        } finally {
            readOnly.destroyForcibly();
            points.destroyForcibly();
            Files.deleteIfExists(readOnlyLog);
            Files.deleteIfExists(pointsLog);
        }
    }

    private static DigestSummary row(String digest) {
        return proxy.sluice().statistics().summaries().stream()
                .filter(r -> r.digest().equals(digest) && r.user().equals(ProxyUnderTest.USER)).findFirst()
                .orElseThrow();
    }

    /** A count of sysbench's summary, such as {@code ignored errors:  0  (0.00 per sec.)}. */
    private static long count(String out, String what) {
        Matcher m = Pattern.compile("\\n\\s*" + Pattern.quote(what) + ":\\s+(\\d+)").matcher(out);
        assertThat(m.find()).as("%s in %s", what, out).isTrue();
        return Long.parseLong(m.group(1));
    }
}
