package io.sluice.statistics;

import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.Future;
import io.sluice.metrics.LatencyBuckets;
import io.sluice.sql.SqlDigest;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Statement statistics by digest, user, schema and backend group (issue #41): one {@link LoopDigests} per event
 * loop, written by that loop alone, merged here when read. The digest text of a shape is made once, the first time a
 * loop sees the shape, and shared by every loop. Built at start when {@code statistics.enabled}; with statistics
 * off there is none, and the command path makes no call at all.
 */
public final class DigestStatistics {

    /** The scope of the {@code other} entry: no user, schema or group of its own. */
    static final DigestScope OTHER_SCOPE = new DigestScope("", "", "");

    private static final double[] BOUNDS_SECONDS = LatencyBuckets.upperBoundsSeconds();

    private final int maxDigests;
    private final Map<EventExecutor, LoopDigests> loops = new ConcurrentHashMap<>();
    private final Map<DigestScope, DigestScope> scopes = new ConcurrentHashMap<>();
    private final Map<Long, SqlDigest> digests = new ConcurrentHashMap<>();

    /** @param maxDigests the most entries each event loop keeps; further shapes count in {@code other} */
    public DigestStatistics(int maxDigests) {
        if (maxDigests < 1) {
            throw new IllegalArgumentException("maxDigests: " + maxDigests + " (expected: >= 1)");
        }
        this.maxDigests = maxDigests;
    }

    /** The most entries each event loop keeps. */
    public int maxDigests() {
        return maxDigests;
    }

    /** The table of {@code loop}, made on first use. */
    public LoopDigests forLoop(EventExecutor loop) {
        return loops.computeIfAbsent(loop, l -> new LoopDigests(this, maxDigests));
    }

    /** A new session's recorder, on its event loop. */
    public SessionDigests forSession(EventExecutor loop) {
        return new SessionDigests(forLoop(loop));
    }

    /** The one scope object of a user, schema and group: sessions look it up when one of them changes. */
    DigestScope scope(String user, String schema, String group) {
        DigestScope wanted = new DigestScope(user, schema, group);
        DigestScope known = scopes.putIfAbsent(wanted, wanted);
        return known != null ? known : wanted;
    }

    /** The digest of a shape seen for the first time on a loop: made from the statement's bytes, once for all loops. */
    SqlDigest digestOf(long shape, ByteBuf buf, int from, int to) {
        SqlDigest known = digests.get(shape);
        if (known != null) {
            return known;
        }
        int length = StatementShape.readLength(to - from);
        SqlDigest made = SqlDigest.of(buf.toString(from, length, StandardCharsets.UTF_8));
        SqlDigest raced = digests.putIfAbsent(shape, made);
        return raced != null ? raced : made;
    }

    /** Every row now, merged over the loops, in no order. */
    public List<DigestSummary> summaries() {
        long nowNanos = System.nanoTime();
        long nowMillis = System.currentTimeMillis();
        Map<List<String>, Merged> byKey = new HashMap<>();
        for (LoopDigests loop : loops.values()) {
            for (DigestCounters entry : loop.snapshot()) {
                SqlDigest digest = entry.digest();
                DigestScope scope = entry.scope();
                String hash = digest == null ? DigestSummary.OTHER : digest.hash();
                byKey.computeIfAbsent(List.of(hash, scope.user(), scope.schema(), scope.group()),
                        k -> new Merged(hash, digest == null ? DigestSummary.OTHER : digest.text(), scope))
                        .add(entry);
            }
        }
        List<DigestSummary> all = new ArrayList<>(byKey.size());
        for (Merged merged : byKey.values()) {
            if (merged.values[DigestCounters.COUNT] > 0) {
                all.add(merged.summary(nowNanos, nowMillis));
            }
        }
        return all;
    }

    /** The first {@code limit} rows by {@code order}, largest first. */
    public List<DigestSummary> top(DigestOrder order, int limit) {
        List<DigestSummary> all = summaries();
        all.sort(order.comparator());
        return all.size() > limit ? new ArrayList<>(all.subList(0, limit)) : all;
    }

    /**
     * Forgets every row, as ProxySQL's {@code stats_mysql_query_digest_reset}: each loop clears its own table, on its
     * own thread; returns once all have (or after 5 seconds). Statements in flight meanwhile are not counted.
     */
    public void reset() {
        List<Future<?>> pending = new ArrayList<>();
        for (Map.Entry<EventExecutor, LoopDigests> each : loops.entrySet()) {
            EventExecutor loop = each.getKey();
            LoopDigests table = each.getValue();
            if (loop.inEventLoop() || loop.isShuttingDown()) {
                table.clear();
            } else {
                pending.add(loop.submit(table::clear));
            }
        }
        for (Future<?> clearing : pending) {
            clearing.awaitUninterruptibly(5, TimeUnit.SECONDS);
        }
        digests.clear();
    }

    /** Entries over all loops (a digest seen on two loops counts twice). */
    public int entries() {
        int n = 0;
        for (LoopDigests loop : loops.values()) {
            n += loop.size();
        }
        return n;
    }

    /** Roughly the memory the statistics hold: the loops' tables and the digest texts. */
    public long memoryBytes() {
        long bytes = 0;
        for (LoopDigests loop : loops.values()) {
            bytes += loop.memoryBytes();
        }
        for (SqlDigest digest : digests.values()) {
            bytes += 96 + 2L * digest.text().length();
        }
        return bytes;
    }

    /** One row's values summed over loops, while reading. */
    private static final class Merged {
        final String hash;
        final String text;
        final DigestScope scope;
        final long[] values = new long[DigestCounters.SIZE];
        long firstNanos = Long.MAX_VALUE;

        Merged(String hash, String text, DigestScope scope) {
            this.hash = hash;
            this.text = text;
            this.scope = scope;
            values[DigestCounters.MIN_NANOS] = Long.MAX_VALUE;
            values[DigestCounters.LAST_NANOS] = Long.MIN_VALUE;
        }

        void add(DigestCounters entry) {
            for (int i = 0; i < DigestCounters.SIZE; i++) {
                long value = entry.read(i);
                switch (i) {
                    case DigestCounters.MIN_NANOS -> values[i] = Math.min(values[i], value);
                    case DigestCounters.MAX_NANOS, DigestCounters.LAST_NANOS -> values[i] = Math.max(values[i], value);
                    default -> values[i] += value;
                }
            }
            firstNanos = Math.min(firstNanos, entry.firstNanos());
        }

        DigestSummary summary(long nowNanos, long nowMillis) {
            long count = values[DigestCounters.COUNT];
            long min = values[DigestCounters.MIN_NANOS];
            long max = values[DigestCounters.MAX_NANOS];
            return new DigestSummary(hash, text, scope.user(), scope.schema(), scope.group(), count,
                    values[DigestCounters.ERRORS], values[DigestCounters.WARNINGS], values[DigestCounters.ROWS],
                    values[DigestCounters.AFFECTED], values[DigestCounters.SUM_NANOS] / 1000,
                    min == Long.MAX_VALUE ? 0 : min / 1000, max / 1000, percentile(0.50), percentile(0.95),
                    percentile(0.99), millis(firstNanos, nowNanos, nowMillis),
                    millis(values[DigestCounters.LAST_NANOS], nowNanos, nowMillis), values[DigestCounters.REPLICA],
                    values[DigestCounters.PINS]);
        }

        /** The {@code q} quantile in microseconds: linear within its bucket, within the minimum and maximum. */
        long percentile(double q) {
            long total = 0;
            for (int b = 0; b < LatencyBuckets.COUNT; b++) {
                total += values[DigestCounters.HISTOGRAM + b];
            }
            if (total == 0) {
                return 0;
            }
            double min = values[DigestCounters.MIN_NANOS] / 1000.0;
            double max = values[DigestCounters.MAX_NANOS] / 1000.0;
            double rank = Math.max(1, Math.ceil(q * total));
            long below = 0;
            for (int b = 0; b < LatencyBuckets.COUNT; b++) {
                long inBucket = values[DigestCounters.HISTOGRAM + b];
                if (below + inBucket >= rank) {
                    double lower = b == 0 ? 0 : BOUNDS_SECONDS[b - 1] * 1e6;
                    double upper = b == LatencyBuckets.COUNT - 1 ? max : BOUNDS_SECONDS[b] * 1e6;
                    lower = Math.max(lower, min);
                    upper = Math.min(upper, max);
                    double value = lower + (upper - lower) * (rank - below) / inBucket;
                    // within the minimum and maximum as reported: whole microseconds, rounded down
                    return Math.max(values[DigestCounters.MIN_NANOS] / 1000,
                            Math.min(values[DigestCounters.MAX_NANOS] / 1000, Math.round(value)));
                }
                below += inBucket;
            }
            return values[DigestCounters.MAX_NANOS] / 1000;
        }

        private static long millis(long nanos, long nowNanos, long nowMillis) {
            return nowMillis - TimeUnit.NANOSECONDS.toMillis(nowNanos - nanos);
        }
    }
}
