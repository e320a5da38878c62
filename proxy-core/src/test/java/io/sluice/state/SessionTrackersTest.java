package io.sluice.state;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBufUtil;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class SessionTrackersTest {

    private static List<String> read(String hex) {
        List<String> seen = new ArrayList<>();
        SessionTrackers.read(ByteBufUtil.decodeHexDump(hex), new SessionTrackers.Visitor() {
            @Override
            public void onSystemVariable(String name, String value) {
                seen.add(name + "=" + value);
            }

            @Override
            public void onSchema(String schema) {
                seen.add("schema=" + schema);
            }

            @Override
            public void onGtids(String gtidSet) {
                seen.add("gtids=" + gtidSet);
            }

            @Override
            public void onTransactionCharacteristics(String statements, boolean inTransaction) {
                seen.add("characteristics=" + statements + (inTransaction ? " in transaction" : ""));
            }

            @Override
            public void onEnd(boolean stateChanged, boolean described) {
                seen.add("end " + stateChanged + " " + described);
            }
        });
        return seen;
    }

    @Test
    void readsWhatMariaDbSendsForSetNames() {
        // Captured from MariaDB 10.11 answering MySQL Connector/J's SET NAMES utf8mb4.
        assertThat(read("000000024000000065001d146368617261637465725f7365745f636c69656e7407757466386d6234"
                + "0021186368617261637465725f7365745f636f6e6e656374696f6e07757466386d6234001e1563686172616374"
                + "65725f7365745f726573756c747307757466386d6234020131"))
                .containsExactly("character_set_client=utf8mb4", "character_set_connection=utf8mb4",
                        "character_set_results=utf8mb4", "end true true");
    }

    @Test
    void readsEmptyValuesAndSchema() {
        assertThat(read("00000002400000001c0017156368617261637465725f7365745f726573756c747300020131"))
                .containsExactly("character_set_results=", "end true true");
        // schema entry: type 1, length 4, lenenc "abc"
        assertThat(read("0000000240000000" + "06" + "010403616263" + "")).containsExactly("schema=abc",
                "end false true");
    }

    @Test
    void aStateChangeAloneIsUndescribed() {
        assertThat(read("000000024000000003020131")).containsExactly("end true false");
    }

    /**
     * Captured from MariaDB 10.11 with a binary log: a plain INSERT reports {@code last_gtid} alone; an INSERT whose
     * trigger creates a temporary table reports it with a state-change entry, which {@code last_gtid} does not explain
     * (issue #38: such a session was not pinned on a primary, and its next read went to a replica without the table).
     */
    @Test
    void lastGtidExplainsNoStateChange() {
        assertThat(read("0000000240000000" + "12" + "0010096c6173745f67746964053" + "02d372d37"))
                .containsExactly("last_gtid=0-7-7", "end false false");
        assertThat(read("0000000240000000" + "15" + "0010096c6173745f67746964053" + "02d372d38" + "020131"))
                .containsExactly("last_gtid=0-7-8", "end true false");
        // a variable the statement set does explain it
        assertThat(read("0000000240000000" + "24" + "0010096c6173745f67746964053" + "02d372d39"
                + "000d0974696d655f7a6f6e65022b31" + "020131"))
                .containsExactly("last_gtid=0-7-9", "time_zone=+1", "end true true");
    }

    @Test
    void readsTheCharacteristicsATriggersSetTransactionLeftForTheNextTransaction() {
        // Captured from MariaDB 10.11 (session_track_transaction_info = CHARACTERISTICS) answering an autocommit
        // INSERT into a MyISAM table whose trigger runs SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED, READ ONLY:
        // status 0x4002, one SESSION_TRACK_TRANSACTION_CHARACTERISTICS entry (04), no state-change entry.
        assertThat(read("00010002400000004f044d4c534554205452414e53414354494f4e2049534f4c4154494f4e204c4556454c"
                + "205245414420554e434f4d4d49545445443b20534554205452414e53414354494f4e2052454144204f4e4c593b"))
                .containsExactly("characteristics=SET TRANSACTION ISOLATION LEVEL READ UNCOMMITTED;"
                        + " SET TRANSACTION READ ONLY;", "end false false");
        // BEGIN: the transaction state (05) then the current transaction's characteristics, status 0x4003 (IN_TRANS)
        assertThat(read("000000034000000020" + "050908545f5f5f5f5f5f5f" + "0413125354415254205452414e53414354494f4e3b"))
                .containsExactly("characteristics=START TRANSACTION; in transaction", "end false false");
        // A statement that used them up: an empty entry
        assertThat(read("0000000240000000" + "03040100")).containsExactly("characteristics=", "end false false");
    }

    @Test
    void aPacketCutShortEndsQuietly() {
        assertThat(read("00000002400000006500")).containsExactly("end false false");
        assertThat(read("0000000200")).containsExactly("end false false");
    }

    @Test
    void readsTheGtidOfACommitAsMySqlWritesIt() {
        // MySQL 8.0 with session_track_gtids = OWN_GTID answering an autocommit INSERT: OK 00, 1 row, insert id 0,
        // status 0x4002 (AUTOCOMMIT | SESSION_STATE_CHANGED), no warnings, empty info, then 0x2b bytes of state: one
        // SESSION_TRACK_GTIDS entry (03) of 0x29 bytes, encoding specification 00 (text), then the set, lenenc 0x27.
        assertThat(read("00010002400000002b0329002733653131666134372d373163612d313165312d396533332d6338306161393432"
                + "393536323a3233"))
                .containsExactly("gtids=3e11fa47-71ca-11e1-9e33-c80aa9429562:23", "end false false");
    }

    @Test
    void readsAGtidSetBesideOtherEntriesWithMySqlsLineBreaks() {
        // A variable, a state change, then a set of two sources as Gtid_set's default format writes it (",\n").
        assertThat(read("00000002400000006a000e0a6175746f636f6d6d6974024f4e0201310355005333653131666134372d373163"
                + "612d313165312d396533332d6338306161393432393536323a312d32332c0a35643266313463342d386131622d3131"
                + "65652d623761312d3032343261633132303030323a312d37"))
                .containsExactly("autocommit=ON",
                        "gtids=3e11fa47-71ca-11e1-9e33-c80aa9429562:1-23,\n5d2f14c4-8a1b-11ee-b7a1-0242ac120002:1-7",
                        "end true true");
    }

    @Test
    void anUnknownGtidEncodingOrACutEntryIsSkipped() {
        // Encoding specification 01 (none exists): skipped, the entry after it still read.
        assertThat(read("00000002400000000b" + "0303010161" + "010403616263"))
                .containsExactly("schema=abc", "end false true");
        // The set's length runs past the packet: nothing reported.
        assertThat(read("00000002400000000603040010" + "6161")).containsExactly("end false false");
    }
}
