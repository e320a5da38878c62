package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.testing.MySqlWire;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link TextRows.single}: reading the one row of a session check such as {@code SELECT DATABASE(), ...}. */
class TextRowsTest {
    private final List<ByteBuf> frames = new ArrayList<>();
    private int seq;

    @AfterEach
    void release() {
        for (ByteBuf frame : frames) {
            assertThat(frame.readerIndex()).as("singleRow borrows the frames").isZero();
            assertThat(frame.release()).isTrue();
        }
    }

    private void packet(byte[] payload) {
        frames.add(Unpooled.wrappedBuffer(MySqlWire.frame(seq++, payload)));
    }

    private void metadata(boolean deprecateEof, int columns) {
        seq = 1;
        packet(MySqlWire.columnCount(columns));
        for (int i = 0; i < columns; i++) {
            packet(MySqlWire.columnDefinition("c" + i, MySqlWire.MYSQL_TYPE_VAR_STRING));
        }
        if (!deprecateEof) {
            packet(MySqlWire.eof(MySqlWire.SERVER_STATUS_AUTOCOMMIT));
        }
    }

    private void end(boolean deprecateEof) {
        packet(MySqlWire.endOfRows(deprecateEof, MySqlWire.SERVER_STATUS_AUTOCOMMIT));
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void readsTheRow(boolean deprecateEof) {
        metadata(deprecateEof, 5);
        String longValue = "x".repeat(300);
        packet(MySqlWire.textRow("shop", "utf8mb4", longValue, "utf8mb4", ""));
        end(deprecateEof);

        assertThat(TextRows.single(frames, deprecateEof, 5))
                .containsExactly("shop", "utf8mb4", longValue, "utf8mb4", "");
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void readsNullsAsNull(boolean deprecateEof) {
        metadata(deprecateEof, 2);
        packet(MySqlWire.textRow(null, "latin1"));
        end(deprecateEof);

        assertThat(TextRows.single(frames, deprecateEof, 2)).containsExactly(null, "latin1");
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void noRowIsNull(boolean deprecateEof) {
        metadata(deprecateEof, 2);
        end(deprecateEof);

        assertThat(TextRows.single(frames, deprecateEof, 2)).isNull();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void anErrIsNull(boolean deprecateEof) {
        seq = 1;
        packet(MySqlWire.err(1146, "42000", "no"));

        assertThat(TextRows.single(frames, deprecateEof, 2)).isNull();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void anErrInsteadOfTheRowIsNull(boolean deprecateEof) {
        metadata(deprecateEof, 1);
        packet(MySqlWire.err(1146, "42000", "no"));

        assertThat(TextRows.single(frames, deprecateEof, 1)).isNull();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void tooFewPacketsIsNull(boolean deprecateEof) {
        metadata(deprecateEof, 3);

        assertThat(TextRows.single(frames, deprecateEof, 3)).isNull();
        assertThat(TextRows.single(List.of(), deprecateEof, 3)).isNull();
    }
}
