package io.sluice.pooling;

import static io.sluice.testing.MySqlWire.SERVER_SESSION_STATE_CHANGED;
import static io.sluice.testing.MySqlWire.SERVER_STATUS_AUTOCOMMIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.sluice.state.TrackerDefaults;
import io.sluice.testing.MySqlWire;
import org.junit.jupiter.api.Test;

/**
 * A client that negotiated CLIENT_SESSION_TRACK is shown, of what Sluice's trackers report, only what its own
 * trackers would: the server's defaults until it changes them.
 */
class ClientTrackersTest {
    private static final int STATE = SERVER_STATUS_AUTOCOMMIT | SERVER_SESSION_STATE_CHANGED;
    private static final TrackerDefaults MARIADB_DEFAULTS = TrackerDefaults.of(
            "autocommit,character_set_client,character_set_connection,character_set_results,time_zone", "ON", "OFF");

    @Test
    void keepsOnlyTheVariablesSchemaAndStateChangeTheClientTracks() {
        ClientTrackers trackers = new ClientTrackers();
        trackers.defaults(MARIADB_DEFAULTS);
        byte[] reported = ok(MySqlWire.concat(variable("time_zone", "+01:00"), variable("sql_mode", "ANSI"),
                schema("db2"), stateChange()));
        assertThat(trackers.filter(reported)).isEqualTo(ok(MySqlWire.concat(variable("time_zone", "+01:00"),
                schema("db2"))));
    }

    @Test
    void anOkLeftWithNothingToReportIsThePlainOne() {
        ClientTrackers trackers = new ClientTrackers();
        trackers.defaults(MARIADB_DEFAULTS);
        byte[] reported = ok(MySqlWire.concat(variable("sql_mode", "ANSI"), stateChange()));
        assertThat(trackers.filter(reported)).isEqualTo(MySqlWire.ok(SERVER_STATUS_AUTOCOMMIT));
    }

    @Test
    void severalPairsInOneEntryAreFilteredPairByPair() {
        ClientTrackers trackers = new ClientTrackers();
        trackers.defaults(MARIADB_DEFAULTS);
        byte[] pairs = MySqlWire.payload().lenencStr("sql_mode").lenencStr("ANSI").lenencStr("autocommit")
                .lenencStr("OFF").toBytes();
        byte[] entry = MySqlWire.payload().int1(0).lenencBytes(pairs).toBytes();
        assertThat(trackers.filter(ok(entry))).isEqualTo(ok(variable("autocommit", "OFF")));
    }

    @Test
    void theTransactionReportsSluiceAsksForAreShownOnlyAsFarAsTheClientTurnedThemOn() {
        ClientTrackers trackers = new ClientTrackers();
        trackers.defaults(MARIADB_DEFAULTS);
        byte[] state = MySqlWire.payload().int1(5).lenencBytes(MySqlWire.payload().lenencStr("T_______").toBytes())
                .toBytes();
        byte[] characteristics = MySqlWire.payload().int1(4)
                .lenencBytes(MySqlWire.payload().lenencStr("START TRANSACTION;").toBytes()).toBytes();
        byte[] reported = ok(MySqlWire.concat(state, characteristics));
        assertThat(trackers.filter(reported)).isEqualTo(MySqlWire.ok(SERVER_STATUS_AUTOCOMMIT));
        trackers.changed("session_track_transaction_info", "STATE");
        assertThat(trackers.filter(reported)).isEqualTo(ok(state));
        trackers.changed("session_track_transaction_info", "CHARACTERISTICS");
        assertThat(trackers.filter(reported)).isEqualTo(reported);
        trackers.forget();
        trackers.defaults(MARIADB_DEFAULTS);
        assertThat(trackers.filter(reported)).isEqualTo(MySqlWire.ok(SERVER_STATUS_AUTOCOMMIT));
    }

    @Test
    void whatTheClientTurnsOnItSees() {
        ClientTrackers trackers = new ClientTrackers();
        trackers.defaults(MARIADB_DEFAULTS);
        trackers.changed("session_track_state_change", "ON");
        trackers.changed("session_track_system_variables", "*");
        byte[] reported = ok(MySqlWire.concat(variable("sql_mode", "ANSI"), stateChange()));
        assertThat(trackers.filter(reported)).isEqualTo(reported);
        trackers.changed("session_track_schema", "OFF");
        assertThat(trackers.filter(ok(schema("db2")))).isEqualTo(MySqlWire.ok(SERVER_STATUS_AUTOCOMMIT));
    }

    @Test
    void untilAConnectionToldTheDefaultsEverythingIsShown() {
        ClientTrackers trackers = new ClientTrackers();
        byte[] reported = ok(MySqlWire.concat(variable("sql_mode", "ANSI"), stateChange()));
        assertThat(trackers.filter(reported)).isSameAs(reported);
        trackers.defaults(MARIADB_DEFAULTS);
        trackers.forget();
        assertThat(trackers.filter(reported)).isSameAs(reported);
    }

    /** MySQL 8.0's defaults: Sluice turned {@code session_track_gtids} on, the client's connection has it OFF. */
    private static final TrackerDefaults MYSQL_DEFAULTS = TrackerDefaults.of("time_zone,autocommit", "ON", "OFF",
            "OFF");
    private static final String GTID = "3e11fa47-71ca-11e1-9e33-c80aa9429562:23";

    @Test
    void theGtidOfACommitIsHiddenFromAClientWhoseServerTracksNone() {
        ClientTrackers trackers = new ClientTrackers();
        trackers.defaults(MYSQL_DEFAULTS);
        assertThat(trackers.filter(ok(MySqlWire.gtidsChange(GTID))))
                .isEqualTo(MySqlWire.ok(SERVER_STATUS_AUTOCOMMIT));
        byte[] reported = ok(MySqlWire.concat(variable("autocommit", "OFF"), MySqlWire.gtidsChange(GTID)));
        assertThat(trackers.filter(reported)).isEqualTo(ok(variable("autocommit", "OFF")));
    }

    @Test
    void aClientThatTurnsGtidsOnSeesThemAndOffAgainDoesNot() {
        ClientTrackers trackers = new ClientTrackers();
        trackers.defaults(MYSQL_DEFAULTS);
        byte[] reported = ok(MySqlWire.gtidsChange(GTID));
        trackers.changed("session_track_gtids", "OWN_GTID");
        assertThat(trackers.filter(reported)).isSameAs(reported);
        trackers.changed("session_track_gtids", "OFF");
        assertThat(trackers.filter(reported)).isEqualTo(MySqlWire.ok(SERVER_STATUS_AUTOCOMMIT));
    }

    @Test
    void onMySqlWithGtidsTrackedByDefaultTheClientSeesThemAndOnMariaDbAnyGtidReportIsTheClients() {
        byte[] reported = ok(MySqlWire.gtidsChange(GTID));
        ClientTrackers mySql = new ClientTrackers();
        mySql.defaults(TrackerDefaults.of("time_zone", "ON", "OFF", "OWN_GTID"));
        assertThat(mySql.filter(reported)).isSameAs(reported);
        ClientTrackers mariaDb = new ClientTrackers();
        mariaDb.defaults(MARIADB_DEFAULTS);
        assertThat(mariaDb.filter(reported)).isSameAs(reported);
    }

    private static byte[] ok(byte[] state) {
        return MySqlWire.okWithSessionState(0x00, 0, 0, STATE, 0, "", state);
    }

    private static byte[] variable(String name, String value) {
        return MySqlWire.systemVariableChange(name, value);
    }

    private static byte[] schema(String name) {
        return MySqlWire.payload().int1(1).lenencBytes(MySqlWire.payload().lenencStr(name).toBytes()).toBytes();
    }

    private static byte[] stateChange() {
        return MySqlWire.payload().int1(2).lenencBytes(MySqlWire.payload().lenencStr("1").toBytes()).toBytes();
    }
}
