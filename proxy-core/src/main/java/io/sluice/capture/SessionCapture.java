package io.sluice.capture;

import io.netty.buffer.ByteBuf;
import io.sluice.capture.CaptureRecord.Outcome;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.relay.ResponseObserver;
import io.sluice.relay.ResponseOutcome;
import io.sluice.relay.ResponseTracker;
import io.sluice.sql.Secrets;

/**
 * The capture of one client session, on its event loop. A command is copied (its payload only, never the buffer) when
 * it is forwarded; the copy rides in the command's entry of the backend connection's in-flight queue, as a
 * {@link ResponseObserver}, and is recorded when the response ends, with its outcome. Records are encoded into the
 * event loop's {@link RecordBuffer}.
 *
 * <p>The SQL text of a COM_QUERY or COM_STMT_PREPARE has its credentials hidden ({@link Secrets}) when it is copied,
 * before anything holds it: no password reaches a capture file (decision 130). What has none of the words that may
 * announce one costs a scan of the copy.
 */
public final class SessionCapture {
    private final CaptureRun run;
    private final int sessionId;
    /** Its event loop's buffer, where its records are encoded. */
    private final RecordBuffer buffer;

    SessionCapture(CaptureRun run, int sessionId, RecordBuffer buffer) {
        this.run = run;
        this.sessionId = sessionId;
        this.buffer = buffer;
    }

    /** The capture this session records into. */
    public CaptureRun run() {
        return run;
    }

    /**
     * Copies a command frame being forwarded (borrowed: only its payload bytes are copied).
     *
     * @return the command's record, to be told how its response ended
     */
    public ResponseObserver onCommand(int command, ByteBuf frame) {
        long now = run.now();
        int length = Packets.payloadLength(frame, frame.readerIndex()) - 1; // after the command byte
        int kept = Math.min(length, run.maxPayload());
        byte[] payload = new byte[kept];
        frame.getBytes(frame.readerIndex() + Packets.HEADER_SIZE + 1, payload);
        if ((command == Command.COM_QUERY || command == Command.COM_STMT_PREPARE) && Secrets.mayHold(payload)) {
            payload = Secrets.redact(payload);
        }
        // A frame of MAX_PAYLOAD is continued by the next one, which the capture does not keep.
        boolean truncated = kept < length || length + 1 == Packets.MAX_PAYLOAD;
        return new CapturedCommand(now, command, payload, truncated);
    }

    /** COM_CHANGE_USER succeeded (commands still unanswered have been abandoned first). */
    public void onChangeUser(String user, String schema) {
        buffer.add(new CaptureRecord.ChangeUser(sessionId, run.now(), user, schema));
    }

    /** The session ended, or the capture did (commands still unanswered have been abandoned first). */
    public void end() {
        buffer.add(new CaptureRecord.SessionEnd(sessionId, run.now()));
    }

    /** One command of the session, waiting for its response's outcome. */
    private final class CapturedCommand implements ResponseObserver {
        private final long startNanos;
        private final int command;
        private final byte[] payload;
        private final boolean truncated;

        CapturedCommand(long startNanos, int command, byte[] payload, boolean truncated) {
            this.startNanos = startNanos;
            this.command = command;
            this.payload = payload;
            this.truncated = truncated;
        }

        @Override
        public void onResponse(ResponseTracker tracker) {
            ResponseOutcome outcome = tracker.outcome();
            int error = outcome.errorCode();
            record(error != 0 ? Outcome.ERROR : Outcome.OK, error, outcome.affectedRows(), outcome.rows(),
                    outcome.statementId());
        }

        @Override
        public void onNoResponse() {
            record(Outcome.NO_RESPONSE, 0, 0, 0, 0);
        }

        @Override
        public void onAbandoned() {
            record(Outcome.UNKNOWN, 0, 0, 0, 0);
        }

        private void record(Outcome outcome, int errorCode, long affectedRows, long rows, long statementId) {
            long now = run.now();
            long duration = outcome == Outcome.NO_RESPONSE ? 0 : now - startNanos;
            buffer.addCommand(sessionId, startNanos, duration, command, payload, truncated, outcome, errorCode,
                    affectedRows, rows, statementId);
        }
    }
}
