package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.Packets.BackendError;
import io.sluice.testing.MySqlWire;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** ERR packets as servers send them, with and without the SQLSTATE marker. */
class PacketsTest {

    @Test
    void readsAnErrWithItsSqlState() {
        BackendError error = parse(MySqlWire.err(1049, "42000", "Unknown database 'nope'"));

        assertThat(error).isEqualTo(new BackendError(1049, "42000", "Unknown database 'nope'"));
    }

    @Test
    void readsAnErrWithoutTheSqlStateMarkerAsMariaDbSendsItInPlaceOfAGreeting() {
        // What MariaDB writes when max_connections is reached before the handshake: code 1040 and the message, no '#'.
        byte[] tooMany = MySqlWire.concat(new byte[] {(byte) 0xFF, 0x10, 0x04},
                "Too many connections".getBytes(StandardCharsets.UTF_8));

        BackendError error = parse(tooMany);

        assertThat(error).isEqualTo(new BackendError(1040, "08004", "Too many connections"));
    }

    @Test
    void anErrWithoutMarkerOfAnotherCodeGetsHy000() {
        byte[] err = MySqlWire.concat(new byte[] {(byte) 0xFF, 0x6A, 0x04},
                "Host '10.0.0.9' is not allowed to connect".getBytes(StandardCharsets.UTF_8));

        assertThat(parse(err)).isEqualTo(new BackendError(1130, "HY000", "Host '10.0.0.9' is not allowed to connect"));
    }

    @Test
    void aShortErrIsReadAsFarAsItGoes() {
        assertThat(parse(new byte[] {(byte) 0xFF, 0x10, 0x04, '#', '0'})).isEqualTo(new BackendError(1040, "08004",
                "#0"));
        assertThat(parse(new byte[] {(byte) 0xFF})).isEqualTo(new BackendError(0, "HY000", ""));
    }

    private static BackendError parse(byte[] payload) {
        ByteBuf buf = Unpooled.wrappedBuffer(payload);
        try {
            return Packets.parseErr(buf);
        } finally {
            buf.release();
        }
    }
}
