package io.sluice.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.ServerStatus;
import io.sluice.testing.MySqlWire;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Transaction pooling's view of the stream: OK packets that carry session state reach the state listener whole,
 * however the bytes are split, and every OK reports its last-insert-id; other packets cost nothing.
 */
class ResponseTrackerStateTest {

    private static final int STATE_CHANGED = ServerStatus.SERVER_SESSION_STATE_CHANGED;

    /** An OK (or, headed 0xFE, the OK ending rows) that carries one system variable's change. */
    private static byte[] okWithState(int header, long insertId, String name, String value) {
        return MySqlWire.okWithSessionState(header, 0, insertId, ServerStatus.SERVER_STATUS_AUTOCOMMIT | STATE_CHANGED,
                0, "", MySqlWire.systemVariableChange(name, value));
    }

    private static final class Recorder implements ResponseListener {
        final List<byte[]> states = new ArrayList<>();
        final List<Long> insertIds = new ArrayList<>();
        int completed;
        int untracked;

        @Override
        public void onOk(long affectedRows, long lastInsertId) {
            insertIds.add(lastInsertId);
        }

        @Override
        public void onSessionState(byte[] okPayload) {
            states.add(okPayload);
        }

        @Override
        public void onUntrackedStateChange() {
            untracked++;
        }

        @Override
        public void onLocalInfileRequest() {
        }

        @Override
        public void onResponseComplete() {
            completed++;
        }
    }

    private static Recorder feed(boolean deprecateEof, byte[] stream, int chunk) {
        Recorder recorder = new Recorder();
        PipelinedTracker pipeline = new PipelinedTracker(deprecateEof, false, recorder);
        ResponseTracker tracker = pipeline.tracker;
        tracker.sessionState().follow(true);
        pipeline.expect(ResponseKind.RESULT);
        pipeline.expect(ResponseKind.SINGLE);
        for (int i = 0; i < stream.length; i += chunk) {
            ByteBuf buf = Unpooled.wrappedBuffer(stream, i, Math.min(chunk, stream.length - i));
            tracker.scan(buf);
            buf.release();
        }
        assertThat(tracker.isIdle()).isTrue();
        return recorder;
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 7, 33, 1 << 20})
    void okPacketsWithStateArriveWholeHoweverSplit(int chunk) {
        byte[] first = okWithState(0x00, 42, "sql_mode", "STRICT_TRANS_TABLES,".repeat(20)); // far beyond the head
        byte[] second = okWithState(0x00, 0, "time_zone", "+01:00");
        byte[] stream = MySqlWire.concat(MySqlWire.frame(1, first), MySqlWire.frame(1, second));
        Recorder recorder = feed(false, stream, chunk);
        assertThat(recorder.states).containsExactly(first, second);
        assertThat(recorder.insertIds).containsExactly(42L, 0L);
        assertThat(recorder.completed).isEqualTo(2);
    }

    @Test
    void theOkEndingAResultCarriesStateUnderDeprecateEof() {
        byte[] end = okWithState(0xFE, 0, "autocommit", "OFF");
        byte[] stream = MySqlWire.concat(
                MySqlWire.frames(1, List.of(MySqlWire.columnCount(1), MySqlWire.columnDefinition("a", 3),
                        MySqlWire.textRow("1"), end)),
                MySqlWire.frame(1, MySqlWire.ok(ServerStatus.SERVER_STATUS_AUTOCOMMIT)));
        Recorder recorder = feed(true, stream, 5);
        assertThat(recorder.states).containsExactly(end);
        assertThat(recorder.insertIds).as("only the OK that answers a statement").hasSize(1);
        assertThat(recorder.completed).isEqualTo(2);
    }

    @Test
    void anEofWithTheFlagIsAnUntrackedChange() {
        byte[] stream = MySqlWire.concat(
                MySqlWire.frames(1, List.of(MySqlWire.columnCount(1), MySqlWire.columnDefinition("a", 3),
                        MySqlWire.eof(ServerStatus.SERVER_STATUS_AUTOCOMMIT), MySqlWire.textRow("1"),
                        MySqlWire.eof(ServerStatus.SERVER_STATUS_AUTOCOMMIT | STATE_CHANGED))),
                MySqlWire.frame(1, MySqlWire.ok(ServerStatus.SERVER_STATUS_AUTOCOMMIT)));
        Recorder recorder = feed(false, stream, 3);
        assertThat(recorder.untracked).isEqualTo(1);
        assertThat(recorder.states).isEmpty();
    }
}
