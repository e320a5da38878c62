package io.sluice.capture;

import io.netty.buffer.ByteBuf;
import io.sluice.capture.CaptureRecord.Outcome;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseTracker;
import java.util.ArrayDeque;

/**
 * The capture of one client session, on its event loop. A command is copied (its payload only, never the buffer) when
 * it is forwarded and recorded when the {@link ResponseTracker} reports its response complete; responses come back
 * in command order, so pipelined commands wait here in a FIFO. Records are encoded into the event loop's
 * {@link RecordBuffer}.
 */
public final class SessionCapture implements ResponseTracker.OutcomeListener {
    private final CaptureRun run;
    private final int sessionId;
    /** Its event loop's buffer, where its records are encoded. */
    private final RecordBuffer buffer;
    /** Commands forwarded and not yet answered, oldest first. */
    private final ArrayDeque<Pending> pending = new ArrayDeque<>(4);

    private static final class Pending {
        final long startNanos;
        final int command;
        final byte[] payload;
        final boolean truncated;
        final boolean expectsResponse;

        Pending(long startNanos, int command, byte[] payload, boolean truncated, boolean expectsResponse) {
            this.startNanos = startNanos;
            this.command = command;
            this.payload = payload;
            this.truncated = truncated;
            this.expectsResponse = expectsResponse;
        }
    }

    SessionCapture(CaptureRun run, int sessionId, RecordBuffer buffer) {
        this.run = run;
        this.sessionId = sessionId;
        this.buffer = buffer;
    }

    /** The capture this session records into. */
    public CaptureRun run() {
        return run;
    }

    /** Has {@code tracker} report this session's responses; call when a backend connection is bound. */
    public void attach(ResponseTracker tracker) {
        tracker.summarize(this);
    }

    /**
     * Records a command frame being forwarded (borrowed: only its payload bytes are copied).
     *
     * @param expectsResponse whether the server answers it (false for COM_STMT_CLOSE, COM_STMT_SEND_LONG_DATA)
     */
    public void onCommand(int command, ByteBuf frame, boolean expectsResponse) {
        long now = run.now();
        int length = Packets.payloadLength(frame, frame.readerIndex()) - 1; // after the command byte
        int kept = Math.min(length, run.maxPayload());
        byte[] payload = new byte[kept];
        frame.getBytes(frame.readerIndex() + Packets.HEADER_SIZE + 1, payload);
        // A frame of MAX_PAYLOAD is continued by the next one, which the capture does not keep.
        boolean truncated = kept < length || length + 1 == Packets.MAX_PAYLOAD;
        if (!expectsResponse && pending.isEmpty()) {
            record(new Pending(now, command, payload, truncated, false), now, Outcome.NO_RESPONSE, 0, 0, 0, 0);
            return;
        }
        pending.add(new Pending(now, command, payload, truncated, expectsResponse));
    }

    @Override
    public void onOutcome(int errorCode, long affectedRows, long rows, long statementId) {
        Pending answered = pending.poll();
        if (answered == null) {
            return; // the answer to a command sent before this session was captured
        }
        long now = run.now();
        record(answered, now, errorCode != 0 ? Outcome.ERROR : Outcome.OK, errorCode, affectedRows, rows,
                statementId);
        while (!pending.isEmpty() && !pending.peek().expectsResponse) {
            record(pending.poll(), now, Outcome.NO_RESPONSE, 0, 0, 0, 0);
        }
    }

    /** COM_CHANGE_USER succeeded. Commands still unanswered ended with the old session. */
    public void onChangeUser(String user, String schema) {
        flushUnanswered();
        buffer.add(new CaptureRecord.ChangeUser(sessionId, run.now(), user, schema));
    }

    /**
     * The session ended or the capture did: unanswered commands are recorded with an unknown outcome and the session
     * end is recorded. {@code tracker}, when not null, stops reporting to this capture.
     */
    public void end(ResponseTracker tracker) {
        if (tracker != null && tracker.outcomeListener() == this) {
            tracker.summarize(null);
        }
        flushUnanswered();
        buffer.add(new CaptureRecord.SessionEnd(sessionId, run.now()));
    }

    private void flushUnanswered() {
        long now = run.now();
        while (!pending.isEmpty()) {
            Pending p = pending.poll();
            record(p, now, p.expectsResponse ? Outcome.UNKNOWN : Outcome.NO_RESPONSE, 0, 0, 0, 0);
        }
    }

    private void record(Pending p, long now, Outcome outcome, int errorCode, long affectedRows, long rows,
            long statementId) {
        long duration = outcome == Outcome.NO_RESPONSE ? 0 : now - p.startNanos;
        buffer.addCommand(sessionId, p.startNanos, duration, p.command, p.payload, p.truncated, outcome, errorCode,
                affectedRows, rows, statementId);
    }
}
