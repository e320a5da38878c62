package io.sluice.metrics;

import io.netty.buffer.ByteBuf;
import io.sluice.protocol.Command;
import io.sluice.protocol.Packets;
import io.sluice.slowlog.SlowQueryLog;

/**
 * Times the commands in flight on one backend connection, from the moment one is forwarded to the end of its
 * response, in the order the {@link io.sluice.relay.ResponseTracker} follows them (pipelined commands included).
 * Single-threaded (the connection's event loop); the arrays are allocated once per connection, so timing a command
 * allocates nothing.
 *
 * <p>For the slow-query log it keeps the first bytes of the last {@code COM_QUERY}, copied into a reused array, since
 * the frame itself is released once written.
 */
public final class CommandTiming {

    /** What a slow command's log line says about where it came from; only asked when a command was slow. */
    public interface Source {
        String describeForLog();
    }

    private int[] types = new int[4];
    private long[] startedNanos = new long[4];
    private int head;
    private int count;
    /** Sequence number of the next command started; the oldest in flight is {@code nextSequence - count}. */
    private long nextSequence;

    private byte[] sql;
    private int sqlLength;
    private int sqlTotalLength;
    private long sqlSequence = -1;

    /**
     * A command frame (borrowed) is being forwarded.
     *
     * @param slowLog the slow-query log, or {@code null}
     */
    public void started(ByteBuf frame, SlowQueryLog slowLog) {
        int start = frame.readerIndex() + Packets.HEADER_SIZE;
        int command = frame.getUnsignedByte(start);
        if (count == types.length) {
            grow();
        }
        int tail = (head + count) & (types.length - 1);
        types[tail] = CommandTypes.index(command);
        startedNanos[tail] = System.nanoTime();
        count++;
        if (slowLog != null && command == Command.COM_QUERY && slowLog.enabled()) {
            keepSql(frame, start + 1, slowLog.maxSqlLength());
        }
        nextSequence++;
    }

    private void keepSql(ByteBuf frame, int from, int max) {
        int total = Packets.payloadLength(frame, frame.readerIndex()) - 1;
        int length = Math.max(0, Math.min(Math.min(total, max), frame.writerIndex() - from));
        if (sql == null || sql.length < length) {
            sql = new byte[Math.min(max, Math.max(length, 256))];
        }
        frame.getBytes(from, sql, 0, length);
        sqlLength = length;
        sqlTotalLength = total;
        sqlSequence = nextSequence;
    }

    /**
     * The oldest command in flight got its whole response.
     *
     * @param counters where metrics go, or {@code null}
     * @param slowLog the slow-query log, or {@code null}
     */
    public void completed(boolean failed, LoopCounters counters, SlowQueryLog slowLog, Source source) {
        if (count == 0) {
            return; // a response to a command not timed (one sent before timing began)
        }
        long nanos = System.nanoTime() - startedNanos[head];
        int type = types[head];
        long sequence = nextSequence - count;
        head = (head + 1) & (types.length - 1);
        count--;
        if (counters != null) {
            counters.completed(type, nanos, failed);
        }
        if (slowLog != null && slowLog.isSlow(nanos)) {
            boolean kept = sequence == sqlSequence;
            slowLog.record(source.describeForLog(), CommandTypes.name(type), nanos, failed, kept ? sql : null,
                    sqlLength, sqlTotalLength);
        }
    }

    /** Forgets every command in flight: the connection left its session. */
    public void clear() {
        head = 0;
        count = 0;
        sqlSequence = -1;
    }

    private void grow() {
        int[] newTypes = new int[types.length * 2];
        long[] newStarted = new long[types.length * 2];
        for (int i = 0; i < count; i++) {
            int from = (head + i) & (types.length - 1);
            newTypes[i] = types[from];
            newStarted[i] = startedNanos[from];
        }
        types = newTypes;
        startedNanos = newStarted;
        head = 0;
    }
}
