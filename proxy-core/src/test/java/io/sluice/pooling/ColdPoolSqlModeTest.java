package io.sluice.pooling;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.ExtraMariaDb;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.TestMariaDb;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Decision 204 for a session's first statement on a cold pool: its server runs {@code NO_BACKSLASH_ESCAPES} by
 * default (the server's global {@code sql_mode}), and Sluice has not logged in to it yet: no pooled connection has,
 * and the first health check comes an interval (2 s) after the start. So Sluice cannot know the mode when it reads
 * the statement, and must read the text as the worst mode would make the server read it. Before, it read it in the
 * default modes: the {@code GET_LOCK} after {@code 'a\'} was text, the statement pinned nothing, and the next user of
 * the one pooled connection held the lock.
 */
@Tag("server")
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class ColdPoolSqlModeTest {
    private static ExtraMariaDb server;

    @BeforeAll
    static void startServer() {
        server = ExtraMariaDb.start("nobackslash", List.of("--sql-mode=NO_BACKSLASH_ESCAPES"));
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void aFirstStatementReadBeforeAnyLoginIsReadInTheWorstMode() throws Exception {
        String lock = "sluice_cold_pool";
        // the server: the strings a\ and \ around the lock; the lexer in the default modes: one string to GET_LOCK('
        String sql = "SELECT 'a\\' AS x, GET_LOCK('" + lock + "', 0) AS l, '\\' AS y";
        try (ProxyUnderTest proxy = ProxyUnderTest.builder().backendUrl(server.jdbcUrl(null)).transactionPooling()
                .maxPoolSize(1).workerThreads(1).connectionTimeoutMillis(5_000).start()) {
            try (RawMySqlClient a = proxy.rawLogin(null)) {
                assertThat(proxy.sluice().backendConnections("ds_0"))
                        .as("no connection has logged in before A's first statement").isZero();
                RawMySqlClient.QueryResult taken = a.query(sql);
                assertThat(taken.rows()).as("the server ran %s", sql).hasSize(1);
                assertThat(taken.rows().get(0)).containsExactly("a\\", "1", "\\");
                assertThat(proxy.sluice().sessions()).singleElement()
                        .satisfies(s -> assertThat(s.pinnedBy()).isEqualTo("stored_code"));
            }
            // B as A, a raw client with the same capabilities: it may take A's pooled connection
            try (RawMySqlClient b = RawMySqlClient.login(proxy.host(), proxy.port(), proxy.user2(),
                    proxy.password2(), null)) {
                assertThat(b.query("SELECT @@sql_mode").rows().get(0).get(0)).contains("NO_BACKSLASH_ESCAPES");
                assertThat(b.query("SELECT IS_USED_LOCK('" + lock + "')").rows().get(0).get(0))
                        .as("A's lock, after A left, on the one server connection").isNull();
            }
        }
    }

    /**
     * A session-pooled session's first statement on a cold pool adds a mode to the login value ({@code CONCAT} of
     * {@code @@sql_mode}, as MariaDB Connector/J's connect statement does). On a server in the default modes its later
     * statements with a backslash are read as the server reads them, and pin nothing. Before, the assignment was
     * read as built on both modes, the worst for a login value not known yet, and session pooling, which has no
     * tracker to correct it, kept both for the session's life: every such statement pinned its session.
     */
    @Test
    void anAssignmentBuiltOnTheLoginValueOnAColdPoolTakesThatValueOnceKnown() throws Exception {
        String backslash = "SELECT 'a\\\\' AS x"; // the server and the lexer: the string a\
        try (ProxyUnderTest proxy = ProxyUnderTest.builder().backendUrl(TestMariaDb.get().jdbcUrl(null))
                .maxPoolSize(1).workerThreads(1).connectionTimeoutMillis(5_000).start();
             RawMySqlClient a = proxy.rawLogin(null)) {
            assertThat(proxy.sluice().backendConnections("ds_0"))
                    .as("no connection has logged in before A's first statement").isZero();
            a.query("SET sql_mode = CONCAT(@@sql_mode, ',ONLY_FULL_GROUP_BY')");
            assertThat(a.query("SELECT @@sql_mode").rows().get(0).get(0)).doesNotContain("NO_BACKSLASH_ESCAPES")
                    .doesNotContain("ANSI_QUOTES");
            assertThat(a.query(backslash).rows()).containsExactly(List.of("a\\"));
            assertThat(proxy.sluice().sessions()).singleElement()
                    .satisfies(s -> assertThat(s.pinnedBy()).as("pinned by").isNull());
        }
    }

    /**
     * The same assignment on the server that runs {@code NO_BACKSLASH_ESCAPES} by default: the login value, once
     * known, brings that mode, and a lock after {@code 'a\'} pins its session.
     */
    @Test
    void anAssignmentBuiltOnTheLoginValueKeepsTheModesOfThatValue() throws Exception {
        String lock = "sluice_cold_pool_kept";
        String sql = "SELECT 'a\\' AS x, GET_LOCK('" + lock + "', 0) AS l, '\\' AS y";
        try (ProxyUnderTest proxy = ProxyUnderTest.builder().backendUrl(server.jdbcUrl(null))
                .maxPoolSize(1).workerThreads(1).connectionTimeoutMillis(5_000).start();
             RawMySqlClient a = proxy.rawLogin(null)) {
            assertThat(proxy.sluice().backendConnections("ds_0"))
                    .as("no connection has logged in before A's first statement").isZero();
            a.query("SET sql_mode = CONCAT(@@sql_mode, ',ONLY_FULL_GROUP_BY')");
            assertThat(a.query("SELECT 1").rows()).containsExactly(List.of("1"));
            assertThat(a.query(sql).rows()).containsExactly(List.of("a\\", "1", "\\"));
            assertThat(proxy.sluice().sessions()).singleElement()
                    .satisfies(s -> assertThat(s.pinnedBy()).isEqualTo("stored_code"));
        }
    }
}
