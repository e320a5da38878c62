package io.sluice.relay;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.ProtocolException;
import io.sluice.protocol.ServerStatus;
import io.sluice.testing.MySqlWire;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The tracker's digest of the column definitions a client receives (MariaDB's metadata caching, issue #31): the same
 * value however the bytes are split, the same as a digest of the whole packets (what Sluice's own prepare computes),
 * different for other definitions; a result that leaves them out is seen, and refused where they are required.
 */
class DefinitionsDigestTrackerTest {
    private static final int A = ServerStatus.SERVER_STATUS_AUTOCOMMIT;
    private static final byte[] ID = MySqlWire.columnDefinition("id", 3);
    private static final byte[] V_INT = MySqlWire.columnDefinition("v", 3);
    private static final byte[] V_TEXT = MySqlWire.columnDefinition("db", "t", "v", 255, 80, 253);

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aPrepareAndAnExecuteThatCarryTheSameDefinitionsHaveTheDigestOfTheirPackets(boolean deprecateEof) {
        long whole = digestOf(ID, V_INT);
        List<byte[]> prepare = new ArrayList<>(List.of(MySqlWire.prepareOk(7, 2, 1, 0),
                MySqlWire.columnDefinition("?", 3)));
        if (!deprecateEof) {
            prepare.add(MySqlWire.eof(A));
        }
        prepare.add(ID);
        prepare.add(V_INT);
        if (!deprecateEof) {
            prepare.add(MySqlWire.eof(A));
        }
        for (int split = 1; split <= 7; split++) {
            ResponseOutcome outcome = follow(deprecateEof, ResponseKind.PREPARE, MySqlWire.frames(1, prepare), split,
                    false);
            assertThat(outcome.definitionsSent()).isTrue();
            assertThat(outcome.definitionsDigest()).as("split every %d bytes", split).isEqualTo(whole);
        }
        ResponseOutcome executed = follow(deprecateEof, ResponseKind.BINARY_RESULT,
                result(deprecateEof, true, ID, V_INT), 3, false);
        assertThat(executed.definitionsSent()).isTrue();
        assertThat(executed.definitionsDigest()).isEqualTo(whole).isNotEqualTo(digestOf(ID, V_TEXT));
    }

    /**
     * What rows are decoded by goes in, names do not: a table in a database named otherwise on another server (a
     * {@code databaseName} alias), or a column labelled otherwise, reads the same with the client's definitions.
     */
    @org.junit.jupiter.api.Test
    void namesDoNotCountTypesLengthsAndCharacterSetsDo() {
        long here = digestOf(MySqlWire.columnDefinition("app_a", "t", "v", 45, 80, 253));
        String longSchema = "app_" + "x".repeat(300); // a 3-byte length (0xFC)
        assertThat(digestOf(MySqlWire.columnDefinition(longSchema, "orders", "w", 45, 80, 253))).isEqualTo(here);
        assertThat(digestOf(MySqlWire.columnDefinition("app_a", "t", "v", 46, 80, 253))).isNotEqualTo(here);
        assertThat(digestOf(MySqlWire.columnDefinition("app_a", "t", "v", 45, 81, 253))).isNotEqualTo(here);
        assertThat(digestOf(MySqlWire.columnDefinition("app_a", "t", "v", 45, 80, 3))).isNotEqualTo(here);
        // Two columns are not one column: the packets do not run together.
        assertThat(digestOf(V_TEXT, V_TEXT)).isNotEqualTo(digestOf(V_TEXT));

        // Streamed through the tracker a byte at a time, a long name and all: the same as the whole packets.
        byte[] aliased = MySqlWire.columnDefinition(longSchema, "orders", "w", 45, 80, 253);
        ResponseOutcome streamed = follow(true, ResponseKind.BINARY_RESULT, result(true, true, ID, aliased), 1,
                false);
        assertThat(streamed.definitionsDigest()).isEqualTo(digestOf(ID, aliased))
                .isEqualTo(digestOf(ID, MySqlWire.columnDefinition("app_a", "t", "v", 45, 80, 253)));
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aResultWithoutDefinitionsSendsNoneAndFailsWhereTheyAreRequired(boolean deprecateEof) {
        byte[] without = result(deprecateEof, false, ID, V_INT);
        ResponseOutcome outcome = follow(deprecateEof, ResponseKind.BINARY_RESULT, without, 5, false);
        assertThat(outcome.definitionsSent()).isFalse();

        assertThatThrownBy(() -> follow(deprecateEof, ResponseKind.BINARY_RESULT, without, 5, true))
                .isInstanceOf(ProtocolException.class).hasMessageContaining("metadata follows 0");
        // Required and carried: nothing to object to.
        assertThat(follow(deprecateEof, ResponseKind.BINARY_RESULT, result(deprecateEof, true, ID, V_TEXT), 5, true)
                .definitionsDigest()).isEqualTo(digestOf(ID, V_TEXT));
    }

    /** A binary result of one row, with or without its definitions (MariaDB's "metadata follows"). */
    private static byte[] result(boolean deprecateEof, boolean metadataFollows, byte[]... definitions) {
        List<byte[]> packets = new ArrayList<>();
        packets.add(MySqlWire.columnCount(definitions.length, metadataFollows));
        if (metadataFollows) {
            packets.addAll(List.of(definitions));
        }
        if (!deprecateEof) {
            packets.add(MySqlWire.eof(A));
        }
        packets.add(MySqlWire.binaryRow(1, 2));
        packets.add(MySqlWire.endOfRows(deprecateEof, A));
        return MySqlWire.frames(1, packets);
    }

    private static long digestOf(byte[]... payloads) {
        ColumnDefinitionsDigest digest = new ColumnDefinitionsDigest();
        for (byte[] payload : payloads) {
            digest.packet(Unpooled.wrappedBuffer(payload));
        }
        return digest.value();
    }

    /** Follows {@code bytes} as one response, scanned {@code split} bytes at a time; its outcome. */
    private static ResponseOutcome follow(boolean deprecateEof, ResponseKind kind, byte[] bytes, int split,
            boolean required) {
        int[] completed = new int[1];
        ResponseTracker tracker = new ResponseTracker(deprecateEof, true, new ResponseListener() {
            @Override
            public void onLocalInfileRequest() {
            }

            @Override
            public void onResponseComplete() {
                completed[0]++;
            }
        });
        tracker.begin(kind);
        tracker.digestDefinitions(required);
        for (int i = 0; i < bytes.length; i += split) {
            ByteBuf part = Unpooled.wrappedBuffer(bytes, i, Math.min(split, bytes.length - i));
            tracker.scan(part);
        }
        assertThat(completed[0]).isEqualTo(1);
        return tracker.outcome();
    }
}
