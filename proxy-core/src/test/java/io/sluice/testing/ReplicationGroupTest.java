package io.sluice.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** The fixture of read/write splitting tests: a primary and two GTID replicas that replicate, lag and stop. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("server")
class ReplicationGroupTest {

    private static ReplicationGroup group;
    private static long startMillis;

    @BeforeAll
    static void start() {
        long begin = System.nanoTime();
        group = ReplicationGroup.start("rg");
        startMillis = (System.nanoTime() - begin) / 1_000_000;
        group.primary().execute("CREATE DATABASE fixture", "CREATE TABLE fixture.t (id INT PRIMARY KEY, v INT)");
    }

    @AfterAll
    static void stop() {
        if (group != null) {
            group.close();
            assertThat(group.primary().isListening()).isFalse();
            group.replicas().forEach(replica -> assertThat(replica.isListening()).isFalse());
        }
    }

    @Test
    @Order(1)
    void aWriteOnThePrimaryIsSeenOnBothReplicas() {
        System.out.println("ReplicationGroup started in " + startMillis + " ms");
        group.primary().execute("INSERT INTO fixture.t VALUES (1, 10)");
        group.awaitCaughtUp();
        for (int i = 0; i < 2; i++) {
            assertThat(count(group.replica(i), "SELECT v FROM fixture.t WHERE id = 1")).isEqualTo(10);
            assertThat(group.replicaPosition(i)).isEqualTo(group.primaryPosition());
            assertThat(group.replicaStatus(i)).containsEntry("Slave_IO_Running", "Yes")
                    .containsEntry("Slave_SQL_Running", "Yes").containsEntry("Using_Gtid", "Slave_Pos");
        }
        assertThat(count(group.replica(0), "SELECT @@read_only")).isEqualTo(1);
        assertThat(count(group.primary(), "SELECT @@read_only")).isEqualTo(0);
    }

    @Test
    @Order(2)
    void aStoppedSqlThreadLeavesTheReplicaBehindUntilItRestarts() {
        group.stopApplying(1);
        group.primary().execute("UPDATE fixture.t SET v = 20 WHERE id = 1");
        String position = group.primaryPosition();
        group.awaitApplied(0, position);
        assertThat(count(group.replica(0), "SELECT v FROM fixture.t WHERE id = 1")).isEqualTo(20);

        awaitReceived(1, position); // the IO thread still runs: the event arrives, unapplied
        assertThat(group.replicaStatus(1)).containsEntry("Slave_IO_Running", "Yes")
                .containsEntry("Slave_SQL_Running", "No");
        assertThat(count(group.replica(1), "SELECT v FROM fixture.t WHERE id = 1")).isEqualTo(10);
        assertThat(group.replicaPosition(1)).isNotEqualTo(position);

        group.startApplying(1);
        group.awaitApplied(1, position);
        assertThat(count(group.replica(1), "SELECT v FROM fixture.t WHERE id = 1")).isEqualTo(20);
    }

    @Test
    @Order(3)
    void aStoppedReplicaCatchesUpWhenStarted() {
        group.stopReplication(0);
        group.primary().execute("UPDATE fixture.t SET v = 30 WHERE id = 1");
        assertThat(group.replicaStatus(0)).containsEntry("Slave_IO_Running", "No")
                .containsEntry("Slave_SQL_Running", "No");
        group.startReplication(0);
        group.awaitCaughtUp();
        assertThat(count(group.replica(0), "SELECT v FROM fixture.t WHERE id = 1")).isEqualTo(30);
    }

    @Test
    @Order(4)
    void replicasReconnectToAKilledPrimaryOnceItIsBack() {
        group.killPrimary();
        assertThat(group.primary().isListening()).isFalse();
        group.startPrimary();
        group.primary().execute("UPDATE fixture.t SET v = 40 WHERE id = 1");
        group.awaitCaughtUp();
        assertThat(count(group.replica(1), "SELECT v FROM fixture.t WHERE id = 1")).isEqualTo(40);
    }

    private static void awaitReceived(int replica, String position) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!position.equals(group.replicaStatus(replica).get("Gtid_IO_Pos"))) {
            assertThat(System.nanoTime()).as("Gtid_IO_Pos reaches " + position).isLessThan(deadline);
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
    }

    private static long count(ExtraMariaDb server, String sql) {
        try (Connection c = server.rootConnection(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }
}
