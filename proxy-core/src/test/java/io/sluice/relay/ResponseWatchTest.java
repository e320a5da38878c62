package io.sluice.relay;

import static io.sluice.relay.ResponseKind.RESULT;
import static io.sluice.relay.ResponseScript.AUTOCOMMIT;
import static io.sluice.relay.ResponseScript.MORE_RESULTS;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.relay.ResponsePacket.Role;
import io.sluice.testing.MySqlWire;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The seam features hang off the {@link ResponseTracker} by: a {@link ResponseWatch} hears the packets the tracker
 * classifies, in stream order and wherever the reads cut them; one that watches rows hears every row, with where it
 * starts and ends in the read (what a row limit needs to cut a result short), and one added for a response hears
 * that response only.
 */
class ResponseWatchTest {

    private static final int A = AUTOCOMMIT;

    private static List<byte[]> rows(int n) {
        return IntStream.range(0, n).mapToObj(i -> MySqlWire.textRow("row" + i, String.valueOf(i))).toList();
    }

    /** Writes down what it hears: roles with the rows before them, and where asked-for packets end. */
    private static final class Recording implements ResponseWatch {
        final boolean rowsToo;
        final List<String> heard = new ArrayList<>();
        final List<Integer> rowEnds = new ArrayList<>();
        int responses;
        private boolean inRow;

        Recording(boolean rowsToo) {
            this.rowsToo = rowsToo;
        }

        @Override
        public boolean watchesRows() {
            return rowsToo;
        }

        @Override
        public boolean packet(ResponsePacket packet) {
            heard.add(packet.role() + "@" + packet.rows());
            inRow = packet.role() == Role.ROW;
            return inRow;
        }

        @Override
        public void packetEnded(int end, int sequenceId) {
            if (inRow) {
                rowEnds.add(end);
                inRow = false;
            }
        }

        @Override
        public void responseEnded(ResponseOutcome outcome) {
            responses++;
            heard.add("END");
        }
    }

    private static ResponseScript twoResultSets(boolean deprecateEof) {
        return new ResponseScript("two result sets", deprecateEof)
                .command(RESULT).resultSet(2, rows(10), A | MORE_RESULTS).resultSet(1, rows(3), A).done()
                .command(RESULT).ok(1, 0, A, "").done();
    }

    private static List<String> expectedWithRows() {
        List<String> expected = new ArrayList<>();
        expected.add("COLUMN_COUNT@0");
        expected.addAll(Collections.nCopies(2, "COLUMN_DEFINITION@0"));
        IntStream.range(0, 10).forEach(r -> expected.add("ROW@" + r));
        expected.add("END_OF_ROWS@10");
        expected.add("COLUMN_COUNT@10");
        expected.add("COLUMN_DEFINITION@10");
        IntStream.range(10, 13).forEach(r -> expected.add("ROW@" + r));
        expected.add("END_OF_ROWS@13");
        expected.add("END");
        expected.add("STATEMENT_OK@0");
        expected.add("END");
        return expected;
    }

    /** Feeds the script in pieces cut at random (seeded) places, one read each. */
    private static void feed(ResponseTracker tracker, byte[] bytes, long seed) {
        Random random = new Random(seed);
        for (int at = 0; at < bytes.length; ) {
            int n = seed == 0 ? bytes.length : 1 + random.nextInt(Math.min(bytes.length - at, 40));
            ByteBuf buf = Unpooled.wrappedBuffer(bytes, at, n);
            try {
                tracker.scan(buf);
            } finally {
                buf.release();
            }
            at += n;
        }
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void aWatchOfRowsHearsEveryRowWhereverTheReadsCut(boolean deprecateEof) {
        for (long seed : new long[] {0, 1, 2, 3, 43}) {
            ResponseScript script = twoResultSets(deprecateEof);
            PipelinedTracker pipeline = new PipelinedTracker(deprecateEof, false, new CountingListener());
            Recording watch = new Recording(true);
            pipeline.tracker.watch(watch);
            script.kinds.forEach(pipeline::expect);
            feed(pipeline.tracker, script.bytes(), seed);

            assertThat(watch.heard).as("seed %d", seed).containsExactlyElementsOf(expectedWithRows());
            assertThat(watch.responses).isEqualTo(2);
            assertThat(pipeline.tracker.isIdle()).isTrue();
        }
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void rowEndsLetAWatchCutAResultAfterItsFirstRows(boolean deprecateEof) {
        List<byte[]> rows = rows(6);
        ResponseScript script = new ResponseScript("six rows", deprecateEof)
                .command(RESULT).resultSet(2, rows, A).done();
        PipelinedTracker pipeline = new PipelinedTracker(deprecateEof, false, new CountingListener());
        Recording watch = new Recording(true);
        pipeline.tracker.watch(watch);
        script.kinds.forEach(pipeline::expect);
        byte[] bytes = script.bytes();
        feed(pipeline.tracker, bytes, 0);

        // The metadata, then two rows: where the second row ends is where a limit of 2 rows cuts the read.
        int metadataLength = new ResponseScript("metadata", deprecateEof).command(RESULT).metadata(2, A).size();
        int twoRows = metadataLength + 2 * 4 + rows.get(0).length + rows.get(1).length;
        assertThat(watch.rowEnds).hasSize(6);
        assertThat(watch.rowEnds.get(1)).isEqualTo(twoRows);
        assertThat(watch.rowEnds.get(5)).isEqualTo(bytes.length - (deprecateEof ? 4 + 7 : 4 + 5));
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void aWatchOfOneResponseHearsThatResponseOnly(boolean deprecateEof) {
        ResponseScript script = new ResponseScript("two", deprecateEof)
                .command(RESULT).ok(3, 0, A, "").done()
                .command(RESULT).resultSet(1, rows(4), A).done();
        CountingListener counting = new CountingListener();
        PipelinedTracker pipeline = new PipelinedTracker(deprecateEof, false, counting);
        Recording watch = new Recording(false);
        script.kinds.forEach(pipeline::expect);
        pipeline.tracker.watchResponse(watch);
        feed(pipeline.tracker, script.bytes(), 0);

        assertThat(watch.heard).containsExactly("STATEMENT_OK@0", "END");
        assertThat(counting.completed).isEqualTo(2);
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void withoutRowsWatchedRowsPassUnheardAndAreStillCounted(boolean deprecateEof) {
        ResponseScript script = twoResultSets(deprecateEof);
        PipelinedTracker pipeline = new PipelinedTracker(deprecateEof, false, new CountingListener());
        Recording watch = new Recording(false);
        pipeline.tracker.watch(watch);
        script.kinds.forEach(pipeline::expect);
        feed(pipeline.tracker, script.bytes(), 0);

        assertThat(watch.heard).containsExactly("COLUMN_COUNT@0", "COLUMN_DEFINITION@0", "COLUMN_DEFINITION@0",
                "END_OF_ROWS@10", "COLUMN_COUNT@10", "COLUMN_DEFINITION@10", "END_OF_ROWS@13", "END",
                "STATEMENT_OK@0", "END");
        assertThat(watch.rowEnds).isEmpty();

        pipeline.tracker.unwatch(watch);
        ResponseScript again = twoResultSets(deprecateEof);
        again.kinds.forEach(pipeline::expect);
        feed(pipeline.tracker, again.bytes(), 0);
        assertThat(watch.responses).as("removed: hears no more").isEqualTo(2);
    }

    private static final class CountingListener implements ResponseListener {
        int completed;

        @Override
        public void onLocalInfileRequest() {
        }

        @Override
        public void onResponseComplete() {
            completed++;
        }
    }
}
