package io.sluice.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.FaultyServerRelay;
import io.sluice.testing.LeakDetection;
import io.sluice.testing.ProxyUnderTest;
import io.sluice.testing.RawMySqlClient;
import io.sluice.testing.TestMariaDb;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Transaction pooling reads a session's user variables back before its connection goes (decision 088), and a client
 * that sends its next statement as soon as it has its answer (mariadb-test does) sends it while that read still runs.
 * The statement waits, runs after the read, and may set a variable the read did not see: it must be read back too,
 * or the variable is lost when the session moves (MariaDB's {@code sys_vars/character_set_client_func} failed so:
 * {@code SET @@session.character_set_client = @saved} found {@code @saved} NULL, decision 098). A relay that delays
 * the server's replies makes the read long enough for the client's statement to arrive during it every time.
 */
@ExtendWith(LeakDetection.class)
@Tag("server")
class UserVariablesReadBackRaceTest {
    /** Each reply from the server arrives this much later: the read (two queries) takes twice that. */
    private static final long REPLY_DELAY_MILLIS = 40;

    @BeforeAll
    static void notDirect() {
        Assumptions.assumeFalse(ProxyUnderTest.isDirect(), "checks Sluice's transaction pooling");
    }

    @Test
    void aVariableSetWhileTheLastWereReadBackMovesWithTheSessionToo() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        try (FaultyServerRelay far = new FaultyServerRelay(mariaDb.host(), mariaDb.port());
                ProxyUnderTest proxy = ProxyUnderTest.builder().transactionPooling().maxPoolSize(1).workerThreads(1)
                        .backendUrl(far.jdbcUrl()).start();
                RawMySqlClient session = trackingLogin(proxy);
                RawMySqlClient other = proxy.rawLogin(null)) {
            far.slowReplies(REPLY_DELAY_MILLIS);

            ok(session.query("SET @global_saved = @@global.character_set_client"));
            // sent at once, while Sluice still reads @global_saved back: it waits, then runs
            ok(session.query("SET @session_saved = @@session.character_set_client"));
            // The other session takes the one server connection: the first session's variables are set to NULL
            // there, and must be set again when the first session comes back to it.
            assertThat(other.query("SELECT @global_saved, @session_saved").rows())
                    .containsExactly(Arrays.asList(null, null));

            List<List<String>> rows = session.query("SELECT @global_saved, @session_saved").rows();
            List<List<String>> direct = direct(mariaDb);
            assertThat(rows).as("as directly").isEqualTo(direct);
            assertThat(rows.get(0)).doesNotContainNull();
            ok(session.query("SET @@session.character_set_client = @session_saved")); // 1231 (NULL) before the fix
        }
    }

    /**
     * A {@code CALL} that arrives while the session's user variables are read back waits for the read and runs on
     * that connection, which Sluice had not given the session's last-insert id first (it did so only on a connection
     * between commands): the procedure's id was then not trusted, and {@code LAST_INSERT_ID()} answered the session's
     * followed id instead, 0 where directly it is the procedure's (issue #38, seed 5216 of the isolation long run,
     * which depends on that timing; the slow relay makes it certain).
     */
    @Test
    void aProcedureCalledWhileTheVariablesAreReadBackKeepsTheIdItGenerated() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        String db = "sluice_lid_race";
        withTable(mariaDb, db, "CREATE PROCEDURE " + db + ".add_one(IN v INT) INSERT INTO ai (n) VALUES (v)");
        try (FaultyServerRelay far = new FaultyServerRelay(mariaDb.host(), mariaDb.port());
                ProxyUnderTest proxy = ProxyUnderTest.builder().transactionPooling().maxPoolSize(1).workerThreads(1)
                        .backendUrl(far.jdbcUrl()).start();
                RawMySqlClient session = trackingLogin(proxy)) {
            far.slowReplies(REPLY_DELAY_MILLIS);
            ok(session.query("SET @v = 1")); // its variables are read back before the connection goes
            ok(session.query("CALL " + db + ".add_one(7)")); // sent at once: it waits for the read, then runs
            assertThat(session.query("SELECT LAST_INSERT_ID(), (SELECT MAX(id) FROM " + db + ".ai)").rows())
                    .as("the id the procedure generated, as directly").containsExactly(Arrays.asList("1", "1"));
        } finally {
            root(mariaDb, "DROP DATABASE IF EXISTS " + db);
        }
    }

    /**
     * After {@code LAST_INSERT_ID(expr)} Sluice reads the session's last-insert id back, and a client's next statement
     * that arrives meanwhile was looked at before the read ended: a {@code SELECT LAST_INSERT_ID()} was answered with
     * the session's id from before (issue #38, seeds 10700 and 16531 of the long run, which depend on that timing;
     * the slow relay makes it certain). It now waits for the read, then is answered with what the read found.
     */
    @Test
    void aLastInsertIdAskedForWhileTheIdSetIsReadBackIsTheOneSet() throws Exception {
        TestMariaDb mariaDb = TestMariaDb.get();
        String db = "sluice_lid_set_race";
        withTable(mariaDb, db);
        try (FaultyServerRelay far = new FaultyServerRelay(mariaDb.host(), mariaDb.port());
                ProxyUnderTest proxy = ProxyUnderTest.builder().transactionPooling().maxPoolSize(1).workerThreads(1)
                        .backendUrl(far.jdbcUrl()).start();
                RawMySqlClient session = trackingLogin(proxy)) {
            ok(session.query("INSERT INTO " + db + ".ai (n) VALUES (1)"));
            far.slowReplies(REPLY_DELAY_MILLIS);
            ok(session.query("DO LAST_INSERT_ID(0)")); // the id it sets is read back before the connection goes
            // sent at once, while that read runs
            assertThat(session.query("SELECT LAST_INSERT_ID()").rows()).as("the id set, as directly")
                    .containsExactly(List.of("0"));
            ok(session.query("DO LAST_INSERT_ID(42)"));
            assertThat(session.query("SELECT LAST_INSERT_ID() + 0").rows()).containsExactly(List.of("42"));
        } finally {
            root(mariaDb, "DROP DATABASE IF EXISTS " + db);
        }
    }

    /** A fresh database {@code db} with an auto-increment table {@code ai}, then {@code more}, as root. */
    private static void withTable(TestMariaDb mariaDb, String db, String... more) throws Exception {
        root(mariaDb, "DROP DATABASE IF EXISTS " + db);
        root(mariaDb, "CREATE DATABASE " + db);
        root(mariaDb, "CREATE TABLE " + db + ".ai (id INT AUTO_INCREMENT PRIMARY KEY, n INT)");
        for (String sql : more) {
            root(mariaDb, sql);
        }
    }

    private static void root(TestMariaDb mariaDb, String sql) throws Exception {
        try (java.sql.Connection root = mariaDb.rootConnection(); java.sql.Statement s = root.createStatement()) {
            s.execute(sql);
        }
    }

    /** A client that negotiates CLIENT_SESSION_TRACK, as libmariadb (mariadb-test's client) does. */
    private static RawMySqlClient trackingLogin(ProxyUnderTest proxy) throws Exception {
        RawMySqlClient client = RawMySqlClient.connect(proxy.host(), proxy.port());
        RawMySqlClient.Packet reply = client.authenticate(proxy.user(), proxy.password(), null,
                RawMySqlClient.CLIENT_SESSION_TRACK);
        assertThat(reply.isOk()).as("%s", reply).isTrue();
        return client;
    }

    /** The same two assignments on a connection of one's own, without Sluice. */
    private static List<List<String>> direct(TestMariaDb mariaDb) throws Exception {
        try (RawMySqlClient direct = RawMySqlClient.login(mariaDb.host(), mariaDb.port(), TestMariaDb.ROOT_USER,
                TestMariaDb.ROOT_PASSWORD, null)) {
            ok(direct.query("SET @global_saved = @@global.character_set_client"));
            ok(direct.query("SET @session_saved = @@session.character_set_client"));
            return direct.query("SELECT @global_saved, @session_saved").rows();
        }
    }

    private static void ok(RawMySqlClient.QueryResult result) {
        assertThat(result.end().isOk()).as("%s", result.end()).isTrue();
    }
}
