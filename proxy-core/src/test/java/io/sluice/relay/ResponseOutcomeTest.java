package io.sluice.relay;

import static io.sluice.relay.ResponseScript.AUTOCOMMIT;
import static io.sluice.relay.ResponseScript.MORE_RESULTS;
import static io.sluice.relay.ResponseKind.BINARY_RESULT;
import static io.sluice.relay.ResponseKind.PREPARE;
import static io.sluice.relay.ResponseKind.RESULT;
import static io.sluice.relay.ResponseKind.SINGLE;
import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.testing.MySqlWire;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The outcome summaries a captured session gets from the {@link ResponseTracker}: affected rows, rows, error codes
 * and prepared statement ids, the same whether the stream arrives whole (the row-skipping fast path) or byte by byte.
 */
class ResponseOutcomeTest {

    private static final int A = AUTOCOMMIT;

    private record Outcome(int error, long affected, long rows, long statementId) {
    }

    private static List<byte[]> rows(int n) {
        return IntStream.range(0, n).mapToObj(i -> MySqlWire.textRow("row" + i, String.valueOf(i))).toList();
    }

    /** Feeds {@code script} whole or one byte at a time to a tracker that summarizes, and returns its outcomes. */
    private static List<Outcome> outcomes(ResponseScript script, boolean byteByByte) {
        List<Outcome> outcomes = new ArrayList<>();
        ResponseTracker[] holder = new ResponseTracker[1];
        PipelinedTracker pipeline = new PipelinedTracker(script.deprecateEof, false, new ResponseListener() {
            @Override
            public void onLocalInfileRequest() {
            }

            @Override
            public void onResponseComplete() {
                ResponseTracker t = holder[0];
                ResponseOutcome o = t.outcome();
                outcomes.add(new Outcome(o.errorCode(), o.affectedRows(), o.rows(), o.statementId()));
            }
        });
        ResponseTracker tracker = pipeline.tracker;
        holder[0] = tracker;
        tracker.summarize(true);
        script.kinds.forEach(pipeline::expect);
        byte[] bytes = script.bytes();
        if (byteByByte) {
            for (byte b : bytes) {
                feed(tracker, new byte[] {b});
            }
        } else {
            feed(tracker, bytes);
        }
        assertThat(tracker.isIdle()).isTrue();
        return outcomes;
    }

    private static void feed(ResponseTracker tracker, byte[] bytes) {
        ByteBuf buf = Unpooled.wrappedBuffer(bytes);
        try {
            tracker.scan(buf);
        } finally {
            buf.release();
        }
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void reportsAffectedRowsRowsErrorsAndStatementIds(boolean deprecateEof) {
        ResponseScript script = new ResponseScript("mixed", deprecateEof)
                .command(RESULT).ok(5, 0, A, "").done()
                .command(RESULT).err().done()
                .command(RESULT).resultSet(2, rows(40), A).done()
                .command(RESULT).ok(2, 0, A | MORE_RESULTS, "").resultSet(2, rows(3), A | MORE_RESULTS)
                        .ok(1, 0, A, "").done()
                .command(RESULT).metadata(2, A).packet(MySqlWire.textRow("1", "2")).err().done()
                .command(PREPARE).prepared(2, 3).done()
                .command(BINARY_RESULT).resultSet(1, List.of(MySqlWire.binaryRow(1), MySqlWire.binaryRow(2)),
                        A).done()
                .command(SINGLE).ok(A).done()
                .command(SINGLE).err().done();
        List<Outcome> expected = List.of(
                new Outcome(0, 5, 0, 0),
                new Outcome(1146, 0, 0, 0),
                new Outcome(0, 0, 40, 0),
                new Outcome(0, 3, 3, 0),
                new Outcome(1146, 0, 1, 0),
                new Outcome(0, 0, 0, 7),
                new Outcome(0, 0, 2, 0),
                new Outcome(0, 0, 0, 0),
                new Outcome(1146, 0, 0, 0));

        assertThat(outcomes(script, false)).containsExactlyElementsOf(expected);
        assertThat(outcomes(script, true)).containsExactlyElementsOf(expected);
    }

    @ParameterizedTest(name = "deprecateEof={0}")
    @ValueSource(booleans = {false, true})
    void countsNoRowsUnlessSummarizing(boolean deprecateEof) {
        ResponseScript script = new ResponseScript("plain", deprecateEof)
                .command(RESULT).resultSet(2, rows(10), A).done();
        List<Outcome> outcomes = new ArrayList<>();
        ResponseTracker[] holder = new ResponseTracker[1];
        PipelinedTracker pipeline = new PipelinedTracker(deprecateEof, false, new ResponseListener() {
            @Override
            public void onLocalInfileRequest() {
            }

            @Override
            public void onResponseComplete() {
                ResponseTracker t = holder[0];
                ResponseOutcome o = t.outcome();
                outcomes.add(new Outcome(o.errorCode(), o.affectedRows(), o.rows(), o.statementId()));
            }
        });
        ResponseTracker tracker = pipeline.tracker;
        holder[0] = tracker;
        tracker.summarize(true);
        tracker.summarize(false);
        script.kinds.forEach(pipeline::expect);
        feed(tracker, script.bytes());

        // Without summing up, only the error code (kept for metrics anyway) is known; rows are not counted.
        assertThat(outcomes).containsExactly(new Outcome(0, 0, 0, 0));
        assertThat(tracker.isIdle()).isTrue();
    }
}
