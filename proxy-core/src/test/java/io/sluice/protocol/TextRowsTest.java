package io.sluice.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
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
        ByteBuf frame = Unpooled.buffer(4 + payload.length);
        frame.writeMediumLE(payload.length).writeByte(seq++).writeBytes(payload);
        frames.add(frame);
    }

    private static byte[] lenencStrings(String... values) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (String v : values) {
            if (v == null) {
                out.write(0xFB);
                continue;
            }
            byte[] b = v.getBytes(StandardCharsets.UTF_8);
            if (b.length < 0xFB) {
                out.write(b.length);
            } else {
                out.write(0xFC);
                out.write(b.length);
                out.write(b.length >>> 8);
            }
            out.writeBytes(b);
        }
        return out.toByteArray();
    }

    private static byte[] eof() {
        return new byte[] {(byte) 0xFE, 0, 0, 2, 0};
    }

    private static byte[] okEof() {
        return new byte[] {(byte) 0xFE, 0, 0, 2, 0, 0, 0};
    }

    private void metadata(boolean deprecateEof, int columns) {
        seq = 1;
        packet(new byte[] {(byte) columns});
        for (int i = 0; i < columns; i++) {
            packet(lenencStrings("def", "", "", "", "c" + i, "c" + i));
        }
        if (!deprecateEof) {
            packet(eof());
        }
    }

    private void end(boolean deprecateEof) {
        packet(deprecateEof ? okEof() : eof());
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void readsTheRow(boolean deprecateEof) {
        metadata(deprecateEof, 5);
        String longValue = "x".repeat(300);
        packet(lenencStrings("shop", "utf8mb4", longValue, "utf8mb4", ""));
        end(deprecateEof);

        assertThat(TextRows.single(frames, deprecateEof, 5))
                .containsExactly("shop", "utf8mb4", longValue, "utf8mb4", "");
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void readsNullsAsNull(boolean deprecateEof) {
        metadata(deprecateEof, 2);
        packet(lenencStrings(null, "latin1"));
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
        packet(new byte[] {(byte) 0xFF, 0x7A, 0x04, '#', '4', '2', '0', '0', '0', 'n', 'o'});

        assertThat(TextRows.single(frames, deprecateEof, 2)).isNull();
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void anErrInsteadOfTheRowIsNull(boolean deprecateEof) {
        metadata(deprecateEof, 1);
        packet(new byte[] {(byte) 0xFF, 0x7A, 0x04, '#', '4', '2', '0', '0', '0', 'n', 'o'});

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
