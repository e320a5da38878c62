package io.sluice.scripted;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.Sluice;
import io.sluice.api.GroupTopology;
import io.sluice.api.RejoinReport;
import io.sluice.api.SwitchoverReport;
import io.sluice.balancer.HealthCheckConfig;
import io.sluice.balancer.replication.MySqlGtidSet;
import io.sluice.config.AutoFailover;
import io.sluice.config.DataSourceConfig;
import io.sluice.config.PrimaryDiscovery;
import io.sluice.config.ProxyConfig;
import io.sluice.config.ReadWriteSplittingConfig;
import io.sluice.config.ServerAccount;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.ScriptedBackend;
import io.sluice.testing.ScriptedMySqlServer;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Primary changes on MySQL 8.0 and 8.4 (issue #40 items 2 and 3, decisions 152 and 175-177), run end to end by
 * Sluice's real code ({@link Sluice#switchover}, the replica watch's automatic failover, {@link Sluice#rejoin})
 * against {@link ScriptedMySqlServer}s: a primary and two replicas on TCP that greet as MySQL 8.0.36 or 8.4.3 and
 * keep {@code read_only}/{@code super_read_only}, {@code gtid_executed}, the replica configuration and named locks as
 * MySQL does, refusing what MySQL refuses (a {@code RESET REPLICA ALL} with the threads running, a
 * {@code CHANGE REPLICATION SOURCE} with the IO thread running, and on 8.4 every statement 8.4 removed:
 * {@code SHOW SLAVE STATUS}, {@code CHANGE MASTER}, {@code START/STOP/RESET SLAVE}).
 *
 * <p>Each test asserts the exact statements each server received from the group's {@code administration} account,
 * in order (fence with {@code super_read_only}, read {@code gtid_executed}, {@code WAIT_FOR_EXECUTED_GTID_SET},
 * {@code GET_LOCK}, {@code STOP REPLICA}, {@code RESET REPLICA ALL}, writable, {@code CHANGE REPLICATION SOURCE TO
 * ... SOURCE_AUTO_POSITION = 1, GET_SOURCE_PUBLIC_KEY = 1}, {@code START REPLICA}; a dry run's plan lists the same
 * and sends nothing), that no server refused any, that the topology follows (the roles Sluice sees, where each server
 * replicates from) and that a client's write through Sluice lands on the new primary. No MySQL server is installable where this is built (mysqld there is MariaDB's, whose switchover and
 * failover run on real servers in {@code SwitchoverTest} and {@code AutoFailoverTest}): this is the proof that the
 * MySQL statements are the right ones in the right order against the state MySQL keeps, not a run on MySQL itself.
 * Not covered: the privileges each statement needs, replication's own behaviour beyond the model, timing. These runs
 * found two faults, fixed: a failed promotion fenced the candidate with {@code read_only} only, and repointed servers
 * could not log in to a new source with a {@code caching_sha2_password} account (decision 186).
 */
@ExtendWith(LeakDetection.class)
class MySqlPrimaryChangeTest {
    private static final String SOURCE = "3e11fa47-71ca-11e1-9e33-c80aa9429562";
    private static final String ADMIN = "mf_admin";
    private static final String REPL = "mf_repl";
    private static final String REPL_PASSWORD = "mf_repl_pw";
    private static final String GROUP = "app_rw";
    private static final String LOCK = "SELECT GET_LOCK('sluice_failover.app_rw', 0)";

    @ParameterizedTest
    @ValueSource(strings = {ScriptedMySqlServer.MYSQL_80, ScriptedMySqlServer.MYSQL_84})
    void aSwitchoverRunsMySqlsStatementsInOrderAndWritesFollow(String version) throws Exception {
        try (Servers servers = new Servers(version, 30);
             Sluice sluice = Sluice.start(config(servers, AutoFailover.OFF))) {
            awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("primary"));
            try (RawMySqlClient client = login(sluice)) {
                assertThat(client.query("INSERT INTO t VALUES (1)").end().isOk()).isTrue();
            }
            assertThat(servers.primary.gtidExecuted()).isEqualTo(MySqlGtidSet.parse(SOURCE + ":1-31"));

            String repoint = changeSource(servers.replica0.port());
            String masked = repoint.replace(REPL_PASSWORD, "***");
            SwitchoverReport plan = sluice.switchover(GROUP, "replica_0", true, false, 5_000);
            assertThat(plan.error()).as("%s", plan).isEmpty();
            assertThat(plan.plan()).containsExactly("primary: SET GLOBAL super_read_only = ON",
                    "primary: SELECT @@GLOBAL.gtid_executed",
                    "replica_0: SELECT WAIT_FOR_EXECUTED_GTID_SET('<position of primary>', 5)",
                    "replica_0: STOP REPLICA", "replica_0: RESET REPLICA ALL",
                    "replica_0: SET GLOBAL super_read_only = OFF", "replica_0: SET GLOBAL read_only = OFF",
                    "replica_1: STOP REPLICA", "replica_1: " + masked, "replica_1: START REPLICA",
                    "primary: STOP REPLICA", "primary: " + masked, "primary: START REPLICA");
            for (ScriptedMySqlServer server : servers.all()) {
                assertThat(administration(server)).as("a dry run sends %s nothing", server.name()).isEmpty();
            }

            SwitchoverReport report = sluice.switchover(GROUP, "replica_0", false, false, 5_000);

            assertThat(report.error()).as("%s", report).isEmpty();
            assertThat(report.switched()).isTrue();
            assertThat(administration(servers.primary)).as("the old primary").containsExactly(
                    "SET GLOBAL super_read_only = ON", "SELECT @@GLOBAL.gtid_executed",
                    "STOP REPLICA", repoint, "START REPLICA");
            assertThat(administration(servers.replica0)).as("the candidate").containsExactly(
                    "SELECT WAIT_FOR_EXECUTED_GTID_SET('" + SOURCE + ":1-31', 5)",
                    "STOP REPLICA", "RESET REPLICA ALL", "SET GLOBAL super_read_only = OFF",
                    "SET GLOBAL read_only = OFF");
            assertThat(administration(servers.replica1)).as("the other replica").containsExactly(
                    "STOP REPLICA", repoint, "START REPLICA");
            servers.assertNothingRefused();

            assertThat(servers.replica0.readOnly()).isFalse();
            assertThat(servers.replica0.source()).isEmpty();
            assertThat(servers.primary.superReadOnly()).isTrue();
            assertThat(servers.primary.source()).isEqualTo("127.0.0.1:" + servers.replica0.port());
            assertThat(servers.primary.replicating()).isTrue();
            assertThat(servers.replica1.source()).isEqualTo("127.0.0.1:" + servers.replica0.port());
            awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("replica_0"));

            try (RawMySqlClient client = login(sluice)) {
                assertThat(client.query("INSERT INTO t VALUES (2)").end().isOk()).isTrue();
            }
            assertThat(servers.replica0.receivedFrom(ScriptedBackend.USER)).contains("INSERT INTO t VALUES (2)");
            assertThat(servers.primary.receivedFrom(ScriptedBackend.USER)).doesNotContain("INSERT INTO t VALUES (2)");
            await(() -> servers.primary.gtidExecuted().isAtOrPast(servers.replica0.gtidExecuted()),
                    "the old primary replicates the new one's write");
        }
    }

    /**
     * A promotion that fails half way (the candidate's {@code super_read_only} off, its {@code read_only} refused)
     * rolls back: the old primary writable again, and the candidate fenced with {@code super_read_only}, since
     * {@code read_only} alone lets accounts with CONNECTION_ADMIN or SUPER write on MySQL.
     */
    @ParameterizedTest
    @ValueSource(strings = {ScriptedMySqlServer.MYSQL_80, ScriptedMySqlServer.MYSQL_84})
    void aPromotionThatFailsRollsBackWithSuperReadOnlyOnTheCandidate(String version) throws Exception {
        try (Servers servers = new Servers(version, 30);
             Sluice sluice = Sluice.start(config(servers, AutoFailover.OFF))) {
            awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("primary"));
            servers.replica0.refuseOnce("SET GLOBAL read_only = OFF", 1227, "Access denied; you need (at least one"
                    + " of) the SUPER or SYSTEM_VARIABLES_ADMIN privilege(s) for this operation");

            SwitchoverReport report = sluice.switchover(GROUP, "replica_0", false, false, 5_000);

            assertThat(report.switched()).isFalse();
            assertThat(report.error()).startsWith("rolled back: promoting replica_0 failed:"
                    + " SET GLOBAL read_only = OFF refused: 1227 (HY000): Access denied");
            assertThat(administration(servers.primary)).as("the old primary").containsExactly(
                    "SET GLOBAL super_read_only = ON", "SELECT @@GLOBAL.gtid_executed",
                    "SET GLOBAL super_read_only = OFF", "SET GLOBAL read_only = OFF");
            assertThat(administration(servers.replica0)).as("the candidate").containsExactly(
                    "SELECT WAIT_FOR_EXECUTED_GTID_SET('" + SOURCE + ":1-30', 5)",
                    "STOP REPLICA", "RESET REPLICA ALL", "SET GLOBAL super_read_only = OFF",
                    "SET GLOBAL read_only = OFF", "SET GLOBAL super_read_only = ON");
            assertThat(servers.replica0.superReadOnly()).isTrue();
            assertThat(servers.primary.readOnly()).isFalse();
            assertThat(administration(servers.replica1)).isEmpty();
            awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("primary"));
            try (RawMySqlClient client = login(sluice)) {
                assertThat(client.query("INSERT INTO t VALUES (1)").end().isOk()).isTrue();
            }
            assertThat(servers.primary.receivedFrom(ScriptedBackend.USER)).contains("INSERT INTO t VALUES (1)");
            servers.assertNothingRefused();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {ScriptedMySqlServer.MYSQL_80, ScriptedMySqlServer.MYSQL_84})
    void anAutomaticFailoverRunsMySqlsStatementsInOrderThenFencesAndRejoinsTheOldPrimary(String version)
            throws Exception {
        try (Servers servers = new Servers(version, 30);
             Sluice sluice = Sluice.start(config(servers, new AutoFailover(true, 2, Duration.ofSeconds(5), false)))) {
            awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("primary"));
            // replica_0 received all but its SQL thread has not applied the last two: the failover waits for them.
            servers.replica0.holdApplying(true);
            try (RawMySqlClient client = login(sluice)) {
                assertThat(client.query("INSERT INTO t VALUES (1)").end().isOk()).isTrue();
                assertThat(client.query("INSERT INTO t VALUES (2)").end().isOk()).isTrue();
            }
            await(() -> servers.replica0.received().stream().anyMatch(s -> s.sql().equals("SHOW REPLICA STATUS"))
                    && servers.replica0.retrievedGtids().isAtOrPast(servers.primary.gtidExecuted()),
                    "replica_0 received the writes");
            await(() -> servers.replica1.gtidExecuted().isAtOrPast(servers.primary.gtidExecuted()),
                    "replica_1 applied the writes");
            assertThat(servers.replica0.gtidExecuted()).isEqualTo(MySqlGtidSet.parse(SOURCE + ":1-30"));

            servers.primary.kill();
            awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("replica_0"));

            String repoint = changeSource(servers.replica0.port());
            await(() -> administration(servers.replica1).contains("START REPLICA"), "replica_1 repointed");
            assertThat(administration(servers.replica0)).as("the candidate").containsExactly(
                    "SELECT WAIT_FOR_EXECUTED_GTID_SET('" + SOURCE + ":1-32', 5)", LOCK,
                    "STOP REPLICA", "RESET REPLICA ALL", "SET GLOBAL super_read_only = OFF",
                    "SET GLOBAL read_only = OFF");
            assertThat(administration(servers.replica1)).as("the other replica").containsExactly(
                    LOCK, "STOP REPLICA", repoint, "START REPLICA");
            assertThat(servers.replica0.gtidExecuted()).isEqualTo(MySqlGtidSet.parse(SOURCE + ":1-32"));
            assertThat(servers.replica1.source()).isEqualTo("127.0.0.1:" + servers.replica0.port());
            GroupTopology topology = sluice.groups().get(0);
            assertThat(topology.failovers()).isEqualTo(1);
            assertThat(topology.fenced()).containsExactly("primary");
            servers.assertNothingRefused();
            try (RawMySqlClient client = login(sluice)) {
                assertThat(client.query("INSERT INTO t VALUES (3)").end().isOk()).isTrue();
            }
            assertThat(servers.replica0.receivedFrom(ScriptedBackend.USER)).contains("INSERT INTO t VALUES (3)");

            // The old primary comes back writable, as a crashed MySQL does: fenced with super_read_only at once.
            servers.primary.restart();
            await(() -> servers.primary.superReadOnly(), "the old primary fenced again");
            assertThat(administration(servers.primary)).containsExactly("SET GLOBAL super_read_only = ON");
            assertThat(sluice.groups().get(0).roles().primary()).isEqualTo("replica_0");

            RejoinReport rejoin = sluice.rejoin(GROUP, "primary");
            assertThat(rejoin.error()).as("%s", rejoin).isEmpty();
            assertThat(administration(servers.primary)).containsExactly("SET GLOBAL super_read_only = ON",
                    "SET GLOBAL super_read_only = ON", "STOP REPLICA", repoint, "START REPLICA");
            assertThat(servers.primary.source()).isEqualTo("127.0.0.1:" + servers.replica0.port());
            await(() -> sluice.groups().get(0).fenced().isEmpty(), "the old primary taken back as a replica");
            servers.assertNothingRefused();
        }
    }

    /**
     * Decision 185: replicas whose IO threads cannot connect, but to another source than the lost primary (by
     * {@code Source_Host} and {@code Source_Port}), say nothing about it: no failover, nothing sent to them.
     */
    @ParameterizedTest
    @ValueSource(strings = {ScriptedMySqlServer.MYSQL_80, ScriptedMySqlServer.MYSQL_84})
    void replicasOfAnotherSourceDoNotAgreeThatThePrimaryIsGone(String version) throws Exception {
        try (Servers servers = new Servers(version, 30);
             Sluice sluice = Sluice.start(config(servers, new AutoFailover(true, 2, Duration.ofSeconds(5), false)))) {
            awaitRoles(sluice, r -> r.takesWrites() && r.primary().equals("primary"));
            servers.replica0.replicateFrom("10.99.0.7", 3306); // another tool pointed them at a server off the group
            servers.replica1.replicateFrom("127.0.0.1", servers.primary.port() + 1);

            servers.primary.kill();
            await(() -> sluice.groups().get(0).events().stream().anyMatch(e -> e.kind().equals("failover_held_back")),
                    "a failover held back");
            Thread.sleep(1_000); // ten rounds more
            GroupTopology topology = sluice.groups().get(0);
            assertThat(topology.failovers()).isZero();
            assertThat(topology.events()).extracting(e -> e.kind()).doesNotContain("failover_begin", "fenced");
            assertThat(topology.events()).filteredOn(e -> e.kind().equals("failover_held_back"))
                    .allMatch(e -> e.detail().contains("replica_0 (from 10.99.0.7:3306), replica_1 (from 127.0.0.1:"
                            + (servers.primary.port() + 1) + ") replicate(s) from elsewhere"));
            assertThat(administration(servers.replica0)).isEmpty();
            assertThat(administration(servers.replica1)).isEmpty();
            assertThat(servers.replica0.superReadOnly()).isTrue();
            assertThat(servers.replica1.superReadOnly()).isTrue();
        }
    }

    // ---- fixture ------------------------------------------------------------------------------------------------

    /** A MySQL primary with {@code transactions} and two replicas that applied them all. */
    static final class Servers implements AutoCloseable {
        final ScriptedMySqlServer primary;
        final ScriptedMySqlServer replica0;
        final ScriptedMySqlServer replica1;

        Servers(String version, long transactions) throws IOException {
            primary = ScriptedMySqlServer.primary("primary", version, SOURCE, transactions);
            replica0 = ScriptedMySqlServer.replicaOf(primary, "replica_0", "5d2f14c4-8a1b-11ee-b7a1-0242ac120002", 0);
            replica1 = ScriptedMySqlServer.replicaOf(primary, "replica_1", "6a7b3c1d-8a1b-11ee-b7a1-0242ac120003", 0);
        }

        List<ScriptedMySqlServer> all() {
            return List.of(primary, replica0, replica1);
        }

        void assertNothingRefused() {
            for (ScriptedMySqlServer server : all()) {
                assertThat(server.refused()).as("statements %s refused (ERR 1064)", server.name()).isEmpty();
            }
        }

        @Override
        public void close() {
            all().forEach(ScriptedMySqlServer::close);
        }
    }

    static ProxyConfig config(Servers servers, AutoFailover failover) {
        ProxyConfig.Builder config = ProxyConfig.builder().port(0).user(ProxyUnderTest.USER, ProxyUnderTest.PASSWORD)
                .healthCheck(new HealthCheckConfig(100, 1000, 1, 2));
        List<String> replicas = new ArrayList<>();
        for (ScriptedMySqlServer server : servers.all()) {
            config.dataSource(new DataSourceConfig(server.name(), server.jdbcUrl("app"), ScriptedBackend.USER, "",
                    1000, 60_000, 600_000, 8, 0, 1, false));
            if (server != servers.primary) {
                replicas.add(server.name());
            }
        }
        ReadWriteSplittingConfig group = ReadWriteSplittingConfig.of(GROUP, "primary", replicas)
                .withTopology(PrimaryDiscovery.READ_ONLY, Duration.ofSeconds(5),
                        new ServerAccount(ADMIN, "mf_admin_pw"), new ServerAccount(REPL, REPL_PASSWORD))
                .withAutoFailover(failover);
        return config.readWriteSplitting(group).build();
    }

    static String changeSource(int port) {
        return "CHANGE REPLICATION SOURCE TO SOURCE_HOST = '127.0.0.1', SOURCE_PORT = " + port + ", SOURCE_USER = '"
                + REPL + "', SOURCE_PASSWORD = '" + REPL_PASSWORD + "', SOURCE_AUTO_POSITION = 1,"
                + " GET_SOURCE_PUBLIC_KEY = 1";
    }

    /**
     * What the administration account ran on {@code server}, without the commands every connection of Sluice's
     * starts with (session trackers, session check, a replica's read-only access mode).
     */
    static List<String> administration(ScriptedMySqlServer server) {
        return server.receivedFrom(ADMIN).stream()
                .filter(sql -> !sql.startsWith("SET SESSION session_track_system_variables")
                        && !sql.startsWith("SELECT DATABASE(), @@character_set_client")
                        && !sql.equals("SET SESSION TRANSACTION READ ONLY"))
                .toList();
    }

    static RawMySqlClient login(Sluice sluice) throws IOException {
        return RawMySqlClient.login("127.0.0.1", sluice.port(), ProxyUnderTest.USER, ProxyUnderTest.PASSWORD, GROUP);
    }

    static void awaitRoles(Sluice sluice, Predicate<io.sluice.balancer.replication.Roles> wanted)
            throws InterruptedException {
        await(() -> wanted.test(sluice.groups().get(0).roles()), "roles now: see the group's events");
    }

    static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
        while (!condition.getAsBoolean()) {
            assertThat(System.nanoTime()).as("waited for: %s", what).isLessThan(deadline);
            Thread.sleep(10);
        }
    }
}
