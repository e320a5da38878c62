package io.sluice.benchmark;

import io.netty.channel.Channel;
import io.netty.channel.ManualIoEventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.util.concurrent.Future;
import io.sluice.backend.BackendConnection;
import io.sluice.backend.BackendPool;
import io.sluice.backend.EventLoopPool;
import io.sluice.backend.SessionKey;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.Transport;
import io.sluice.protocol.Capabilities;
import io.sluice.transport.TransportKind;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
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
 * <p>The pool must be used on its event loop, so the loop is a Netty {@link ManualIoEventLoop} owned by the JMH
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
    private static final long WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    @Param("jdbc:mysql://127.0.0.1:3306/")
    public String url;

    @Param("root")
    public String user;

    @Param("")
    public String password;

    private ManualIoEventLoop loop;
    private BackendPool pool;
    private EventLoopPool local;
    private SessionKey key;
    private EmbeddedChannel client;
    private BackendConnection.Session session;
    private final List<BackendConnection> lent = new ArrayList<>(IDLE);

    @Setup(Level.Trial)
    public void setUp() {
        TransportKind transport = TransportKind.of(Transport.AUTO);
        loop = new ManualIoEventLoop(Thread.currentThread(), transport.ioHandlerFactory());
        key = new SessionKey(Capabilities.PROXY_SUPPORTED, Wire.UTF8MB4_GENERAL_CI);
        // no idle timeout or lifetime: housekeeping must not retire connections during a run
        DataSourceConfig dataSource = new DataSourceConfig("bench", url, user, password, 5_000, 0, 0, IDLE, 0);
        pool = new BackendPool(dataSource, loop, transport, 32 * 1024, key);
        local = pool.forLoop(loop);
        client = new EmbeddedChannel();
        session = new BackendConnection.Session() {
            @Override
            public Channel clientChannel() {
                return client;
            }

            @Override
            public void onLocalInfileRequest() {
            }

            @Override
            public void onBackendLost(BackendConnection backend, boolean responseStarted) {
            }
        };
        List<Future<BackendConnection>> opening = new ArrayList<>();
        for (int i = 0; i < IDLE; i++) {
            opening.add(local.acquire(key, null));
        }
        driveUntil(() -> opening.stream().allMatch(Future::isDone), "opening " + IDLE + " connections");
        for (Future<BackendConnection> f : opening) {
            if (!f.isSuccess()) {
                throw new IllegalStateException("cannot open a backend connection to " + url + " as " + user
                        + " (is the server up?)", f.cause());
            }
            lent.add(f.getNow());
        }
        giveBack();
    }

    /** Before each iteration (untimed): the connections {@code acquireIdle} took go back, through a reset. */
    @Setup(Level.Iteration)
    public void giveBack() {
        if (!loop.inEventLoop()) {
            throw new IllegalStateException("JMH moved the benchmark to another thread; the pool's loop is owned by "
                    + "the thread that ran the trial setup");
        }
        for (BackendConnection connection : lent) {
            connection.bind(session);
            local.release(connection);
        }
        lent.clear();
        driveUntil(() -> local.idleCount() == IDLE, "all " + IDLE + " connections idle again");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        lent.forEach(BackendConnection::close);
        lent.clear();
        pool.close(0); // queues the shutdown on the loop, which only this thread runs
        driveUntil(() -> pool.openConnections() == 0, "connections closed");
        loop.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
        driveUntil(loop::isTerminated, "loop terminated");
        client.finishAndReleaseAll();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    @Warmup(iterations = 3, time = 2)
    @Measurement(iterations = 5, time = 2)
    public BackendConnection acquireAndRelease() {
        BackendConnection connection = takeIdle();
        connection.bind(session);
        local.release(connection);
        driveUntil(() -> local.idleCount() == IDLE, "the released connection idle again");
        return connection;
    }

    @Benchmark
    @BenchmarkMode(Mode.SingleShotTime)
    @OutputTimeUnit(TimeUnit.NANOSECONDS)
    @Warmup(iterations = 200, batchSize = IDLE)
    @Measurement(iterations = 200, batchSize = IDLE)
    public BackendConnection acquireIdle() {
        BackendConnection connection = takeIdle();
        lent.add(connection);
        return connection;
    }

    private BackendConnection takeIdle() {
        Future<BackendConnection> f = local.acquire(key, null);
        BackendConnection connection = f.getNow();
        if (connection == null) {
            throw new IllegalStateException("acquire was not served from an idle connection (batch size above "
                    + IDLE + "?)");
        }
        return connection;
    }

    /** Runs the loop's I/O and tasks on this thread until {@code done}; a stuck server fails the run, not hangs it. */
    private void driveUntil(BooleanSupplier done, String what) {
        long deadline = System.nanoTime() + WAIT_NANOS;
        while (!done.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("timed out after 10 s waiting for " + what);
            }
            loop.run(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }
}
