package io.sluice;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.balancer.BackendGroup;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.Policy;
import io.sluice.balancer.replication.ReplicationReading;
import io.sluice.balancer.replication.Roles;
import io.sluice.balancer.replication.TopologyEvent;
import io.sluice.config.AutoFailover;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PrimaryDiscovery;
import io.sluice.config.ReadWriteSplittingConfig;
import io.sluice.config.ServerAccount;
import io.sluice.routing.ReadWriteGroup;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The replicas' agreement that the primary is gone (decision 175), with MariaDB's replica status columns
 * ({@code Master_Host}, {@code Master_Port}, {@code Slave_IO_Running}): only a replica of the lost primary, by its
 * source's host and port against the primary's data source URL, counts (decision 185). The MySQL side, with
 * {@code Source_Host} and {@code Source_Port}, runs end to end in
 * {@code MySqlPrimaryChangeTest.replicasOfAnotherSourceDoNotAgreeThatThePrimaryIsGone}; the whole failover on real
 * MariaDB servers in {@code AutoFailoverTest}.
 */
class FailoverAgreementTest {
    private static final String PRIMARY_URL = "jdbc:mysql://db-primary.example:3306/app";

    @Test
    void aReplicaOfAnotherSourceDoesNotCountAsAgreeing() {
        Watched watched = new Watched();
        // replica_0's IO thread cannot connect, but to another server: it says nothing of the primary.
        for (int round = 0; round < 4; round++) {
            watched.round(replica("replica_0", "db-elsewhere.example", 3306),
                    replica("replica_1", "db-primary.example", 3307));
        }
        assertThat(watched.events()).extracting(TopologyEvent::kind).doesNotContain("failover_begin");
        assertThat(watched.events()).filteredOn(e -> e.kind().equals("failover_held_back"))
                .singleElement().satisfies(e -> assertThat(e.detail()).isEqualTo("no replica of primary"
                        + " (db-primary.example:3306) answers: the primary's loss cannot be confirmed;"
                        + " replica_0 (from db-elsewhere.example:3306), replica_1 (from db-primary.example:3307)"
                        + " replicate(s) from elsewhere"));
    }

    @Test
    void aReplicaConnectedToAnotherAddressStillHoldsTheFailoverBack() {
        Watched watched = new Watched();
        // replica_1 may reach the primary under another name (its IP address, a relay): it is not proof of a loss.
        ReplicationReading connected = ReplicationReading.of("replica_1", true, "0-1-40", "0-1-40", Map.of(
                "Slave_IO_Running", "Yes", "Slave_SQL_Running", "Yes", "Gtid_IO_Pos", "0-1-40",
                "Master_Host", "10.0.0.5", "Master_Port", "3306"));
        for (int round = 0; round < 4; round++) {
            watched.round(replica("replica_0", "db-primary.example", 3306), connected);
        }
        assertThat(watched.events()).extracting(TopologyEvent::kind).doesNotContain("failover_begin");
        assertThat(watched.events()).filteredOn(e -> e.kind().equals("failover_held_back"))
                .singleElement().satisfies(e -> assertThat(e.detail()).isEqualTo("replica_1 (from 10.0.0.5:3306)"
                        + " still receive(s) from primary: it is alive and only Sluice cannot reach it"));
    }

    @Test
    void aReplicaOfTheLostPrimaryThatCannotConnectAgrees() {
        Watched watched = new Watched();
        for (int round = 0; round < 2; round++) {
            watched.round(replica("replica_0", "DB-PRIMARY.example", 3306),
                    replica("replica_1", "db-elsewhere.example", 3306));
        }
        assertThat(watched.events()).extracting(TopologyEvent::kind).contains("failover_begin");
    }

    @Test
    void theSourceIsReadFromMariaDbsAndMySqlsColumns() {
        ReplicationReading mariaDb = replica("r", "127.0.0.1", 3310);
        assertThat(mariaDb.sourceHost()).isEqualTo("127.0.0.1");
        assertThat(mariaDb.sourcePort()).isEqualTo(3310);
        assertThat(mariaDb.replicatesFrom("localhost", 3310)).isTrue(); // both name the loopback interface
        assertThat(mariaDb.replicatesFrom("127.0.0.1", 3311)).isFalse();
        assertThat(mariaDb.replicatesFrom("10.0.0.1", 3310)).isFalse();
        ReplicationReading mySql = ReplicationReading.ofMySql("r", true, "", Map.of("Replica_IO_Running", "Yes",
                "Replica_SQL_Running", "Yes", "Source_Host", "db1", "Source_Port", "3306"));
        assertThat(mySql.replicatesFrom("db1", 3306)).isTrue();
        assertThat(ReplicationReading.of("p", false, "0-1-5", "", Map.of()).replicatesFrom("db1", 3306))
                .as("no replica").isFalse();
    }

    /** MariaDB's replica status of a replica whose IO thread cannot connect to {@code host:port}. */
    private static ReplicationReading replica(String server, String host, int port) {
        return ReplicationReading.of(server, true, "0-1-40", "0-1-40", Map.of("Slave_IO_Running", "Connecting",
                "Slave_SQL_Running", "Yes", "Gtid_IO_Pos", "0-1-40", "Master_Host", host,
                "Master_Port", String.valueOf(port), "Last_IO_Error", "error connecting to master"));
    }

    /** A group with {@code autoFailover} after 2 checks whose primary, db-primary.example:3306, took writes. */
    private static final class Watched {
        private final ReadWriteGroup group;
        private final FailoverWatch watch;

        Watched() {
            ReadWriteSplittingConfig config = ReadWriteSplittingConfig.of("app_rw", "primary",
                    List.of("replica_0", "replica_1")).withTopology(PrimaryDiscovery.READ_ONLY, Duration.ofSeconds(1),
                    new ServerAccount("admin", "pw"), new ServerAccount("repl", "pw"))
                    .withAutoFailover(new AutoFailover(true, 2, Duration.ofSeconds(1), true));
            group = new ReadWriteGroup(config, new BackendGroup(Policy.LEAST_CONNECTIONS,
                    new HealthCheckConfig(100, 1000, 1, 2)));
            Map<String, DataSourceConfig> dataSources = new HashMap<>();
            dataSources.put("primary", dataSource("primary", PRIMARY_URL));
            dataSources.put("replica_0", dataSource("replica_0", "jdbc:mysql://db-r0.example:3306/app"));
            dataSources.put("replica_1", dataSource("replica_1", "jdbc:mysql://db-r1.example:3306/app"));
            // No pool: a dry run's failover reads nothing here (the servers are unreachable to it) and plans nothing.
            watch = new FailoverWatch(group, name -> null, dataSources, 1000);
            ReplicationReading primary = ReplicationReading.of("primary", false, "0-1-40", "", Map.of());
            round(primary, replica("replica_0", "db-primary.example", 3306),
                    replica("replica_1", "db-primary.example", 3306));
            assertThat(group.roles().takesWrites()).isTrue();
        }

        /** A round where the primary does not answer and the replicas read as given. */
        void round(ReplicationReading... replicas) {
            List<ReplicationReading> readings = new java.util.ArrayList<>();
            if (replicas[0].server().equals("primary")) {
                readings.addAll(List.of(replicas));
            } else {
                readings.add(ReplicationReading.unreachable("primary", "Connection refused"));
                readings.addAll(List.of(replicas));
            }
            Roles roles = group.topology().observe(readings);
            watch.afterRound(readings, roles);
        }

        List<TopologyEvent> events() {
            return group.topology().events();
        }

        private static DataSourceConfig dataSource(String name, String url) {
            return new DataSourceConfig(name, url, "app", "", 1000, 60_000, 600_000, 8, 0, 1, false);
        }
    }
}
