package io.sluice.faults;

import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A reconnecting load generator (sysbench 1.0.20 segfaults on a lost connection): worker threads, each with one
 * session through Sluice (MariaDB Connector/J), run small transactions that write two rows, one in
 * {@code ledger} and its twin in {@code mirror}. A worker that gets an error closes its session, notes the error and
 * the server its session was on, and connects again; a transaction whose COMMIT failed is in doubt and is never
 * retried (its number is not used again). What each worker saw acknowledged is kept, for {@link Ledger} to check
 * that no acknowledged transaction is lost and none is half-applied.
 */
final class LedgerLoad implements AutoCloseable {
    /**
     * An error a worker saw.
     *
     * @param port the server port of the session it came on, or -1 for a failed login
     */
    record Failure(long atNanos, int worker, int port, int code, String message) {
        boolean isLogin() {
            return port < 0;
        }
    }

    private final int sluicePort;
    private final String schema;
    private final List<Worker> workers = new ArrayList<>();
    private final List<Failure> failures = Collections.synchronizedList(new ArrayList<>());

    /** Starts {@code count} workers numbered from {@code firstId}, and waits until each has committed once. */
    LedgerLoad(int sluicePort, String schema, int firstId, int count) throws InterruptedException {
        this.sluicePort = sluicePort;
        this.schema = schema;
        add(firstId, count);
    }

    /** Starts {@code count} more workers and waits until each has committed once (or 10 s). */
    void add(int firstId, int count) throws InterruptedException {
        CountDownLatch started = new CountDownLatch(count);
        for (int i = 0; i < count; i++) {
            Worker worker = new Worker(firstId + i, started);
            workers.add(worker);
            Thread thread = new Thread(worker, "ledger-load-" + worker.id);
            thread.setDaemon(true);
            worker.thread = thread;
            thread.start();
        }
        if (!started.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("the load's workers did not all commit within 10 s: " + failures);
        }
    }

    List<Worker> workers() {
        return workers;
    }

    /** Every error the workers saw so far. */
    List<Failure> failures() {
        synchronized (failures) {
            return new ArrayList<>(failures);
        }
    }

    /** The workers whose session is on the server of {@code port} now. */
    List<Worker> on(int port) {
        return workers.stream().filter(w -> w.port == port).toList();
    }

    long commits() {
        return workers.stream().mapToLong(w -> w.acknowledged.size()).sum();
    }

    /** Stops every worker (each ends its transaction under way) and waits for them. */
    @Override
    public void close() throws InterruptedException {
        workers.forEach(w -> w.stop = true);
        for (Worker worker : workers) {
            worker.thread.join(30_000);
        }
    }

    /** One worker: one session at a time, transactions numbered from 0. */
    final class Worker implements Runnable {
        final int id;
        /** Transactions whose COMMIT returned OK. */
        final Set<Integer> acknowledged = ConcurrentHashMap.newKeySet();
        private final CountDownLatch started;
        private volatile boolean stop;
        /** The server port of the current session; -1 between sessions. */
        volatile int port = -1;
        /** The server port of each session, in order. */
        final List<Integer> sessions = Collections.synchronizedList(new ArrayList<>());
        private Thread thread;

        Worker(int id, CountDownLatch started) {
            this.id = id;
            this.started = started;
        }

        @Override
        public void run() {
            Connection session = null;
            int next = 0;
            while (!stop) {
                if (session == null) {
                    try {
                        session = connect();
                    } catch (SQLException e) {
                        failures.add(new Failure(System.nanoTime(), id, -1, e.getErrorCode(), e.getMessage()));
                        pause(20);
                        continue;
                    }
                }
                int number = next++;
                try {
                    transaction(session, number);
                    acknowledged.add(number);
                    started.countDown();
                } catch (SQLException e) {
                    failures.add(new Failure(System.nanoTime(), id, port, e.getErrorCode(), e.getMessage()));
                    closeQuietly(session);
                    session = null;
                    port = -1;
                }
                pause(5); // a steady load, not a CPU hog on a shared 2-vCPU machine
            }
            closeQuietly(session);
        }

        private Connection connect() throws SQLException {
            Connection session = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluicePort, schema,
                    "socketTimeout=20000&connectTimeout=20000"), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
            try (Statement s = session.createStatement(); ResultSet rs = s.executeQuery("SELECT @@port")) {
                rs.next();
                port = rs.getInt(1);
            } catch (SQLException e) {
                closeQuietly(session);
                throw e;
            }
            sessions.add(port);
            session.setAutoCommit(false);
            return session;
        }

        private void transaction(Connection session, int number) throws SQLException {
            try (PreparedStatement ledger = session.prepareStatement(
                    "INSERT INTO ledger (worker, seq, amount) VALUES (?, ?, ?)");
                 PreparedStatement mirror = session.prepareStatement(
                         "INSERT INTO mirror (worker, seq) VALUES (?, ?)")) {
                ledger.setInt(1, id);
                ledger.setInt(2, number);
                ledger.setInt(3, number % 100);
                ledger.executeUpdate();
                mirror.setInt(1, id);
                mirror.setInt(2, number);
                mirror.executeUpdate();
            }
            session.commit();
        }
    }

    private static void pause(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(Connection session) {
        if (session != null) {
            try {
                session.close();
            } catch (SQLException | RuntimeException e) {
                // the session is gone either way
            }
        }
    }
}
