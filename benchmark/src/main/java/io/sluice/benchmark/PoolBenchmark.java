package io.sluice.benchmark;

import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BorrowingSession;
import io.sluice.backend.SessionKey;
import io.sluice.protocol.Capabilities;
import io.sluice.testing.MySqlWire;
import java.util.ArrayList;
import java.util.List;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Borrowing a pooled backend connection, against a real MySQL/MariaDB server (default 127.0.0.1:3306, root, empty
 * password; see the {@code url}, {@code user} and {@code password} params).
 *
 * <p>The pool must be used on its event loop, so the loop is a Netty {@code ManualIoEventLoop} (see {@link LoopPool}) owned by the JMH
 * thread: the benchmark calls {@code acquire} and {@code release} as a session on that loop would, with no handoff
 * between threads in the measurement, and drives the loop's I/O itself while it waits for the server.
 * <ul>
 *   <li>{@code acquireAndRelease}: borrow an idle connection, lend it to a session, give it back, and wait until it
 *       is idle again. Dominated by the reset round trip (COM_RESET_CONNECTION + the session check query).</li>
 *   <li>{@code acquireIdle}: only the in-memory part, taking an idle connection. Without a reset a connection
 *       cannot go back to the pool through the public API, so this is a single-shot batch: each iteration takes
 *       the {@value #IDLE} idle connections one by one (score = time for the batch, divide by {@value #IDLE}), and
 *       the untimed iteration setup gives them back.</li>
 * </ul>
 */
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = {"-Xms256m", "-Xmx256m"})
public class PoolBenchmark {
    /** Connections kept idle; also the single-shot batch size of {@code acquireIdle}. */
    static final int IDLE = 16;

    @Param("jdbc:mysql://127.0.0.1:3306/")
    public String url;

    @Param("root")
    public String user;

    @Param("")
    public String password;

    private LoopPool pool;
    private EmbeddedChannel client;
    private BorrowingSession session;
    private final List<BackendConnection> lent = new ArrayList<>(IDLE);

    @Setup(Level.Trial)
    public void setUp() {
        client = new EmbeddedChannel();
        session = LoopPool.session(client);
        pool = new LoopPool(url, user, password,
                new SessionKey(Capabilities.PROXY_SUPPORTED, MySqlWire.UTF8MB4_GENERAL_CI), IDLE, session);
    }

    /** Before each iteration (untimed): the connections {@code acquireIdle} took go back, through a reset. */
    @Setup(Level.Iteration)
    public void giveBack() {
        pool.giveBack(lent, session, IDLE);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        lent.forEach(BackendConnection::close);
        lent.clear();
        pool.close();
        client.finishAndReleaseAll();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @Warmup(iterations = 3, time = 2)
    @Measurement(iterations = 5, time = 2)
    public BackendConnection acquireAndRelease() {
        BackendConnection connection = pool.takeIdle();
        connection.bind(session, null, null, null);
        pool.local.resetAndReturn(connection);
        pool.driveUntil(() -> pool.local.idleCount() == IDLE, "the released connection idle again");
        return connection;
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    @Warmup(iterations = 200, batchSize = IDLE)
    @Measurement(iterations = 200, batchSize = IDLE)
    public BackendConnection acquireIdle() {
        BackendConnection connection = pool.takeIdle();
        lent.add(connection);
        return connection;
    }
}
