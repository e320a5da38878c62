package io.sluice.balancer;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The checker with a controllable clock and a probe whose outcomes the test completes by hand. The probe is a stand-in
 * for the network only; the integration tests in proxy-core check real MariaDB servers.
 */
class HealthCheckerTest {
    private final AtomicLong nanos = new AtomicLong();
    private final AtomicLong millis = new AtomicLong(1_700_000_000_000L);
    private final Map<String, List<CompletableFuture<Void>>> pending = new HashMap<>();
    private final List<Long> timeouts = new ArrayList<>();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

    private final HealthProbe probe = (backend, timeoutMillis) -> {
        CompletableFuture<Void> check = new CompletableFuture<>();
        synchronized (pending) {
            pending.computeIfAbsent(backend, k -> new ArrayList<>()).add(check);
            timeouts.add(timeoutMillis);
        }
        return check;
    };

    @AfterEach
    void stopScheduler() {
        scheduler.shutdownNow();
    }

    private BackendGroup group() {
        BackendGroup group = new BackendGroup(Policy.ROUND_ROBIN, new HealthCheckConfig(2000, 750, 2, 3));
        group.add("a", "10.0.0.1:3306", 1, true);
        group.add("b", "10.0.0.2:3306", 1, true);
        return group;
    }

    private void complete(String backend, long latencyMillis, boolean ok) {
        CompletableFuture<Void> check;
        synchronized (pending) {
            check = pending.get(backend).remove(0);
        }
        nanos.addAndGet(latencyMillis * 1_000_000);
        millis.addAndGet(latencyMillis);
        if (ok) {
            check.complete(null);
        } else {
            check.completeExceptionally(new IOException("Connection refused"));
        }
    }

    @Test
    void recordsLatencyTimeAndOutcomeOfEachCheck() {
        BackendGroup group = group();
        HealthChecker checker = new HealthChecker(group, probe, scheduler, nanos::get, millis::get);
        checker.checkAll();
        assertThat(timeouts).containsExactly(750L, 750L);
        complete("a", 3, true);
        CheckResult last = group.backend("a").state().lastCheck();
        assertThat(last.ok()).isTrue();
        assertThat(last.latencyNanos()).isEqualTo(3_000_000);
        assertThat(last.latencyMillis()).isEqualTo(3.0);
        assertThat(last.atEpochMillis()).isEqualTo(1_700_000_000_003L);
        complete("b", 1, false);
        CheckResult failed = group.backend("b").state().lastCheck();
        assertThat(failed.ok()).isFalse();
        assertThat(failed.detail()).isEqualTo("Connection refused");
        assertThat(group.backend("b").state().consecutiveFailures()).isEqualTo(1);
    }

    @Test
    void fallFailedChecksTakeABackendDownAndRiseBringItBack() {
        BackendGroup group = group();
        List<String> transitions = new ArrayList<>();
        group.addListener((now, before) -> transitions.add(now.name() + " " + before + "->" + now.status()));
        HealthChecker checker = new HealthChecker(group, probe, scheduler, nanos::get, millis::get);
        for (int i = 0; i < 3; i++) {
            checker.checkAll();
            complete("a", 1, true);
            complete("b", 1, false);
        }
        assertThat(group.backend("b").status()).isEqualTo(BackendStatus.DOWN);
        assertThat(group.backend("a").status()).isEqualTo(BackendStatus.UP);
        for (int i = 0; i < 2; i++) {
            checker.checkAll();
            complete("a", 1, true);
            complete("b", 1, true);
        }
        assertThat(group.backend("b").status()).isEqualTo(BackendStatus.UP);
        assertThat(transitions).containsExactly("b UP->DOWN", "b DOWN->UP");
    }

    @Test
    void neverRunsTwoChecksOfOneBackendAtOnce() {
        BackendGroup group = group();
        HealthChecker checker = new HealthChecker(group, probe, scheduler, nanos::get, millis::get);
        checker.checkAll();
        checker.checkAll(); // the first checks are still running: a slow server is not piled on
        assertThat(pending.get("a")).hasSize(1);
        complete("a", 1, true);
        checker.checkAll();
        assertThat(pending.get("a")).hasSize(1);
        assertThat(pending.get("b")).hasSize(1);
    }

    @Test
    void aLostConnectionAsksForACheckWhoseFailureTakesTheBackendDownAtOnce() throws Exception {
        BackendGroup group = group();
        try (HealthChecker checker = new HealthChecker(group, probe, scheduler, nanos::get, millis::get)) {
            checker.start();
            group.reportConnectionLost("a");
            CompletableFuture<Void> check = awaitPending("a");
            check.completeExceptionally(new IOException("Connection refused"));
            assertThat(group.backend("a").status()).isEqualTo(BackendStatus.DOWN);

            group.reportConnectionLost("b"); // a killed connection on a healthy server: the check passes
            awaitPending("b").complete(null);
            assertThat(group.backend("b").status()).isEqualTo(BackendStatus.UP);
        }
    }

    private CompletableFuture<Void> awaitPending(String backend) throws InterruptedException {
        for (int i = 0; i < 500; i++) {
            synchronized (pending) {
                List<CompletableFuture<Void>> checks = pending.get(backend);
                if (checks != null && !checks.isEmpty()) {
                    return checks.remove(0);
                }
            }
            Thread.sleep(10);
        }
        throw new AssertionError("no check of " + backend + " started");
    }

    @Test
    void aProbeThatThrowsCountsAsAFailedCheck() {
        BackendGroup group = group();
        HealthProbe throwing = (backend, timeout) -> {
            throw new IllegalStateException("event loop shut down");
        };
        new HealthChecker(group, throwing, scheduler, nanos::get, millis::get).checkAll();
        assertThat(group.backend("a").state().lastCheck().detail()).isEqualTo("event loop shut down");
        assertThat(group.backend("a").state().consecutiveFailures()).isEqualTo(1);
    }

    @Test
    void disabledChecksNeverStartAndPassiveFailuresChangeNothing() {
        BackendGroup group = new BackendGroup(Policy.ROUND_ROBIN, HealthCheckConfig.disabled());
        group.add("a", "10.0.0.1:3306", 1, false); // with no checks a backend is always up
        HealthChecker checker = new HealthChecker(group, probe, scheduler, nanos::get, millis::get);
        checker.start();
        group.reportConnectFailure("a", "refused");
        assertThat(group.backend("a").status()).isEqualTo(BackendStatus.UP);
        checker.close();
    }
}
