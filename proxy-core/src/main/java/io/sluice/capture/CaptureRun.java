package io.sluice.capture;

import io.netty.util.internal.PlatformDependent;
import java.time.Instant;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * One capture from start to stop: the threads' {@link RecordBuffer}s, the bounded queue of their full chunks between
 * the event loops and the writer thread, and the counters the status reports. Event loops only ever add records to
 * their own buffer and hand full chunks over (never blocking); when the queue is full the chunk's records are
 * dropped and counted.
 */
public final class CaptureRun {
    private final CaptureOptions options;
    private final CaptureKey key;
    private final long baseNanos;
    private final long baseEpochMillis;
    private final Instant startedAt;
    private final Queue<RecordBuffer.Chunk> queue;
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicLong queuedRecords = new AtomicLong();
    /** Every thread's buffer, created at its first record; the writer sweeps them. */
    private final ConcurrentHashMap<Thread, RecordBuffer> buffers = new ConcurrentHashMap<>();
    private final LongAdder dropped = new LongAdder();
    private final LongAdder sessions = new LongAdder();

    private volatile boolean accepting = true;
    private volatile String stopReason;
    private volatile Instant stoppedAt;
    // Written by the writer thread only, read by status().
    volatile long recordsWritten;
    volatile long bytesWritten;
    volatile int files;

    CaptureRun(CaptureOptions options, CaptureKey key) {
        this.options = options;
        this.key = key;
        this.baseNanos = System.nanoTime();
        this.startedAt = Instant.now();
        this.baseEpochMillis = startedAt.toEpochMilli();
        // a chunk holds at least one record: the record bound also bounds the chunks
        this.queue = PlatformDependent.newFixedMpscQueue(options.queueRecords());
    }

    public CaptureOptions options() {
        return options;
    }

    CaptureKey key() {
        return key;
    }

    long baseEpochMillis() {
        return baseEpochMillis;
    }

    Instant startedAt() {
        return startedAt;
    }

    /** Nanoseconds since the capture's base: the time stamps of its records. */
    public long now() {
        return System.nanoTime() - baseNanos;
    }

    /**
     * Starts capturing a client session.
     *
     * @param openBefore whether the session was open before the capture saw it log in
     */
    public SessionCapture beginSession(int sessionId, String user, String schema, int capabilities, int collationId,
            String client, boolean openBefore) {
        sessions.increment();
        RecordBuffer buffer = buffer();
        buffer.add(new CaptureRecord.SessionBegin(sessionId, now(), openBefore, capabilities, collationId, user,
                schema, client));
        return new SessionCapture(this, sessionId, buffer);
    }

    /** The calling thread's buffer: a session's event loop is its thread for life, so the session keeps it. */
    RecordBuffer buffer() {
        RecordBuffer buffer = buffers.get(Thread.currentThread());
        return buffer != null ? buffer : buffers.computeIfAbsent(Thread.currentThread(), t -> new RecordBuffer(this));
    }

    /**
     * Adds a record to the calling thread's buffer. Never blocks.
     *
     * @return whether it was taken (false once the capture stopped accepting); a record taken can still be dropped
     *     later, with its chunk, when the writer cannot keep up
     */
    boolean offer(CaptureRecord record) {
        return accepting && buffer().add(record);
    }

    /**
     * Queues a buffer's full chunk for the writer. Never blocks: when the queue is full (by records or by bytes) the
     * chunk's records are dropped and counted. An empty queue always takes a chunk, however large.
     */
    void handOff(RecordBuffer.Chunk chunk) {
        long bytes = queuedBytes.addAndGet(chunk.length());
        long records = queuedRecords.addAndGet(chunk.records());
        boolean alone = records == chunk.records();
        if ((!alone && (bytes > options.queueBytes() || records > options.queueRecords())) || !queue.offer(chunk)) {
            queuedBytes.addAndGet(-chunk.length());
            queuedRecords.addAndGet(-chunk.records());
            dropped.add(chunk.records());
        }
    }

    /** The writer's side: the next full chunk, or {@code null} when none waits. */
    RecordBuffer.Chunk poll() {
        RecordBuffer.Chunk chunk = queue.poll();
        if (chunk != null) {
            queuedBytes.addAndGet(-chunk.length());
            queuedRecords.addAndGet(-chunk.records());
        }
        return chunk;
    }

    /**
     * The writer's side: has every buffer queue what it holds short of a full chunk. Once the capture has stopped
     * accepting, a sweep followed by draining the queue collects every record taken: buffers take records and hand
     * chunks over only while accepting, under the lock the sweep takes.
     */
    void sweep() {
        for (RecordBuffer buffer : buffers.values()) {
            buffer.flush();
        }
    }

    /** Drops what waits and what the buffers hold, counting it: the writer can no longer write. */
    void discardQueued() {
        sweep();
        for (RecordBuffer.Chunk c = poll(); c != null; c = poll()) {
            dropped.add(c.records());
        }
    }

    void countDropped(long n) {
        dropped.add(n);
    }

    int maxPayload() {
        return options.maxPayload();
    }

    /**
     * Stops taking records; the first reason given is the one reported.
     *
     * @return whether this call was the one that stopped it
     */
    boolean stopAccepting(String reason) {
        synchronized (this) {
            if (!accepting) {
                return false;
            }
            stopReason = reason;
            accepting = false;
            return true;
        }
    }

    boolean isAccepting() {
        return accepting;
    }

    String stopReason() {
        return stopReason;
    }

    void markStopped() {
        stoppedAt = Instant.now();
    }

    boolean isStopped() {
        return stoppedAt != null;
    }

    /** A consistent-enough snapshot for the status API. */
    public CaptureStatus status() {
        Instant stopped = stoppedAt;
        return new CaptureStatus(stopped == null ? "running" : "stopped", options.output().toString(), startedAt,
                stopped, options.duration(), options.maxSize(), options.compress(), key != null, sessions.sum(),
                recordsWritten, queuedRecords.get(), dropped.sum(), bytesWritten, files,
                stopped == null ? null : stopReason);
    }
}
