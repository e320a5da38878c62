package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.SessionSnapshot;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.Policy;
import io.sluice.config.PoolingConfig;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A rolling restart of all three MariaDB servers under load, in both pooling modes (issue #31): each server in turn
 * is drained, left by its sessions, stopped, started again and undrained, while client sessions run short
 * transactions and check their own session state. No client sees an error, and every session ends on a running
 * server with its state. In session pooling a session moves at its first idle moment between transactions, with
 * its state read from its server (decision 104).
 */
@Tag("server")
class RollingRestartTest {
    private static final int SESSIONS = 12;
    private static BackendCluster cluster;

    @BeforeAll
    static void startServers() {
        cluster = BackendCluster.shared();
        for (String name : BackendCluster.NAMES) {
            cluster.server(name).execute("CREATE DATABASE IF NOT EXISTS move_test",
                    "CREATE TABLE IF NOT EXISTS move_test.ledger (session INT, n INT, PRIMARY KEY (session, n))",
                    "DELETE FROM move_test.ledger");
        }
    }

    @AfterEach
    void emptyLedgers() {
        for (String name : BackendCluster.NAMES) {
            cluster.server(name).execute("DELETE FROM move_test.ledger"); // the next run's rows start at 0 again
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void restartingEveryServerInTurnUnderLoadGivesNoClientAnError(boolean transactionPooling) throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.LEAST_CONNECTIONS, BackendCluster.FAST_CHECKS, name -> 1,
                transactionPooling ? PoolingConfig.transaction() : PoolingConfig.defaults())) {
            AtomicBoolean stop = new AtomicBoolean();
            AtomicLong transactions = new AtomicLong();
            ConcurrentLinkedQueue<String> errors = new ConcurrentLinkedQueue<>();
            List<Thread> clients = new ArrayList<>();
            for (int i = 0; i < SESSIONS; i++) {
                int id = i;
                Thread client = new Thread(() -> runClient(sluice, id, stop, transactions, errors), "client-" + i);
                client.start();
                clients.add(client);
            }
            awaitTransactions(transactions, 200);
            for (String name : BackendCluster.NAMES) {
                assertThat(sluice.drain(name)).isTrue();
                awaitNoSessionOn(sluice, name);
                cluster.server(name).stop();
                BackendCluster.awaitStatus(sluice, name, BackendStatus.DOWN, 10);
                long before = transactions.get();
                awaitTransactions(transactions, before + 100); // the others carry the load meanwhile
                cluster.server(name).startAgain();
                assertThat(sluice.undrain(name)).isTrue();
                BackendCluster.awaitStatus(sluice, name, BackendStatus.UP, 15);
                awaitSessionsOn(sluice, name, SESSIONS / 3);
            }
            awaitTransactions(transactions, transactions.get() + 100);
            stop.set(true);
            for (Thread client : clients) {
                client.join(10_000);
            }
            assertThat(errors).isEmpty();
            // Every client closed its connection: Sluice sees each close shortly after.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (!sluice.sessions().isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertThat(sluice.sessions()).isEmpty();
        }
    }

    /**
     * One client session: its own sql_mode and user variable, then short transactions, each checking that state on
     * whatever server it runs.
     */
    private static void runClient(Sluice sluice, int id, AtomicBoolean stop, AtomicLong transactions,
            ConcurrentLinkedQueue<String> errors) {
        try (Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(),
                "move_test", ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
             Statement s = c.createStatement()) {
            s.execute("SET SESSION sql_mode = 'ANSI_QUOTES', @me = " + id);
            for (int n = 0; !stop.get(); n++) {
                c.setAutoCommit(false);
                s.executeUpdate("INSERT INTO ledger VALUES (" + id + ", " + n + ")");
                try (ResultSet rs = s.executeQuery("SELECT @@SESSION.sql_mode, @me, COUNT(*) FROM ledger"
                        + " WHERE session = " + id + " AND n = " + n)) {
                    rs.next();
                    if (!rs.getString(1).equals("ANSI_QUOTES") || rs.getInt(2) != id || rs.getInt(3) != 1) {
                        errors.add("client " + id + ": state " + rs.getString(1) + ", @me " + rs.getString(2)
                                + ", row " + rs.getInt(3));
                    }
                }
                c.commit();
                c.setAutoCommit(true);
                transactions.incrementAndGet();
                Thread.sleep(2);
            }
        } catch (SQLException | RuntimeException e) {
            errors.add("client " + id + ": " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void awaitTransactions(AtomicLong transactions, long wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (transactions.get() < wanted) {
            assertThat(System.nanoTime()).as("transactions stalled at " + transactions.get()).isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    private static void awaitNoSessionOn(Sluice sluice, String name) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (sluice.sessions().stream().map(SessionSnapshot::backend).anyMatch(name::equals)) {
            assertThat(System.nanoTime()).as("sessions still on " + name + ": " + sluice.sessions())
                    .isLessThan(deadline);
            Thread.sleep(10);
        }
    }

    private static void awaitSessionsOn(Sluice sluice, String name, int wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (sluice.sessions().stream().map(SessionSnapshot::backend).filter(name::equals).count() < wanted) {
            assertThat(System.nanoTime()).as("sessions did not come back to " + name + ": " + sluice.sessions())
                    .isLessThan(deadline);
            Thread.sleep(10);
        }
    }
}
