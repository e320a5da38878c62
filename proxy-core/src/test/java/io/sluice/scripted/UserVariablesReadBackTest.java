package io.sluice.scripted;

import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.testing.LeakDetection;
import io.sluice.testing.MySqlWire;
import io.sluice.testing.ScriptedClient;
import io.sluice.testing.ScriptedServerConnection;
import io.sluice.testing.ScriptedSluice;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * On MariaDB, transaction pooling reads a session's user variables back before its connection goes, and sets them on
 * the next connection (decision 088); a server that refuses the read pins the session instead. The real-server tests
 * (PinningTest) prove the values and types; these show the exchange and the refusal, which a real server does not
 * produce on demand.
 */
@ExtendWith(LeakDetection.class)
class UserVariablesReadBackTest {
    private static final int AUTOCOMMIT = MySqlWire.SERVER_STATUS_AUTOCOMMIT;
    private static final String NAMES = "SELECT VARIABLE_NAME, VARIABLE_TYPE FROM information_schema.USER_VARIABLES";

    @Test
    void theVariablesAreReadBeforeTheConnectionGoesAndAnotherSessionGetsThemCleared() {
        try (ScriptedSluice sluice = ScriptedSluice.transactionPoolingOnMariaDb(1)) {
            ScriptedClient first = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);
            first.send(MySqlWire.comQuery("SET @x = 42"));
            server.expectQuery("SET @x = 42");
            server.respond(MySqlWire.ok(AUTOCOMMIT));
            first.expectOk();

            server.expectQuery(NAMES); // Sluice's own, before the connection goes back
            assertThat(sluice.pool().idleConnections()).as("not given back before the read").isZero();
            server.respond(result(List.of("VARIABLE_NAME", "VARIABLE_TYPE"), List.of("x", "INT"), server));
            server.expectQuery("SELECT @`x`, HEX(@`x`), CHARSET(@`x`), COLLATION(@`x`)");
            server.respond(result(List.of("a", "b", "c", "d"), List.of("42", "2A", "binary", "binary"), server));
            first.expectNothing();
            // Given back once read, reset first: a variable set to NULL would keep its name and type for the next
            // session to see (issue #38).
            server.answerReset();
            assertThat(sluice.pool().idleConnections()).as("given back once read").isEqualTo(1);

            ScriptedClient second = sluice.connect().sendLogin(ScriptedSluice.USER, "app");
            second.expectOk();
            second.send(MySqlWire.comQuery("SELECT 1"));
            server.expectQuery("SELECT 1"); // nothing of the other session's to clear
            server.respond(MySqlWire.ok(AUTOCOMMIT));
            second.expectOk();

            // Back on the first session: its variable is set again before its statement.
            first.send(MySqlWire.comQuery("SELECT @x"));
            server.expectQuery("SET @x = 42");
            server.respond(MySqlWire.ok(AUTOCOMMIT));
            server.expectQuery("SELECT @x");
            server.respond(MySqlWire.ok(AUTOCOMMIT));
            first.expectOk();
            server.expectQuery(NAMES); // it named a user variable again: read before the connection goes
        }
    }

    /**
     * A client that sends its next statement as soon as it has its answer sends it while the read runs: it waits, runs
     * after the read, and the variables are read again after it, since the read could not see what it set (decision
     * 098: the variable was lost when the session moved).
     */
    @Test
    void aStatementThatArrivesDuringTheReadIsReadBackAfterIt() {
        try (ScriptedSluice sluice = ScriptedSluice.transactionPoolingOnMariaDb(1)) {
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);
            client.send(MySqlWire.comQuery("SET @x = 42"));
            server.expectQuery("SET @x = 42");
            server.respond(MySqlWire.ok(AUTOCOMMIT));
            client.expectOk();
            server.expectQuery(NAMES);

            client.send(MySqlWire.comQuery("SET @y = 7"));
            server.expectNothing(); // held until Sluice's own queries are answered
            server.respond(result(List.of("VARIABLE_NAME", "VARIABLE_TYPE"), List.of("x", "INT"), server));
            server.expectQuery("SELECT @`x`, HEX(@`x`), CHARSET(@`x`), COLLATION(@`x`)");
            server.respond(result(List.of("a", "b", "c", "d"), List.of("42", "2A", "binary", "binary"), server));
            server.expectQuery("SET @y = 7");
            server.respond(MySqlWire.ok(AUTOCOMMIT));
            client.expectOk();

            server.expectQuery(NAMES); // @y is not known yet: read again before the connection goes
            assertThat(sluice.pool().idleConnections()).as("not given back before the second read").isZero();
        }
    }

    @Test
    void aServerThatRefusesTheReadPinsTheSession() {
        try (ScriptedSluice sluice = ScriptedSluice.transactionPoolingOnMariaDb(1)) {
            ScriptedClient client = sluice.connectAndLogin("app");
            ScriptedServerConnection server = sluice.backend().connection(0);
            client.send(MySqlWire.comQuery("SET @x = 1"));
            server.expectQuery("SET @x = 1");
            server.respond(MySqlWire.ok(AUTOCOMMIT));
            client.expectOk();
            server.expectQuery(NAMES);
            server.respond(MySqlWire.err(1109, "42S02", "Unknown table 'USER_VARIABLES' in information_schema"));

            assertThat(sluice.pool().idleConnections()).as("kept: its user variables cannot be carried").isZero();
            assertThat(sluice.context().registry().pinnedNow()).containsOnlyKeys(io.sluice.pooling.PinReason.USER_VARIABLE);
            client.send(MySqlWire.comQuery("SELECT @x"));
            server.expectQuery("SELECT @x"); // on the same connection, and no read-back any more
            server.respond(MySqlWire.ok(AUTOCOMMIT));
            client.expectOk();
            server.expectNothing();
        }
    }

    /** A one-row text result with VARCHAR columns, in the format Sluice negotiated with this connection. */
    private static List<byte[]> result(List<String> names, List<String> values, ScriptedServerConnection server) {
        List<byte[]> columns = names.stream()
                .map(n -> MySqlWire.columnDefinition(n, MySqlWire.MYSQL_TYPE_VAR_STRING)).toList();
        return MySqlWire.resultSet(server.deprecateEof(), columns,
                List.of(MySqlWire.textRow(values.toArray(new String[0]))), AUTOCOMMIT);
    }
}
