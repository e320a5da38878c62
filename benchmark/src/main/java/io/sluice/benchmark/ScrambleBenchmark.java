package io.sluice.benchmark;

import io.sluice.protocol.Scramble;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The password scrambles computed at every login: as a client towards a backend ({@code nativePassword},
 * {@code cachingSha2Password}) and as a server checking one of Sluice's own users ({@code verify*}, which
 * recomputes the scramble and compares in constant time). Each costs three digests plus a MessageDigest lookup.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"-Xms256m", "-Xmx256m"})
public class ScrambleBenchmark {
    private static final String PASSWORD = "s3cret-Passw0rd!";

    private byte[] nonce;
    private byte[] nativeResponse;
    private byte[] sha2Response;

    @Setup
    public void setUp() {
        nonce = Scramble.nonce();
        nativeResponse = Scramble.nativePassword(PASSWORD, nonce);
        sha2Response = Scramble.cachingSha2Password(PASSWORD, nonce);
        if (!Scramble.verify(Scramble.MYSQL_NATIVE_PASSWORD, PASSWORD, nonce, nativeResponse)
                || !Scramble.verify(Scramble.CACHING_SHA2_PASSWORD, PASSWORD, nonce, sha2Response)) {
            throw new IllegalStateException("scrambles do not verify");
        }
    }

    @Benchmark
    public byte[] nativePassword() {
        return Scramble.nativePassword(PASSWORD, nonce);
    }

    @Benchmark
    public byte[] cachingSha2Password() {
        return Scramble.cachingSha2Password(PASSWORD, nonce);
    }

    @Benchmark
    public boolean verifyNativePassword() {
        return Scramble.verify(Scramble.MYSQL_NATIVE_PASSWORD, PASSWORD, nonce, nativeResponse);
    }

    @Benchmark
    public boolean verifyCachingSha2Password() {
        return Scramble.verify(Scramble.CACHING_SHA2_PASSWORD, PASSWORD, nonce, sha2Response);
    }

    /** The greeting's nonce: 20 draws from the shared SecureRandom. */
    @Benchmark
    public byte[] nonce() {
        return Scramble.nonce();
    }
}
