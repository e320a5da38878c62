package io.sluice.balancer;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Runs a group's active health checks: every {@code intervalMilliseconds} it starts one {@link HealthProbe} check per
 * backend (never two at once for one backend), times it, and feeds the result to the rise/fall state machine.
 *
 * <p>It runs on the scheduler it is given, never on a thread that relays client traffic. The probe's own I/O is
 * asynchronous; this class only starts checks and counts their outcomes.
 */
public final class HealthChecker implements AutoCloseable {
    private final BackendGroup group;
    private final HealthProbe probe;
    private final HealthCheckConfig config;
    private final ScheduledExecutorService scheduler;
    private final LongSupplier nanoTime;
    private final LongSupplier epochMillis;
    private ScheduledFuture<?> schedule;

    public HealthChecker(BackendGroup group, HealthProbe probe, ScheduledExecutorService scheduler) {
        this(group, probe, scheduler, System::nanoTime, System::currentTimeMillis);
    }

    /** For tests: a controllable clock for latencies ({@code nanoTime}) and timestamps ({@code epochMillis}). */
    HealthChecker(BackendGroup group, HealthProbe probe, ScheduledExecutorService scheduler, LongSupplier nanoTime,
            LongSupplier epochMillis) {
        this.group = group;
        this.probe = probe;
        this.config = group.healthCheck();
        this.scheduler = scheduler;
        this.nanoTime = nanoTime;
        this.epochMillis = epochMillis;
    }

    /** Starts the periodic checks, the first one interval from now. Does nothing when checks are off. */
    public synchronized void start() {
        if (!config.enabled() || schedule != null) {
            return;
        }
        group.onConfirmCheck(backend -> scheduler.execute(() -> check(backend, true)));
        long interval = config.intervalMilliseconds();
        schedule = scheduler.scheduleWithFixedDelay(this::checkAll, interval, interval, TimeUnit.MILLISECONDS);
    }

    /** Starts one check of every backend. */
    void checkAll() {
        for (Backend backend : group.backends()) {
            check(backend, false);
        }
    }

    /**
     * Starts a check of one backend unless one is already running.
     *
     * @param confirming a session reported trouble: a failure takes the backend down at once
     */
    void check(Backend backend, boolean confirming) {
        if (!backend.checkInFlight.compareAndSet(false, true)) {
            return;
        }
        long started = nanoTime.getAsLong();
        CompletionStage<?> outcome;
        try {
            outcome = probe.check(backend.name(), config.timeoutMilliseconds());
        } catch (RuntimeException e) {
            outcome = CompletableFuture.failedFuture(e);
        }
        outcome.whenComplete((ignored, failure) -> {
            long latency = nanoTime.getAsLong() - started;
            CheckResult result = failure == null
                    ? new CheckResult(true, latency, epochMillis.getAsLong(), "ok")
                    : new CheckResult(false, latency, epochMillis.getAsLong(), describe(failure));
            backend.checkInFlight.set(false);
            group.recordCheck(backend, result, confirming);
        });
    }

    private static String describe(Throwable failure) {
        Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                ? failure.getCause() : failure;
        return cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName();
    }

    /**
     * Stops scheduling checks and waits, up to the check timeout, for those already running to finish, so that the
     * proxy can then shut their thread down without cutting a check in the middle of its login.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (schedule != null) {
                schedule.cancel(false);
                schedule = null;
            }
            group.onConfirmCheck(null);
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(config.timeoutMilliseconds());
        while (group.backends().stream().anyMatch(b -> b.checkInFlight.get()) && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
