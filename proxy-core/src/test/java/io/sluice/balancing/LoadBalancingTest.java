package io.sluice.balancing;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.api.BackendSnapshot;
import io.sluice.Sluice;
import io.sluice.balancer.Policy;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The policies with real sessions over three real MariaDB servers. */
@Tag("server")
class LoadBalancingTest {
    private static BackendCluster cluster;

    @BeforeAll
    static void startServers() {
        cluster = BackendCluster.shared();
    }

    /** Opens {@code count} JDBC sessions and returns them with the backend each landed on. */
    private static List<Connection> open(Sluice sluice, int count, Map<String, Integer> perBackend) throws Exception {
        List<Connection> sessions = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            Connection session = BackendCluster.connect(sluice);
            sessions.add(session);
            perBackend.merge(cluster.backendOf(session), 1, Integer::sum);
        }
        return sessions;
    }

    private static void closeAll(List<Connection> sessions) throws Exception {
        for (Connection session : sessions) {
            session.close();
        }
    }

    private static Map<String, Integer> activeSessions(Sluice sluice) {
        Map<String, Integer> active = new HashMap<>();
        for (BackendSnapshot backend : sluice.backends()) {
            active.put(backend.state().name(), backend.state().activeSessions());
        }
        return active;
    }

    @Test
    void leastConnectionsKeepsOpenSessionsBalancedWithinOne() throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.LEAST_CONNECTIONS)) {
            Map<String, Integer> perBackend = new HashMap<>();
            List<Connection> sessions = open(sluice, 31, perBackend);
            assertThat(perBackend).containsOnlyKeys("a", "b", "c");
            int max = perBackend.values().stream().max(Integer::compare).orElseThrow();
            int min = perBackend.values().stream().min(Integer::compare).orElseThrow();
            assertThat(max - min).isLessThanOrEqualTo(1);
            assertThat(activeSessions(sluice)).isEqualTo(perBackend);

            // Sessions on b end: the next sessions fill b until it is level again.
            List<Connection> onB = new ArrayList<>();
            for (Connection session : sessions) {
                if (onB.size() < 5 && cluster.backendOf(session).equals("b")) {
                    onB.add(session);
                }
            }
            sessions.removeAll(onB);
            closeAll(onB);
            awaitActive(sluice, "b", perBackend.get("b") - 5);
            Map<String, Integer> refill = new HashMap<>();
            sessions.addAll(open(sluice, 5, refill));
            assertThat(refill).isEqualTo(Map.of("b", 5));
            closeAll(sessions);
        }
    }

    private static void awaitActive(Sluice sluice, String name, int expected) throws InterruptedException {
        for (int i = 0; i < 500 && activeSessions(sluice).get(name) != expected; i++) {
            Thread.sleep(10); // the proxy sees the client's COM_QUIT a moment after close() returns
        }
        assertThat(activeSessions(sluice).get(name)).isEqualTo(expected);
    }

    @Test
    void weightedRoundRobinHoldsWeightsWithinFivePercentOverTenThousandSessions() throws Exception {
        Map<String, Integer> weights = Map.of("a", 1, "b", 2, "c", 5);
        try (Sluice sluice = cluster.startProxy(Policy.WEIGHTED_ROUND_ROBIN, BackendCluster.FAST_CHECKS,
                weights::get)) {
            // Real sessions that run a query land on the servers in the weights' proportions.
            Map<String, Integer> perBackend = new HashMap<>();
            closeAll(open(sluice, 80, perBackend));
            assertThat(perBackend).isEqualTo(Map.of("a", 10, "b", 20, "c", 50));

            // Ten thousand sessions that log in and quit (their backend connection is only taken on a first
            // command, so this measures the balancer's assignments at the rate a real client can log in).
            for (int i = 0; i < 10_000; i++) {
                try (RawMySqlClient client = RawMySqlClient.login("127.0.0.1", sluice.port(), ProxyUnderTest.USER,
                        ProxyUnderTest.PASSWORD, null)) {
                    client.sendCommand(MySqlWire.COM_QUIT, new byte[0]);
                }
            }
            Map<String, Long> total = new HashMap<>();
            sluice.backends().forEach(b -> total.put(b.state().name(), b.state().totalSessions()));
            long all = total.values().stream().mapToLong(Long::longValue).sum();
            assertThat(all).isEqualTo(10_080);
            for (Map.Entry<String, Integer> weight : weights.entrySet()) {
                double expected = weight.getValue() / 8.0;
                double share = total.get(weight.getKey()) / (double) all;
                assertThat(share).as(weight.getKey()).isBetween(expected * 0.95, expected * 1.05);
            }
        }
    }

    @Test
    void roundRobinTakesEachServerInTurn() throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.ROUND_ROBIN)) {
            Map<String, Integer> perBackend = new HashMap<>();
            closeAll(open(sluice, 12, perBackend));
            assertThat(perBackend).isEqualTo(Map.of("a", 4, "b", 4, "c", 4));
        }
    }

    @Test
    void firstAvailableSendsEverySessionToTheFirstServerUntilItIsDrained() throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.FIRST_AVAILABLE)) {
            Map<String, Integer> perBackend = new HashMap<>();
            closeAll(open(sluice, 5, perBackend));
            assertThat(perBackend).isEqualTo(Map.of("a", 5));
            sluice.drain("a");
            Map<String, Integer> after = new HashMap<>();
            closeAll(open(sluice, 3, after));
            assertThat(after).isEqualTo(Map.of("b", 3));
        }
    }

    @Test
    void powerOfTwoChoicesSpreadsOpenSessionsOverEveryServer() throws Exception {
        try (Sluice sluice = cluster.startProxy(Policy.POWER_OF_TWO_CHOICES)) {
            Map<String, Integer> perBackend = new HashMap<>();
            List<Connection> sessions = open(sluice, 30, perBackend);
            assertThat(perBackend).containsOnlyKeys("a", "b", "c");
            // The less loaded of two random servers: never far from an even spread of 10 each.
            assertThat(perBackend.values()).allSatisfy(count -> assertThat(count).isBetween(7, 13));
            closeAll(sessions);
        }
    }
}
