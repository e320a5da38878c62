package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.sluice.Sluice;
import io.sluice.api.ClientCounts;
import io.sluice.balancer.BackendStatus;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PoolingConfig;
import io.sluice.config.PoolingMode;
import io.sluice.config.ProxyConfig;
import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.JdbcDriver;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.ReplicationGroup;
import io.sluice.testing.TestMariaDb;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * With {@code pooling.moveGtidWaitMilliseconds} set, a session that moves to another server waits there for its last
 * write first (issue #31 with read/write splitting's causal wait): a primary and a GTID replica of it are two backends of one group in transaction
 * pooling; the replica's SQL thread is stopped, so it lacks the session's write. Without the wait, the session's
 * next read on the replica would miss its own row. Both pooling modes.
 */
@Tag("server")
class MoveGtidWaitTest {

    @Test
    void aMoveToAServerThatLacksTheSessionsLastWriteIsUndoneOrClosesTheSession() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("movegtid", 1)) {
            servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)");
            servers.awaitCaughtUp();
            // no rebalancing: moves by drain only; moves wait up to 1 s for the session's last write (a replica group)
            PoolingConfig pooling = new PoolingConfig(PoolingMode.TRANSACTION,
                    PoolingConfig.DEFAULT_PREPARED_STATEMENT_CACHE_SIZE, 0, 1000);
            ProxyConfig config = ProxyConfig.builder()
                    .port(0)
                    .pooling(pooling)
                    .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                    .loadBalancer(Policy.ROUND_ROBIN)
                    .healthCheck(new HealthCheckConfig(200, 1000, 1, 2))
                    .dataSource(dataSource("primary", servers.primary()))
                    .dataSource(dataSource("replica", servers.replica(0)))
                    .build();
            try (Sluice sluice = Sluice.start(config)) {
                assertThat(sluice.drain("replica")).isTrue();
                Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(),
                        "app", ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
                Statement s = c.createStatement();
                assertThat(port(s)).isEqualTo(servers.primary().port());
                assertThat(sluice.undrain("replica")).isTrue();

                // The replica stops applying; the session writes on the primary and is asked to leave it.
                servers.stopApplying(0);
                s.executeUpdate("INSERT INTO t VALUES (1)");
                assertThat(sluice.drain("primary")).isTrue();
                Thread.sleep(200);

                // Its next statement would run on the replica, which lacks the row: the wait times out and the
                // session stays on the primary, its row there.
                assertThat(count(s)).isEqualTo(1);
                assertThat(port(s)).isEqualTo(servers.primary().port());
                assertThat(refused(sluice, "gtid_wait_timeout")).isGreaterThanOrEqualTo(1);
                assertThat(moves(sluice, "drain")).isZero();

                // Once the replica has applied the write, the session moves there at its next transaction.
                servers.startApplying(0);
                servers.awaitCaughtUp();
                long refusedBefore = refused(sluice, "gtid_wait_timeout");
                assertThat(port(s)).isEqualTo(servers.replica(0).port());
                assertThat(count(s)).isEqualTo(1);
                assertThat(refused(sluice, "gtid_wait_timeout")).isEqualTo(refusedBefore);
                s.close();
                c.close();

                // A session whose server goes down, with no server that has its last write: an error, then closed.
                assertThat(sluice.undrain("primary")).isTrue();
                assertThat(sluice.drain("replica")).isTrue();
                Connection d = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(),
                        "app", ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
                Statement ds = d.createStatement();
                assertThat(port(ds)).isEqualTo(servers.primary().port());
                assertThat(sluice.undrain("replica")).isTrue();
                servers.stopApplying(0);
                ds.executeUpdate("INSERT INTO t VALUES (2)");
                servers.killPrimary();
                awaitStatus(sluice, "primary", BackendStatus.DOWN);
                assertThatThrownBy(() -> count(ds)).isInstanceOf(SQLException.class)
                        .hasMessageContaining("had not applied the session's last write")
                        .hasMessageContaining("closing the session");
                assertThat(d.isValid(2)).isFalse();
                d.close();
            }
        }
    }

    /**
     * By default a move does not wait: Sluice cannot know that a plain group's servers replicate from one another, and
     * on independent servers or Galera the wait could never succeed, so a session that wrote would never leave a
     * drained backend (and pay the timeout at every transaction trying).
     */
    @Test
    void byDefaultASessionThatWroteMovesAtOnceWithoutWaiting() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("movenowait", 1)) {
            servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)");
            servers.awaitCaughtUp();
            ProxyConfig config = ProxyConfig.builder()
                    .port(0)
                    .pooling(new PoolingConfig(PoolingMode.TRANSACTION,
                            PoolingConfig.DEFAULT_PREPARED_STATEMENT_CACHE_SIZE, 0))
                    .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                    .loadBalancer(Policy.ROUND_ROBIN)
                    .healthCheck(new HealthCheckConfig(200, 1000, 1, 2))
                    .dataSource(dataSource("primary", servers.primary()))
                    .dataSource(dataSource("replica", servers.replica(0)))
                    .build();
            try (Sluice sluice = Sluice.start(config)) {
                assertThat(config.pooling().moveGtidWait()).isZero();
                assertThat(sluice.drain("replica")).isTrue();
                try (Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(),
                        "app", ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
                        Statement s = c.createStatement()) {
                    assertThat(port(s)).isEqualTo(servers.primary().port());
                    assertThat(sluice.undrain("replica")).isTrue();
                    servers.stopApplying(0);
                    s.executeUpdate("INSERT INTO t VALUES (1)");
                    assertThat(sluice.drain("primary")).isTrue();
                    Thread.sleep(200);

                    long started = System.nanoTime();
                    assertThat(port(s)).isEqualTo(servers.replica(0).port());
                    // no MASTER_GTID_WAIT ran: nothing like the 1 s a wait would have taken to time out
                    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started)).isLessThan(900);
                    assertThat(moves(sluice, "drain")).isEqualTo(1);
                    assertThat(refused(sluice, "gtid_wait_timeout")).isZero();
                    servers.startApplying(0);
                }
            }
        }
    }

    @Test
    void inSessionPoolingTheHandoverWaitsForTheLastWriteToo() throws Exception {
        try (ReplicationGroup servers = ReplicationGroup.start("movegtidsp", 1)) {
            servers.primary().execute("CREATE DATABASE app", "CREATE TABLE app.t (id INT PRIMARY KEY)");
            servers.awaitCaughtUp();
            ProxyConfig config = ProxyConfig.builder()
                    .port(0)
                    .pooling(new PoolingConfig(PoolingMode.SESSION,
                            PoolingConfig.DEFAULT_PREPARED_STATEMENT_CACHE_SIZE, 0, 1000))
                    .user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                    .loadBalancer(Policy.ROUND_ROBIN)
                    .healthCheck(new HealthCheckConfig(200, 1000, 1, 2))
                    .dataSource(dataSource("primary", servers.primary()))
                    .dataSource(dataSource("replica", servers.replica(0)))
                    .build();
            try (Sluice sluice = Sluice.start(config)) {
                assertThat(sluice.drain("replica")).isTrue();
                Connection c = JdbcDriver.MARIADB.connect(JdbcDriver.MARIADB.url("127.0.0.1", sluice.port(),
                        "app", ""), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD);
                Statement s = c.createStatement();
                assertThat(port(s)).isEqualTo(servers.primary().port());
                assertThat(sluice.undrain("replica")).isTrue();
                servers.stopApplying(0);
                s.executeUpdate("INSERT INTO t VALUES (1)");
                assertThat(sluice.drain("primary")).isTrue();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (refused(sluice, "gtid_wait_timeout") == 0) {
                    assertThat(System.nanoTime()).as("no gtid wait timed out").isLessThan(deadline);
                    Thread.sleep(20);
                }
                // The session stayed on its connection to the primary, where its row is.
                assertThat(port(s)).isEqualTo(servers.primary().port());
                assertThat(count(s)).isEqualTo(1);
                assertThat(moves(sluice, "drain")).isZero();

                // The replica catches up: at an idle moment a second later the session moves there.
                servers.startApplying(0);
                servers.awaitCaughtUp();
                deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (port(s) != servers.replica(0).port()) {
                    assertThat(System.nanoTime()).as("the session never moved").isLessThan(deadline);
                    Thread.sleep(100);
                }
                assertThat(count(s)).isEqualTo(1);
                assertThat(moves(sluice, "drain")).isEqualTo(1);
                s.close();
                c.close();
            }
        }
    }

    private static DataSourceConfig dataSource(String name, ExtraMariaDb server) {
        return new DataSourceConfig(name, server.jdbcUrl("app"), TestMariaDb.ROOT_USER, TestMariaDb.ROOT_PASSWORD,
                2000, 60_000, 600_000, 8, 0, 1, false);
    }

    private static int count(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM t")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static int port(Statement s) throws SQLException {
        try (ResultSet rs = s.executeQuery("SELECT @@port")) {
            rs.next();
            return rs.getInt(1);
        }
    }

    private static long moves(Sluice sluice, String reason) {
        ClientCounts counts = sluice.metricSources().clients();
        return counts.moves(counts.moveReasons().indexOf(reason));
    }

    private static long refused(Sluice sluice, String reason) {
        ClientCounts counts = sluice.metricSources().clients();
        return counts.movesRefused(counts.moveRefusals().indexOf(reason));
    }

    private static void awaitStatus(Sluice sluice, String name, BackendStatus wanted) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (sluice.backends().stream().noneMatch(b -> b.state().name().equals(name)
                && b.state().status() == wanted)) {
            assertThat(System.nanoTime()).as(name + " never " + wanted + ": " + sluice.backends())
                    .isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
