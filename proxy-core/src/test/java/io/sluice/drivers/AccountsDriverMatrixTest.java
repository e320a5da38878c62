package io.sluice.drivers;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.accounts.ThreeAccounts;
import io.sluice.config.UserConfig;
import io.sluice.testing.ProxyUnderTest;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Issue #39 across the driver matrix (the JDBC drivers, HikariCP, the mariadb client, PyMySQL, PHP, Go...): with
 * transaction pooling, two users mapped to two server accounts take turns, and every statement of each runs as its
 * own account, seeing only its own processlist rows.
 */
@Tag("server")
@Tag("tools")
class AccountsDriverMatrixTest {
    private static ThreeAccounts accounts;
    private static ProxyUnderTest proxy;

    @BeforeAll
    static void start() {
        accounts = new ThreeAccounts();
        proxy = ProxyUnderTest.builder().transactionPooling().workerThreads(1).maxPoolSize(4)
                .user(new UserConfig("reader", "%", "reader-secret", null, 0, ThreeAccounts.READER,
                        ThreeAccounts.READER_PASSWORD))
                .user(new UserConfig("writer", "%", "writer-secret", null, 0, ThreeAccounts.WRITER,
                        ThreeAccounts.WRITER_PASSWORD))
                .start();
    }

    @AfterAll
    static void stop() {
        if (proxy != null) {
            proxy.close();
        }
        if (accounts != null) {
            accounts.close();
        }
    }

    private static Endpoint as(String user) {
        return new Endpoint(proxy.host(), proxy.port(), user, user + "-secret", accounts.db);
    }

    @ParameterizedTest
    @EnumSource(ClientDriver.class)
    void eachStatementRunsAsTheSessionsAccount(ClientDriver driver) throws Exception {
        try (DriverClient readers = driver.start(as("reader"), 1, false);
             DriverClient writers = driver.start(as("writer"), 1, false)) {
            DriverClient.Session reader = readers.open();
            DriverClient.Session writer = writers.open();
            Set<String> readerIds = new HashSet<>();
            Set<String> writerIds = new HashSet<>();
            for (int i = 0; i < 5; i++) {
                List<String> r = reader.query("SELECT CONNECTION_ID(), CURRENT_USER()").get(0);
                List<String> w = writer.query("SELECT CONNECTION_ID(), CURRENT_USER()").get(0);
                assertThat(r.get(1)).startsWith(ThreeAccounts.READER + "@");
                assertThat(w.get(1)).startsWith(ThreeAccounts.WRITER + "@");
                readerIds.add(r.get(0));
                writerIds.add(w.get(0));
            }
            assertThat(readerIds).doesNotContainAnyElementsOf(writerIds);
            assertThat(reader.query("SELECT DISTINCT USER FROM information_schema.PROCESSLIST"))
                    .containsExactly(List.of(ThreeAccounts.READER));
        }
    }
}
