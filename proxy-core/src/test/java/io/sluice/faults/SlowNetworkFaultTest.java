package io.sluice.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.Policy;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ServerConfig;
import io.sluice.config.Transport;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The slow fault-injection scenarios, run by {@code proxy-core/fault-slow-network.sh}, which puts a MariaDB in a
 * network namespace behind a veth pair shaped with tc and passes it here ({@code -Dsluice.faults.slowServer}). Behind
 * Sluice, round robin, beside a server of the test's own on the host: a reconnecting ledger load of
 * {@value FaultInjectionTest#WORKERS} sessions, (1) over the shaped link, where nothing may fail and the slow backend
 * must stay up, and (2) with the link turned into a blackhole (a {@code pfifo limit 0} qdisc both ways: every packet
 * dropped, as a cut cable or a partition), where only the sessions there may fail, once each, the backend must go
 * down within 4 s and up within 3 s once the link is back, and no acknowledged transaction may be lost or
 * half-applied. Figures are printed as "fault figures" lines.
 */
@ExtendWith(LeakDetection.class)
@EnabledIfSystemProperty(named = "sluice.faults.slowServer", matches = ".+",
        disabledReason = "needs the namespace and shaping of proxy-core/fault-slow-network.sh")
@Tag("server")
@Tag("tools")
class SlowNetworkFaultTest {
    private static final String SLOW = System.getProperty("sluice.faults.slowServer", "");
    private static final String NETNS = System.getProperty("sluice.faults.netns", "sluice-slow");
    private static final String HOST_DEVICE = System.getProperty("sluice.faults.hostDevice", "sl-host");
    private static final String NS_DEVICE = System.getProperty("sluice.faults.nsDevice", "sl-ns");
    private static final String SHAPING = System.getProperty("sluice.faults.shaping", "");
    private static final long BLACKHOLE_DETECTED_WITHIN_MILLIS = 4_000;
    private static final long RECOVERED_WITHIN_MILLIS = 3_000;

    private static ExtraMariaDb steady;
    private static String slowHost;
    private static int slowPort;

    @BeforeAll
    static void start() {
        slowHost = SLOW.substring(0, SLOW.lastIndexOf(':'));
        slowPort = Integer.parseInt(SLOW.substring(SLOW.lastIndexOf(':') + 1));
        steady = ExtraMariaDb.start("slow-steady");
    }

    @AfterAll
    static void stop() {
        if (steady != null) {
            steady.close();
        }
    }

    @BeforeEach
    void freshLedgers() throws Exception {
        Ledger.create(SlowNetworkFaultTest::slowRoot);
        Ledger.create(steady::rootConnection);
    }

    @Test
    void aSlowLinkServesEverySessionAndStaysUp() throws Exception {
        long ranNanos;
        int downSeen = 0;
        LedgerLoad load;
        try (Sluice sluice = Sluice.start(config())) {
            load = new LedgerLoad(sluice.port(), Ledger.SCHEMA, 0, FaultInjectionTest.WORKERS);
            try (load) {
                long started = System.nanoTime();
                while (System.nanoTime() - started < TimeUnit.SECONDS.toNanos(5)) {
                    downSeen += status(sluice) == BackendStatus.UP ? 0 : 1;
                    Thread.sleep(10);
                }
                ranNanos = System.nanoTime() - started;
            }
        }
        assertThat(load.failures()).as("errors over a slow link").isEmpty();
        assertThat(downSeen).as("polls that found the slow backend not up").isZero();
        int inDoubt = Ledger.check(load, servers());
        System.out.printf("fault figures: slow (%s): %d sessions; mean transaction %s on the slow server, %s on the"
                + " other; errors 0; backend down 0 times; commits %d; in doubt %d; lost 0; half-applied 0%n",
                SHAPING, load.workers().size(), meanTransaction(load, slowPort, ranNanos),
                meanTransaction(load, steady.port(), ranNanos), load.commits(), inDoubt);
    }

    @Test
    void aBlackholedLinkFailsOnlyItsSessionsAndComesBack() throws Exception {
        LedgerLoad load;
        Set<Integer> affected;
        long detectedMillis;
        long recoveredMillis;
        try (Sluice sluice = Sluice.start(config())) {
            load = new LedgerLoad(sluice.port(), Ledger.SCHEMA, 0, FaultInjectionTest.WORKERS);
            try (load) {
                Thread.sleep(300);
                affected = load.on(slowPort).stream().map(w -> w.id).collect(Collectors.toSet());
                assertThat(affected).isNotEmpty();
                long cutAt = System.nanoTime();
                shape("pfifo limit 0");
                try {
                    detectedMillis = millisUntil(sluice, BackendStatus.DOWN, cutAt);
                    assertThat(detectedMillis).as("the blackholed backend down (ms)")
                            .isLessThan(BLACKHOLE_DETECTED_WITHIN_MILLIS);
                    awaitBack(load, affected);
                } finally {
                    shape(SHAPING);
                }
                long restoredAt = System.nanoTime();
                recoveredMillis = millisUntil(sluice, BackendStatus.UP, restoredAt);
                assertThat(recoveredMillis).as("up again once the link is back (ms)")
                        .isLessThan(RECOVERED_WITHIN_MILLIS);
                Thread.sleep(300);
            }
        }
        List<LedgerLoad.Failure> failures = load.failures();
        assertThat(failures.stream().filter(LedgerLoad.Failure::isLogin)).as("failed logins").isEmpty();
        for (LedgerLoad.Worker worker : load.workers()) {
            long errors = failures.stream().filter(f -> f.worker() == worker.id).count();
            assertThat(errors).as("errors of worker %d: %s", worker.id, failures)
                    .isEqualTo(affected.contains(worker.id) ? 1 : 0);
        }
        int inDoubt = Ledger.check(load, servers());
        System.out.printf("fault figures: blackholed link (then %s): %d sessions, %d on it; detection %d ms;"
                + " recovery %d ms; errors %s; commits %d; in doubt %d; lost 0; half-applied 0%n", SHAPING,
                load.workers().size(), affected.size(), detectedMillis, recoveredMillis,
                failures.stream().map(f -> Integer.toString(f.code())).toList(), load.commits(), inDoubt);
    }

    /** The mean time of one transaction (pauses included) of the sessions on {@code port}. */
    private static String meanTransaction(LedgerLoad load, int port, long ranNanos) {
        List<LedgerLoad.Worker> on = load.on(port);
        long commits = on.stream().mapToLong(w -> w.acknowledged.size()).sum();
        assertThat(commits).as("commits on the server of port %d", port).isPositive();
        return String.format("%.1f ms", TimeUnit.NANOSECONDS.toMicros(ranNanos) * on.size() / 1000.0 / commits);
    }

    private static void awaitBack(LedgerLoad load, Set<Integer> affected) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (load.workers().stream().filter(w -> affected.contains(w.id))
                .anyMatch(w -> w.port != steady.port())) {
            assertThat(System.nanoTime()).as("affected sessions back within 20 s: %s", load.failures())
                    .isLessThan(deadline);
            Thread.sleep(5);
        }
    }

    /** Replaces the root qdisc of both ends of the veth pair. */
    private static void shape(String qdisc) {
        List<String> args = List.of(qdisc.split(" "));
        run(concat(List.of("tc", "qdisc", "replace", "dev", HOST_DEVICE, "root"), args));
        run(concat(List.of("ip", "netns", "exec", NETNS, "tc", "qdisc", "replace", "dev", NS_DEVICE, "root"), args));
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return all;
    }

    private static void run(List<String> command) {
        try {
            Process p = new ProcessBuilder(command).inheritIO().start();
            assertThat(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0).as("%s", command).isTrue();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static long millisUntil(Sluice sluice, BackendStatus wanted, long since) throws InterruptedException {
        long deadline = since + TimeUnit.SECONDS.toNanos(20);
        while (status(sluice) != wanted) {
            assertThat(System.nanoTime()).as("slow backend %s within 20 s", wanted).isLessThan(deadline);
            Thread.sleep(2);
        }
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - since);
    }

    private static BackendStatus status(Sluice sluice) {
        return sluice.backends().stream().filter(b -> b.state().name().equals("slow")).findFirst().orElseThrow()
                .state().status();
    }

    private static java.sql.Connection slowRoot() throws java.sql.SQLException {
        return JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url(slowHost, slowPort, null, ""), "root", "");
    }

    private static Map<String, Ledger.RootAccess> servers() {
        return Map.of("slow", SlowNetworkFaultTest::slowRoot, "steady", steady::rootConnection);
    }

    private static ProxyConfig config() {
        return ProxyConfig.builder()
                .server(new ServerConfig("127.0.0.1", 0, 2, ServerConfig.DEFAULT_CONN_BUFFER_SIZE, 0, null,
                        ServerConfig.DEFAULT_MAX_PACKET_SIZE, Transport.AUTO))
                .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .loadBalancer(Policy.ROUND_ROBIN)
                .healthCheck(FaultInjectionTest.CHECKS)
                .dataSource(new DataSourceConfig("slow", "jdbc:mysql://" + slowHost + ":" + slowPort + "/",
                        Ledger.USER, Ledger.PASSWORD, 5000, 60_000, 600_000, 20, 0))
                .dataSource(new DataSourceConfig("steady", steady.jdbcUrl(null), Ledger.USER, Ledger.PASSWORD, 5000,
                        60_000, 600_000, 20, 0))
                .build();
    }
}
