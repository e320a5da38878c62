package io.sluice.benchmark;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Holds N idle MySQL Connector/J sessions open, each logged in with a default URL (so without CLIENT_SESSION_TRACK)
 * and having run one query, as an application's idle pool would: the side load of {@code run.sh --workloads c
 * --idle-client jdbc}. Prints the same lines as {@code idle_clients.py}:
 * {@code READY connected=X failed=Y open_s=T} once all are open, {@code DONE connected=X failed=Y dropped=Z} at the
 * end (SIGTERM or {@code --hold-seconds}), where dropped counts sessions that no longer answer a ping.
 *
 * <pre>java -cp benchmarks.jar io.sluice.benchmark.IdleJdbcClients --port 13308 --count 2000 --db sbtest
 *     --hold-seconds 600 [--user root] [--password ""] [--concurrency 50]</pre>
 */
public final class IdleJdbcClients {

    private IdleJdbcClients() {
    }

    public static void main(String[] args) throws Exception {
        String host = "127.0.0.1";
        String user = "root";
        String password = "";
        String db = "";
        int port = 0;
        int count = 0;
        int concurrency = 50;
        long holdSeconds = 600;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--host" -> host = args[i + 1];
                case "--port" -> port = Integer.parseInt(args[i + 1]);
                case "--user" -> user = args[i + 1];
                case "--password" -> password = args[i + 1];
                case "--db" -> db = args[i + 1];
                case "--count" -> count = Integer.parseInt(args[i + 1]);
                case "--concurrency" -> concurrency = Integer.parseInt(args[i + 1]);
                case "--hold-seconds" -> holdSeconds = Long.parseLong(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (port == 0 || count <= 0) {
            System.err.println("usage: IdleJdbcClients --port P --count N [--db DB] [--hold-seconds S]");
            System.exit(2);
        }
        String url = "jdbc:mysql://" + host + ":" + port + "/" + db + "?connectTimeout=30000&sslMode=DISABLED"
                + "&allowPublicKeyRetrieval=true";
        List<Connection> open = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Long> loginNanos = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicInteger failed = new AtomicInteger();
        long started = System.nanoTime();
        ExecutorService logins = Executors.newFixedThreadPool(concurrency);
        List<Future<?>> pending = new ArrayList<>();
        String u = user;
        String p = password;
        for (int i = 0; i < count; i++) {
            pending.add(logins.submit(() -> {
                long t0 = System.nanoTime();
                try {
                    Connection c = DriverManager.getConnection(url, u, p);
                    loginNanos.add(System.nanoTime() - t0);
                    try (Statement s = c.createStatement()) {
                        s.execute("SELECT 1");
                    }
                    open.add(c);
                } catch (SQLException e) {
                    if (failed.incrementAndGet() <= 3) {
                        System.err.println("login failed: " + e);
                    }
                }
            }));
        }
        for (Future<?> f : pending) {
            f.get();
        }
        logins.shutdown();
        double openSeconds = (System.nanoTime() - started) / 1e9;
        List<Long> sorted = new ArrayList<>(loginNanos);
        java.util.Collections.sort(sorted);
        double p50 = sorted.isEmpty() ? 0 : sorted.get(sorted.size() / 2) / 1e6;
        double p95 = sorted.isEmpty() ? 0 : sorted.get(Math.min(sorted.size() - 1, sorted.size() * 95 / 100)) / 1e6;
        System.out.printf("READY connected=%d failed=%d open_s=%.1f p50_ms=%.1f p95_ms=%.1f%n", open.size(),
                failed.get(), openSeconds, p50, p95);
        System.out.flush();
        long heldFrom = System.nanoTime();
        int requested = count;
        Object stop = new Object();
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            synchronized (stop) {
                stop.notifyAll();
            }
            finish(open, failed.get(), requested, openSeconds, (System.nanoTime() - heldFrom) / 1e9, p50, p95);
        }));
        synchronized (stop) {
            stop.wait(TimeUnit.SECONDS.toMillis(holdSeconds));
        }
        System.exit(0);
    }

    private static volatile boolean finished;

    private static synchronized void finish(List<Connection> open, int failed, int requested, double openSeconds,
            double heldSeconds, double p50, double p95) {
        if (finished) {
            return;
        }
        finished = true;
        int dropped = 0;
        for (Connection c : open) {
            try {
                if (!c.isValid(2)) {
                    dropped++;
                }
                c.close();
            } catch (SQLException e) {
                dropped++;
            }
        }
        System.out.printf("DONE connected=%d failed=%d dropped=%d held_s=%.1f%n", open.size(), failed, dropped,
                heldSeconds);
        System.out.printf(java.util.Locale.ROOT, "JSON {\"requested\": %d, \"connected\": %d, \"failed\": %d, "
                + "\"dropped\": %d, \"open_s\": %.3f, \"held_s\": %.3f, \"open_p50_ms\": %.3f, "
                + "\"open_p95_ms\": %.3f, \"errors\": {}, \"client\": \"mysql-connector-j\"}%n", requested,
                open.size(), failed, dropped, openSeconds, heldSeconds, p50, p95);
        System.out.flush();
    }
}
