package io.sluice.relay;

import static io.sluice.testing.MySqlWire.SERVER_SESSION_STATE_CHANGED;
import static io.sluice.testing.MySqlWire.SERVER_STATUS_AUTOCOMMIT;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sluice.testing.MySqlWire;
import java.io.ByteArrayOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A {@code maxRows} limit (decision 191) cuts a response from its first row over the limit to its end and puts the
 * ERR, with that row's sequence id, in its place, wherever the reads split the stream; the responses after it pass
 * as they would (an OK carrying session state rewritten as usual); every buffer is released. When the first row over
 * the limit began in a read already written, the client and backend channels would be closed instead: it never
 * does here, since from the end of the last row the client gets, the next packet is held back until classified.
 */
class RowLimitTest {

    private static final int STATE = SERVER_STATUS_AUTOCOMMIT | SERVER_SESSION_STATE_CHANGED;
    private static final byte[] TIME_ZONE = MySqlWire.systemVariableChange("time_zone", "+01:00");
    private static final byte[] ERR = MySqlWire.err(1226, "42000",
            "Statement refused by query rule cap: more than 2 rows");

    @Test
    void theRowsOverTheLimitGiveWayToTheErrorWhereverTheReadsSplit() {
        splitEverywhere(false);
    }

    @Test
    void aLimitReachedAtTheEndOfOneResultCutsTheFirstRowOfTheNext() {
        splitEverywhere(true);
    }

    private static void splitEverywhere(boolean twoResults) {
        for (boolean deprecateEof : new boolean[] {true, false}) {
            for (boolean stateRewriter : new boolean[] {true, false}) {
                Stream stream = twoResults ? twoResults(deprecateEof, stateRewriter) : stream(deprecateEof,
                        stateRewriter);
                String label = "deprecateEof " + deprecateEof + ", state rewriter " + stateRewriter;
                int closed = 0;
                for (int a = 1; a < stream.bytes.length; a++) {
                    closed += check(stream, deprecateEof, stateRewriter, List.of(a, stream.bytes.length - a),
                            label + ", split at " + a);
                }
                Random random = new Random(191);
                for (int run = 0; run < 300; run++) {
                    List<Integer> chunks = new ArrayList<>();
                    for (int left = stream.bytes.length; left > 0; ) {
                        int n = Math.min(left, 1 + random.nextInt(run % 2 == 0 ? 3 : 40));
                        chunks.add(n);
                        left -= n;
                    }
                    closed += check(stream, deprecateEof, stateRewriter, chunks, label + ", chunks " + chunks);
                }
                if (!twoResults || deprecateEof) {
                    assertThat(closed).as(label + ": the row over the limit is held back, never a close").isZero();
                } else {
                    // the EOF of the second result's head and the row's first bytes held back together: closed
                    // when the row's header is split, and only then
                    assertThat(closed).as(label).isBetween(1, 300);
                }
            }
        }
    }

    /** @return 1 when the channels were closed (the unsafe case), 0 when the client got the expected bytes */
    private static int check(Stream stream, boolean deprecateEof, boolean stateRewriter, List<Integer> chunks,
            String label) {
        EmbeddedChannel client = new EmbeddedChannel();
        EmbeddedChannel backend = new EmbeddedChannel();
        boolean[] closed = new boolean[2];
        byte[] got = relay(stream, deprecateEof, stateRewriter, chunks, client, backend, closed);
        if (closed[0]) {
            assertThat(closed[1]).as(label).isTrue();
            return 1;
        }
        assertThat(got).as(label).isEqualTo(stream.expected);
        return 0;
    }

    /**
     * A result of 5 rows limited to 2 (its end OK carrying state with DEPRECATE_EOF), a SET's OK with state, a result
     * of 3 rows not limited; and what the client is to get.
     */
    private static Stream stream(boolean deprecateEof, boolean stateRewriter) {
        List<byte[]> columns = List.of(MySqlWire.columnDefinition("a", MySqlWire.MYSQL_TYPE_VAR_STRING));
        List<byte[]> rows = List.of(MySqlWire.textRow("1"), MySqlWire.textRow("22"), MySqlWire.textRow("333"),
                MySqlWire.textRow("4444"), MySqlWire.textRow("55555"));
        List<byte[]> limited = new ArrayList<>(MySqlWire.resultSet(deprecateEof, columns, rows,
                SERVER_STATUS_AUTOCOMMIT));
        if (deprecateEof) {
            limited.set(limited.size() - 1, MySqlWire.okWithSessionState(0xFE, 0, 0, STATE, 0, "", TIME_ZONE));
        }
        byte[] setOk = MySqlWire.okWithSessionState(0x00, 0, 0, STATE, 0, "", TIME_ZONE);
        List<byte[]> plain = MySqlWire.resultSet(deprecateEof, columns, rows.subList(0, 3), SERVER_STATUS_AUTOCOMMIT);
        ByteArrayOutputStream in = new ByteArrayOutputStream();
        in.writeBytes(MySqlWire.frames(1, limited));
        in.writeBytes(MySqlWire.frames(1, List.of(setOk)));
        in.writeBytes(MySqlWire.frames(1, plain));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int kept = limited.size() - 1 - rows.size() + 2; // up to and with the 2nd row
        List<byte[]> shown = new ArrayList<>(limited.subList(0, kept));
        shown.add(ERR);
        out.writeBytes(MySqlWire.frames(1, shown));
        out.writeBytes(MySqlWire.frames(1, List.of(stateRewriter
                ? SessionStateFilter.WITHOUT_SESSION_TRACK.filter(setOk) : setOk)));
        out.writeBytes(MySqlWire.frames(1, plain));
        return new Stream(in.toByteArray(), out.toByteArray(), true);
    }

    /**
     * A CALL's two results, of 2 rows and of 3, limited to 2: the first passes whole, the second is cut from its first
     * row; then a result of 3 rows not limited.
     */
    private static Stream twoResults(boolean deprecateEof, boolean stateRewriter) {
        List<byte[]> columns = List.of(MySqlWire.columnDefinition("a", MySqlWire.MYSQL_TYPE_VAR_STRING));
        List<byte[]> rows = List.of(MySqlWire.textRow("1"), MySqlWire.textRow("22"), MySqlWire.textRow("333"));
        List<byte[]> first = MySqlWire.resultSet(deprecateEof, columns, rows.subList(0, 2),
                SERVER_STATUS_AUTOCOMMIT | MySqlWire.SERVER_MORE_RESULTS_EXISTS);
        List<byte[]> second = MySqlWire.resultSet(deprecateEof, columns, rows, SERVER_STATUS_AUTOCOMMIT);
        List<byte[]> limited = new ArrayList<>(first);
        limited.addAll(second);
        List<byte[]> plain = MySqlWire.resultSet(deprecateEof, columns, rows, SERVER_STATUS_AUTOCOMMIT);
        ByteArrayOutputStream in = new ByteArrayOutputStream();
        in.writeBytes(MySqlWire.frames(1, limited));
        in.writeBytes(MySqlWire.frames(1, plain));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<byte[]> shown = new ArrayList<>(first);
        shown.addAll(second.subList(0, second.size() - 1 - rows.size())); // its head, up to its first row
        shown.add(ERR);
        out.writeBytes(MySqlWire.frames(1, shown));
        out.writeBytes(MySqlWire.frames(1, plain));
        return new Stream(in.toByteArray(), out.toByteArray(), false);
    }

    private record Stream(byte[] bytes, byte[] expected, boolean withSet) {
    }

    /** Feeds the stream to a tracker and rewriter in reads of the given sizes; returns what the client got. */
    private static byte[] relay(Stream stream, boolean deprecateEof, boolean stateRewriter, List<Integer> chunks,
            EmbeddedChannel client, EmbeddedChannel backend, boolean[] closed) {
        int[] begun = {0};
        ResponseTracker[] holder = new ResponseTracker[1];
        OkRewriter rewriter = new OkRewriter();
        ResponseTracker tracker = new ResponseTracker(deprecateEof, false, new ResponseListener() {
            @Override
            public void onLocalInfileRequest() {
            }

            @Override
            public void onResponseComplete() {
                if (begun[0] < (stream.withSet() ? 3 : 2)) {
                    holder[0].begin(begun[0] == 1 && stream.withSet() ? ResponseKind.SINGLE : ResponseKind.RESULT);
                    begun[0]++;
                }
            }
        });
        holder[0] = tracker;
        if (stateRewriter) {
            tracker.sessionState().follow(true);
            rewriter.use(SessionStateFilter.WITHOUT_SESSION_TRACK);
            tracker.sessionState().rewriteOks(rewriter);
        }
        tracker.begin(ResponseKind.RESULT);
        java.util.concurrent.atomic.AtomicInteger cuts = new java.util.concurrent.atomic.AtomicInteger();
        tracker.watchResponse(new RowLimit(2, "cap", cuts::incrementAndGet, rewriter, client, backend));
        begun[0] = 1;
        List<ByteBuf> reads = new ArrayList<>();
        int at = 0;
        for (int n : chunks) {
            ByteBuf read = Unpooled.buffer(n).writeBytes(stream.bytes(), at, n);
            reads.add(read);
            at += n;
            tracker.scan(read);
            rewriter.write(read, client);
            client.flush();
        }
        assertThat(tracker.isIdle()).as("every response followed to its end").isTrue();
        assertThat(cuts.get()).as("the cut counted once, or the channels closed").isEqualTo(client.isOpen() ? 1 : 0);
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        for (ByteBuf written; (written = client.readOutbound()) != null; ) {
            got.writeBytes(ByteBufUtil.getBytes(written));
            written.release();
        }
        rewriter.release();
        closed[0] = !client.isOpen();
        closed[1] = !backend.isOpen();
        for (ByteBuf read : reads) {
            assertThat(read.refCnt()).as("every read released").isZero();
        }
        client.finishAndReleaseAll();
        backend.finishAndReleaseAll();
        return got.toByteArray();
    }
}
