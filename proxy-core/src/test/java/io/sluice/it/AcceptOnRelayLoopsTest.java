package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import io.sluice.testing.JdbcDriver;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * New clients are accepted on the relay loops themselves (decision 057): Sluice starts no accept thread, and clients
 * logging in at once, spread over both loops, are all served.
 */
@ExtendWith(LeakDetection.class)
class AcceptOnRelayLoopsTest {

    private static final int CLIENTS = 8;

    @Test
    void clientsLoggingInAtOnceAreAcceptedWithoutAnAcceptThread() throws Exception {
        assumeFalse(ProxyUnderTest.isDirect(), "about the proxy's threads");
        try (ProxyUnderTest proxy = ProxyUnderTest.builder().workerThreads(2).start()) {
            ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
            try {
                List<Future<Long>> logins = new ArrayList<>();
                for (int i = 0; i < CLIENTS; i++) {
                    logins.add(clients.submit(() -> {
                        try (Connection connection = proxy.connect(JdbcDriver.MARIADB, null, "");
                                Statement statement = connection.createStatement();
                                ResultSet rs = statement.executeQuery("SELECT CONNECTION_ID()")) {
                            rs.next();
                            return rs.getLong(1);
                        }
                    }));
                }
                for (Future<Long> login : logins) {
                    assertThat(login.get(30, TimeUnit.SECONDS)).isPositive();
                }
            } finally {
                clients.shutdownNow();
            }
            List<String> sluiceThreads = Thread.getAllStackTraces().keySet().stream()
                    .map(Thread::getName)
                    .filter(name -> name.startsWith("sluice-"))
                    .toList();
            assertThat(sluiceThreads).anyMatch(name -> name.startsWith("sluice-relay"));
            assertThat(sluiceThreads).noneMatch(name -> name.startsWith("sluice-accept"));
        }
    }
}
