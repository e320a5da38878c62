package io.sluice.metrics;

import io.sluice.slowlog.SlowQueryLog;

/**
 * Where one event loop's relayed commands are reported: their counts and latency histograms ({@link LoopCounters})
 * and the slow-query log. A backend connection is given its session's observer when it is lent, and reports each
 * command's response time to it as the response ends; the command's start time and SQL ride in the connection's
 * in-flight queue. Single-threaded, like the loop.
 */
public final class CommandObserver {

    /** What a slow command's log line says about where it came from; only asked when a command was slow. */
    public interface Source {
        String describeForLog();
    }

    private final LoopCounters counters;
    private final SlowQueryLog slowLog;

    /**
     * @param counters the loop's counters, or {@code null} with metrics off
     * @param slowLog the slow-query log (it may be switched off), or {@code null} for none
     */
    public CommandObserver(LoopCounters counters, SlowQueryLog slowLog) {
        this.counters = counters;
        this.slowLog = slowLog;
    }

    /** The loop's counters; {@code null} with metrics off. */
    public LoopCounters counters() {
        return counters;
    }

    /**
     * Whether commands are timed: two clock reads per command, only when metrics or the slow-query log need them.
     * Asked per command, since a config reload can switch the slow-query log.
     */
    public boolean timesCommands() {
        return counters != null || (slowLog != null && slowLog.enabled());
    }

    /** How many bytes of a COM_QUERY's SQL to keep for the slow-query log; 0 when it is off. */
    public int sqlToKeep() {
        return slowLog != null && slowLog.enabled() ? slowLog.maxSqlLength() : 0;
    }

    /**
     * A timed command's response ended.
     *
     * @param type the command's {@link CommandTypes} index
     * @param failed whether the response was (or ended with) an ERR packet
     * @param sql the first bytes of the statement, or {@code null} when not kept
     */
    public void completed(int type, long nanos, boolean failed, byte[] sql, int sqlLength, int sqlTotalLength,
            Source source) {
        if (counters != null) {
            counters.completed(type, nanos, failed);
        }
        if (slowLog != null && slowLog.isSlow(nanos)) {
            slowLog.record(source.describeForLog(), CommandTypes.name(type), nanos, failed, sql, sqlLength,
                    sqlTotalLength);
        }
    }
}
