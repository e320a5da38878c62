package io.sluice.relay;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sluice.protocol.ServerStatus;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
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

    private static byte[] okWithState(int header, long insertId, String name, String value) {
        ByteArrayOutputStream entry = new ByteArrayOutputStream();
        lenencString(entry, name);
        lenencString(entry, value);
        ByteArrayOutputStream state = new ByteArrayOutputStream();
        state.write(0); // SESSION_TRACK_SYSTEM_VARIABLES
        lenenc(state, entry.size());
        state.writeBytes(entry.toByteArray());
        ByteArrayOutputStream ok = new ByteArrayOutputStream();
        ok.write(header);
        ok.write(0); // affected rows
        lenenc(ok, insertId);
        int status = ServerStatus.SERVER_STATUS_AUTOCOMMIT | STATE_CHANGED;
        ok.write(status & 0xFF);
        ok.write(status >> 8);
        ok.write(0);
        ok.write(0); // warnings
        ok.write(0); // info: empty
        lenenc(ok, state.size());
        ok.writeBytes(state.toByteArray());
        return ok.toByteArray();
    }

    private static void lenencString(ByteArrayOutputStream out, String s) {
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        lenenc(out, bytes.length);
        out.writeBytes(bytes);
    }

    private static void lenenc(ByteArrayOutputStream out, long n) {
        if (n < 0xFB) {
            out.write((int) n);
        } else {
            out.write(0xFC);
            out.write((int) n & 0xFF);
            out.write((int) (n >> 8) & 0xFF);
        }
    }

    private static byte[] frame(int sequenceId, byte[] payload) {
        byte[] frame = new byte[4 + payload.length];
        frame[0] = (byte) payload.length;
        frame[1] = (byte) (payload.length >> 8);
        frame[2] = (byte) (payload.length >> 16);
        frame[3] = (byte) sequenceId;
        System.arraycopy(payload, 0, frame, 4, payload.length);
        return frame;
    }

    private static final class Recorder implements ResponseTracker.Listener {
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
        tracker.followState(true);
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
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        stream.writeBytes(frame(1, first));
        stream.writeBytes(frame(1, second));
        Recorder recorder = feed(false, stream.toByteArray(), chunk);
        assertThat(recorder.states).containsExactly(first, second);
        assertThat(recorder.insertIds).containsExactly(42L, 0L);
        assertThat(recorder.completed).isEqualTo(2);
    }

    @Test
    void theOkEndingAResultCarriesStateUnderDeprecateEof() {
        byte[] end = okWithState(0xFE, 0, "autocommit", "OFF");
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        stream.writeBytes(frame(1, new byte[] {1})); // one column
        stream.writeBytes(frame(2, MySqlWire.columnDefinition("a", 3)));
        stream.writeBytes(frame(3, MySqlWire.textRow("1")));
        stream.writeBytes(frame(4, end));
        stream.writeBytes(frame(1, MySqlWire.ok(ServerStatus.SERVER_STATUS_AUTOCOMMIT)));
        Recorder recorder = feed(true, stream.toByteArray(), 5);
        assertThat(recorder.states).containsExactly(end);
        assertThat(recorder.insertIds).as("only the OK that answers a statement").hasSize(1);
        assertThat(recorder.completed).isEqualTo(2);
    }

    @Test
    void anEofWithTheFlagIsAnUntrackedChange() {
        ByteArrayOutputStream stream = new ByteArrayOutputStream();
        stream.writeBytes(frame(1, new byte[] {1}));
        stream.writeBytes(frame(2, MySqlWire.columnDefinition("a", 3)));
        stream.writeBytes(frame(3, MySqlWire.eof(ServerStatus.SERVER_STATUS_AUTOCOMMIT)));
        stream.writeBytes(frame(4, MySqlWire.textRow("1")));
        stream.writeBytes(frame(5, MySqlWire.eof(ServerStatus.SERVER_STATUS_AUTOCOMMIT | STATE_CHANGED)));
        stream.writeBytes(frame(1, MySqlWire.ok(ServerStatus.SERVER_STATUS_AUTOCOMMIT)));
        Recorder recorder = feed(false, stream.toByteArray(), 3);
        assertThat(recorder.untracked).isEqualTo(1);
        assertThat(recorder.states).isEmpty();
    }
}
