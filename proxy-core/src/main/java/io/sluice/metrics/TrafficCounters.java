package io.sluice.metrics;

import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * One {@link LoopCounters} per event loop of the worker group. A session looks its loop's counters up once, when it
 * connects; a scrape adds all loops up.
 */
public final class TrafficCounters {
    private final Map<EventExecutor, LoopCounters> byLoop = new IdentityHashMap<>();
    private final List<LoopCounters> all = new ArrayList<>();

    public TrafficCounters(EventLoopGroup workers) {
        for (EventExecutor loop : workers) {
            LoopCounters counters = new LoopCounters();
            byLoop.put(loop, counters);
            all.add(counters);
        }
    }

    /** The counters of {@code loop}, or {@code null} for a loop outside the worker group. */
    public LoopCounters forLoop(EventExecutor loop) {
        return byLoop.get(loop);
    }

    /** Every loop's counters. */
    public List<LoopCounters> loops() {
        return all;
    }

    /** Commands of type {@code type} received, over all loops. */
    public long commands(int type) {
        long sum = 0;
        for (LoopCounters loop : all) {
            sum += loop.commands(type);
        }
        return sum;
    }

    public long failures(int type) {
        long sum = 0;
        for (LoopCounters loop : all) {
            sum += loop.failures(type);
        }
        return sum;
    }

    public long bytesIn() {
        long sum = 0;
        for (LoopCounters loop : all) {
            sum += loop.bytesIn();
        }
        return sum;
    }

    public long bytesOut() {
        long sum = 0;
        for (LoopCounters loop : all) {
            sum += loop.bytesOut();
        }
        return sum;
    }
}
