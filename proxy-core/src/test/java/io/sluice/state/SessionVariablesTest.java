package io.sluice.state;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

class SessionVariablesTest {

    @Test
    void matchingVariablesNeedNoStatement() {
        SessionVariables connection = new SessionVariables();
        SessionVariables session = new SessionVariables();
        assertThat(SessionVariables.syncStatement(connection, session, Map.of())).isNull();
        connection.put("time_zone", "+01:00");
        session.put("TIME_ZONE", "+01:00");
        assertThat(connection.matches(session)).isTrue();
        assertThat(SessionVariables.syncStatement(connection, session, Map.of())).isNull();
    }

    @Test
    void setsTheSessionsValuesAndReturnsTheRestToLoginOrDefault() {
        SessionVariables connection = new SessionVariables();
        connection.put("sql_mode", "ANSI");
        connection.put("collation_connection", "latin1_swedish_ci");
        connection.put("character_set_connection", "latin1");
        SessionVariables session = new SessionVariables();
        session.put("wait_timeout", "100");
        session.put("autocommit", "OFF");
        String statement = SessionVariables.syncStatement(connection, session,
                Map.of("character_set_connection", "utf8mb4", "collation_connection", "utf8mb4_general_ci"));
        assertThat(statement).startsWith("SET SESSION ")
                .contains("sql_mode = DEFAULT", "wait_timeout = 100", "autocommit = 'OFF'",
                        "character_set_connection = 'utf8mb4'")
                .endsWith("collation_connection = 'utf8mb4_general_ci'");
    }

    /** MariaDB's results collation follows SET NAMES only: the one statement that restores it is SET NAMES. */
    @Test
    void characterSetsAsSetNamesLeavesThemAreSetBySetNames() {
        SessionVariables connection = new SessionVariables();
        connection.put("character_set_client", "utf8mb3");
        connection.put("character_set_results", "utf8mb3");
        connection.put("collation_connection", "utf8mb3_general_ci");
        connection.put("sql_mode", "ANSI");
        SessionVariables session = new SessionVariables();
        session.put("character_set_client", "utf8mb4");
        session.put("character_set_connection", "utf8mb4");
        session.put("character_set_results", "utf8mb4");
        session.put("collation_connection", "utf8mb4_bin");
        session.put("sql_mode", "ANSI");
        session.put("@v", "1");
        assertThat(SessionVariables.syncStatement(connection, session, Map.of()))
                .isEqualTo("SET NAMES 'utf8mb4' COLLATE 'utf8mb4_bin', @v = 1");

        session.put("character_set_client", "latin1"); // SET NAMES then the client's own
        session.put("time_zone", "+03:00");
        assertThat(SessionVariables.syncStatement(connection, session, Map.of()))
                .isEqualTo("SET NAMES 'utf8mb4' COLLATE 'utf8mb4_bin', character_set_client = 'latin1',"
                        + " time_zone = '+03:00', @v = 1");

        session.put("character_set_results", ""); // NULL results: not what SET NAMES leaves
        assertThat(SessionVariables.syncStatement(connection, session, Map.of())).startsWith("SET SESSION ")
                .doesNotContain("NAMES");

        SessionVariables sameCharsets = new SessionVariables();
        sameCharsets.copyFrom(connection);
        sameCharsets.put("sql_mode", "");
        assertThat(SessionVariables.syncStatement(connection, sameCharsets, Map.of()))
                .isEqualTo("SET SESSION sql_mode = ''"); // character sets untouched: no NAMES
    }

    @Test
    void quotesAndEscapesValues() {
        assertThat(SessionVariables.literal("sql_mode", "")).isEqualTo("''");
        assertThat(SessionVariables.literal("character_set_results", "")).isEqualTo("NULL");
        assertThat(SessionVariables.literal("x", "it's a \\ path")).isEqualTo("'it\\'s a \\\\ path'");
        assertThat(SessionVariables.literal("div_precision_increment", "6")).isEqualTo("6");
        assertThat(SessionVariables.literal("long_query_time", "1.500000")).isEqualTo("1.500000");
    }

    @Test
    void ignoresVariablesDerivedFromTheSchemaOrGoodForOneStatement() {
        SessionVariables session = new SessionVariables();
        session.put("character_set_database", "latin1");
        session.put("insert_id", "5");
        assertThat(session.isEmpty()).isTrue();
    }

    /**
     * Decision 110: a replica's connection keeps its READ ONLY access mode: a session's READ WRITE is not carried to
     * it, nor is the mode returned to the server's default, and what the connection records keeps its own.
     */
    @Test
    void neverCarriesTheAccessModeToAReadOnlyConnection() {
        SessionVariables connection = new SessionVariables();
        SessionVariables session = new SessionVariables();
        session.put("tx_read_only", "OFF");
        session.put("transaction_read_only", "0");
        session.put("time_zone", "+03:00");
        assertThat(SessionVariables.syncStatement(connection, session, Map.of()))
                .contains("tx_read_only = 'OFF'", "transaction_read_only = 0"); // a primary's connection takes it
        assertThat(SessionVariables.syncStatement(connection, session, Map.of(), true))
                .isEqualTo("SET SESSION time_zone = '+03:00'");

        connection.put("tx_read_only", "ON"); // the session on it set READ ONLY, as the replica already was
        assertThat(SessionVariables.syncStatement(connection, new SessionVariables(), Map.of()))
                .isEqualTo("SET SESSION tx_read_only = DEFAULT");
        assertThat(SessionVariables.syncStatement(connection, new SessionVariables(), Map.of(), true)).isNull();

        connection.copyFromButAccessMode(session);
        assertThat(connection.get("tx_read_only")).isEqualTo("ON");
        assertThat(connection.get("transaction_read_only")).isNull();
        assertThat(connection.get("time_zone")).isEqualTo("+03:00");
        connection.forgetAccessMode();
        assertThat(connection.get("tx_read_only")).isNull();
    }
}
