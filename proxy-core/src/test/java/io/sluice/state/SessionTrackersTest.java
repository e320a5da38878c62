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

    @Test
    void aPacketCutShortEndsQuietly() {
        assertThat(read("00000002400000006500")).containsExactly("end false false");
        assertThat(read("0000000200")).containsExactly("end false false");
    }
}
