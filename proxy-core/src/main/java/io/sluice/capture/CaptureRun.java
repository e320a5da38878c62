package io.sluice.capture;

import io.netty.util.internal.PlatformDependent;
import io.sluice.capture.CaptureRecord.CommandRecord;
import java.time.Instant;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * One capture from start to stop: the bounded queue between the event loops and the writer thread, and the counters
 * the status reports. Event loops only ever {@link #offer} (lock-free, never blocking); when the queue is full the
 * record is dropped and counted.
 */
public final class CaptureRun {
    /** Bytes a record costs in the queue besides its payload: object headers and fields, roughly. */
    static final int RECORD_OVERHEAD = 96;

    private final CaptureOptions options;
    private final CaptureKey key;
    private final long baseNanos;
    private final long baseEpochMillis;
    private final Instant startedAt;
    private final Queue<CaptureRecord> queue;
    private final AtomicLong queuedBytes = new AtomicLong();
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
        offer(new CaptureRecord.SessionBegin(sessionId, now(), openBefore, capabilities, collationId, user, schema,
                client));
        return new SessionCapture(this, sessionId);
    }

    /**
     * Hands a record to the writer. Never blocks: when the queue is full (by records or by bytes) the record is
     * dropped and counted. Called from event loops.
     *
     * @return whether the record was queued
     */
    boolean offer(CaptureRecord record) {
        if (!accepting) {
            return false;
        }
        int size = sizeOf(record);
        if (queuedBytes.addAndGet(size) > options.queueBytes() || !queue.offer(record)) {
            queuedBytes.addAndGet(-size);
            dropped.increment();
            return false;
        }
        return true;
    }

    /** The writer's side: the next record, or {@code null} when none waits. */
    CaptureRecord poll() {
        CaptureRecord record = queue.poll();
        if (record != null) {
            queuedBytes.addAndGet(-sizeOf(record));
        }
        return record;
    }

    /** Drops what waits, counting it: the writer can no longer write. */
    void discardQueued() {
        for (CaptureRecord r = poll(); r != null; r = poll()) {
            dropped.increment();
        }
    }

    void countDropped(long n) {
        dropped.add(n);
    }

    private static int sizeOf(CaptureRecord record) {
        return record instanceof CommandRecord c ? RECORD_OVERHEAD + c.payload().length : RECORD_OVERHEAD;
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
                recordsWritten, queue.size(), dropped.sum(), bytesWritten, files, stopped == null ? null : stopReason);
    }
}
