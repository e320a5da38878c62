package io.sluice.relay;

import static io.sluice.testing.MySqlWire.SERVER_SESSION_STATE_CHANGED;
import static io.sluice.testing.MySqlWire.SERVER_STATUS_AUTOCOMMIT;
import static io.sluice.testing.MySqlWire.SERVER_STATUS_IN_TRANS;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.testing.MySqlWire;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The tracker and the rewriter together replace every OK packet that carries session state, and nothing else, with
 * what the client is to see, wherever the reads split the stream: inside a header, inside the first bytes that decide
 * whether a packet is such an OK, inside its payload, or across several reads. Every buffer is released.
 */
class OkRewriterTest {

    private static final int STATE = SERVER_STATUS_AUTOCOMMIT | SERVER_SESSION_STATE_CHANGED;
    private static final byte[] TIME_ZONE = MySqlWire.systemVariableChange("time_zone", "+01:00");
    private static final String ROWS_MATCHED = "Rows matched: 1  Changed: 1  Warnings: 0";

    @Test
    void aClientWithoutSessionTrackSeesOkPacketsAsTheServerWritesThemForIt() {
        for (boolean deprecateEof : new boolean[] {true, false}) {
            Stream stream = stream(deprecateEof);
            assertThat(stream.expected.length).isLessThan(stream.bytes.length);
            for (int a = 1; a < stream.bytes.length; a++) {
                assertThat(relay(stream, deprecateEof, List.of(a, stream.bytes.length - a)))
                        .as("deprecateEof %s, split at %d", deprecateEof, a).isEqualTo(stream.expected);
            }
            Random random = new Random(26);
            for (int run = 0; run < 300; run++) {
                List<Integer> chunks = new ArrayList<>();
                for (int left = stream.bytes.length; left > 0; ) {
                    int n = Math.min(left, 1 + random.nextInt(run % 2 == 0 ? 3 : 40));
                    chunks.add(n);
                    left -= n;
                }
                assertThat(relay(stream, deprecateEof, chunks)).as("deprecateEof %s, chunks %s", deprecateEof, chunks)
                        .isEqualTo(stream.expected);
            }
        }
    }

    @Test
    void theStrippedPacketKeepsItsCountsStatusWarningsAndInfo() {
        byte[] withState = MySqlWire.okWithSessionState(0x00, 3, 7, STATE | SERVER_STATUS_IN_TRANS, 2, "note",
                TIME_ZONE);
        assertThat(SessionStateFilter.WITHOUT_SESSION_TRACK.filter(withState)).isEqualTo(MySqlWire.payload().int1(0)
                .lenenc(3).lenenc(7).int2(SERVER_STATUS_AUTOCOMMIT | SERVER_STATUS_IN_TRANS).int2(2).lenencStr("note")
                .toBytes());
        byte[] noInfo = MySqlWire.okWithSessionState(0xFE, 0, 0, STATE, 0, "", TIME_ZONE);
        assertThat(SessionStateFilter.WITHOUT_SESSION_TRACK.filter(noInfo))
                .isEqualTo(MySqlWire.okEof(SERVER_STATUS_AUTOCOMMIT));
    }

    /** Five pipelined COM_QUERY responses, with and without session state, and what the client is to get. */
    private static Stream stream(boolean deprecateEof) {
        List<byte[]> columns = List.of(MySqlWire.columnDefinition("a", MySqlWire.MYSQL_TYPE_VAR_STRING));
        List<byte[]> rows = List.of(MySqlWire.textRow("x"), MySqlWire.textRow("yy"));
        byte[] setOk = MySqlWire.okWithSessionState(0x00, 0, 0, STATE, 0, "", TIME_ZONE);
        byte[] updateOk = MySqlWire.okWithSessionState(0x00, 1, 0, SERVER_STATUS_AUTOCOMMIT, 0, ROWS_MATCHED, null);
        byte[] infoOk = MySqlWire.okWithSessionState(0x00, 1, 0, STATE, 1, ROWS_MATCHED, TIME_ZONE);
        List<byte[]> result = MySqlWire.resultSet(deprecateEof, columns, rows, SERVER_STATUS_AUTOCOMMIT);
        List<byte[]> stateResult = new ArrayList<>(result);
        Set<byte[]> withState = Collections.newSetFromMap(new IdentityHashMap<>());
        withState.addAll(List.of(setOk, infoOk));
        if (deprecateEof) { // the OK that ends the rows carries state (SELECT @v := 1)
            byte[] end = MySqlWire.okWithSessionState(0xFE, 0, 0, STATE, 0, "", TIME_ZONE);
            stateResult.set(stateResult.size() - 1, end);
            withState.add(end);
        }
        List<List<byte[]>> responses = List.of(List.of(setOk), result, List.of(updateOk), stateResult,
                List.of(infoOk));
        ByteArrayOutputStream in = new ByteArrayOutputStream();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (List<byte[]> response : responses) {
            in.writeBytes(MySqlWire.frames(1, response));
            List<byte[]> shown = new ArrayList<>();
            for (byte[] p : response) {
                shown.add(withState.contains(p) ? SessionStateFilter.WITHOUT_SESSION_TRACK.filter(p) : p);
            }
            out.writeBytes(MySqlWire.frames(1, shown));
        }
        return new Stream(in.toByteArray(), out.toByteArray(), responses.size());
    }

    private record Stream(byte[] bytes, byte[] expected, int responses) {
    }

    /** Feeds the stream to a tracker and rewriter in reads of the given sizes; returns what the client got. */
    private static byte[] relay(Stream stream, boolean deprecateEof, List<Integer> chunks) {
        EmbeddedChannel client = new EmbeddedChannel();
        int[] begun = {0};
        ResponseTracker[] holder = new ResponseTracker[1];
        ResponseTracker tracker = new ResponseTracker(deprecateEof, false, new ResponseListener() {
            @Override
            public void onLocalInfileRequest() {
            }

            @Override
            public void onResponseComplete() {
                if (begun[0] < stream.responses()) {
                    holder[0].begin(ResponseKind.RESULT);
                    begun[0]++;
                }
            }
        });
        holder[0] = tracker;
        tracker.sessionState().follow(true);
        OkRewriter rewriter = new OkRewriter();
        rewriter.use(SessionStateFilter.WITHOUT_SESSION_TRACK);
        tracker.sessionState().rewriteOks(rewriter);
        tracker.begin(ResponseKind.RESULT);
        begun[0] = 1;
        List<ByteBuf> reads = new ArrayList<>();
        int at = 0;
        for (int n : chunks) {
            ByteBuf read = Unpooled.buffer(n).writeBytes(stream.bytes(), at, n);
            reads.add(read);
            at += n;
            tracker.scan(read);
            rewriter.write(read, client);
            client.flush(); // as the relay does once per read batch
        }
        assertThat(tracker.isIdle()).as("every response followed to its end").isTrue();
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        for (ByteBuf written; (written = client.readOutbound()) != null; ) {
            got.writeBytes(ByteBufUtil.getBytes(written));
            written.release();
        }
        rewriter.release();
        for (ByteBuf read : reads) {
            assertThat(read.refCnt()).as("every read released").isZero();
        }
        client.finishAndReleaseAll();
        return got.toByteArray();
    }
}
