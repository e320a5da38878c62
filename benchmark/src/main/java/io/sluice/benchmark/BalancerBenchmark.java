package io.sluice.benchmark;

import io.sluice.balancer.Backend;
import io.sluice.balancer.BackendGroup;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of choosing a backend for a new session: one {@link BackendGroup#pick()} and the matching
 * {@link BackendGroup#sessionEnded(Backend)}, at 3 and 64 backends, for each policy. One backend in eight is down and
 * one drained, so the policies also pay for skipping them. Two threads pick at once, as two event loops would.
 * Compare with a network round trip (tens of microseconds on a LAN).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms256m", "-Xmx256m"})
@Threads(2)
public class BalancerBenchmark {

    @Param({"3", "64"})
    public int backends;

    @Param({"LEAST_CONNECTIONS", "ROUND_ROBIN", "WEIGHTED_ROUND_ROBIN", "POWER_OF_TWO_CHOICES", "FIRST_AVAILABLE"})
    public Policy policy;

    private BackendGroup group;

    @Setup(Level.Trial)
    public void setUp() {
        group = new BackendGroup(policy, HealthCheckConfig.defaults());
        for (int i = 0; i < backends; i++) {
            group.add("ds_" + i, "10.0.0." + i + ":3306", 1 + i % 3, true);
        }
        if (backends >= 8) {
            for (int i = 0; i < backends; i += 8) {
                group.reportConnectFailure("ds_" + i, "benchmark: down");
                group.drain("ds_" + (i + 1));
            }
        }
        // Some open sessions, so least-loaded comparisons are not all ties.
        for (int i = 0; i < backends * 10; i++) {
            group.pick();
        }
    }

    @Benchmark
    public Backend pickAndEnd() {
        Backend chosen = group.pick();
        group.sessionEnded(chosen);
        return chosen;
    }
}
