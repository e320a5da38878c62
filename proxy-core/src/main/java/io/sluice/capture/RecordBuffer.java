package io.sluice.capture;

import io.sluice.capture.CaptureRecord.Outcome;

/**
 * The records one thread (in practice one event loop) has captured and not yet handed to the writer, already
 * encoded in the file's record format. Records go to the writer a chunk at a time: once {@link #CHUNK_BYTES} are
 * encoded, the thread hands the whole array over through {@link CaptureRun#handOff}; once a second and when the
 * capture stops, the writer has each buffer hand over what it holds ({@link #flush}).
 *
 * <p>Why per thread and not a queue of records: queueing each record cost the relay an allocation and two atomic
 * updates of counters that every event loop and the writer share, and the writer a cache miss per record and its
 * encoding. Here a record costs its encoding into an array the thread already has in cache, under a lock no other
 * thread takes except for the writer's sweep once a second (docs/decisions/053-capture-records-encoded-per-loop.md).
 */
final class RecordBuffer {
    /** Encoded bytes after which a buffer's records are handed to the writer: about 350 sysbench commands. */
    static final int CHUNK_BYTES = 32 * 1024;
    /** The array each chunk starts with: a chunk's last record rarely needs it to grow. */
    private static final int CHUNK_CAPACITY = 40 * 1024;

    /** Encoded records, handed over as one piece. */
    record Chunk(byte[] bytes, int length, int records) {
    }

    private final CaptureRun run;
    /** Guarded by {@code this}: the owning thread adds, the writer's sweep flushes. */
    private final RecordEncoder encoded = new RecordEncoder(CHUNK_CAPACITY);

    RecordBuffer(CaptureRun run) {
        this.run = run;
    }

    /**
     * Adds a record.
     *
     * @return whether it was taken (false once the capture stopped accepting)
     */
    synchronized boolean add(CaptureRecord record) {
        if (!run.isAccepting()) {
            return false;
        }
        encoded.add(record);
        handOffIfFull();
        return true;
    }

    /** Adds a command record from its fields (see {@link CaptureRecord.CommandRecord}); the relay's path. */
    synchronized boolean addCommand(int sessionId, long timeNanos, long durationNanos, int command, byte[] payload,
            boolean truncated, Outcome outcome, int errorCode, long affectedRows, long rows, long statementId) {
        if (!run.isAccepting()) {
            return false;
        }
        encoded.addCommand(sessionId, timeNanos, durationNanos, command, payload, truncated, outcome, errorCode,
                affectedRows, rows, statementId);
        handOffIfFull();
        return true;
    }

    private void handOffIfFull() {
        if (encoded.size() >= CHUNK_BYTES) {
            int length = encoded.size();
            int records = encoded.records();
            run.handOff(new Chunk(encoded.detach(), length, records));
        }
    }

    /**
     * The writer's sweep: hands over what is buffered, short of a full chunk, through the same queue as full chunks.
     * Through the queue, not straight to the writer, so that this buffer's chunks stay in the order its records were
     * taken: a chunk it handed over before the sweep waits ahead in the queue.
     */
    synchronized void flush() {
        if (encoded.records() > 0) {
            int length = encoded.size();
            int records = encoded.records();
            run.handOff(new Chunk(encoded.detach(), length, records));
        }
    }
}
