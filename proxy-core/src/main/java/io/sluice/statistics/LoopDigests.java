package io.sluice.statistics;

import io.netty.buffer.ByteBuf;
import io.sluice.sql.SqlDigest;
import java.util.ArrayList;
import java.util.List;

/**
 * One event loop's digest table: an open-addressing hash table from shape and scope to {@link DigestCounters},
 * written by the loop alone, so finding a known statement's entry takes a hash of its bytes and a probe, with no lock
 * and no allocation. At most {@code maxDigests} entries; statements of a shape that finds the table full count in
 * the loop's {@code other} entry. Readers on other threads see the entries through an append-only array published
 * by a volatile count.
 */
public final class LoopDigests {

    private final DigestStatistics owner;
    private final int maxDigests;
    private final StatementShape shapes = new StatementShape();

    // The table, on the loop only.
    private long[] keys;
    private DigestScope[] scopes;
    private DigestCounters[] slots;
    private DigestCounters other;

    // What readers see: entries[0..size), other.
    private volatile DigestCounters[] entries;
    private volatile int size;
    private volatile DigestCounters published;

    LoopDigests(DigestStatistics owner, int maxDigests) {
        this.owner = owner;
        this.maxDigests = maxDigests;
        start();
    }

    private void start() {
        keys = new long[64];
        scopes = new DigestScope[64];
        slots = new DigestCounters[64];
        other = null;
        entries = new DigestCounters[16];
        size = 0;
        published = null;
    }

    /** The statistics this table belongs to. */
    DigestStatistics owner() {
        return owner;
    }

    /** The shape of a statement's bytes (borrowed), with this loop's reused walker. On the loop only. */
    long shapeOf(ByteBuf buf, int from, int to) {
        return shapes.of(buf, from, to);
    }

    /**
     * The entry of a COM_QUERY's statement in {@code buf} from {@code from} to {@code to}, made the first time its
     * shape is seen by {@code scope} on this loop; the {@code other} entry once the table is full. On the loop only.
     */
    DigestCounters entry(long shape, DigestScope scope, ByteBuf buf, int from, int to) {
        DigestCounters found = find(shape, scope);
        if (found != null) {
            return found;
        }
        if (size >= maxDigests) {
            return other();
        }
        return add(shape, scope, owner.digestOf(shape, buf, from, to));
    }

    /** The entry of a prepared statement's shape and digest for {@code scope}. On the loop only. */
    DigestCounters entry(long shape, DigestScope scope, SqlDigest digest) {
        DigestCounters found = find(shape, scope);
        if (found != null) {
            return found;
        }
        return size >= maxDigests ? other() : add(shape, scope, digest);
    }

    private DigestCounters find(long shape, DigestScope scope) {
        int mask = slots.length - 1;
        for (int i = index(shape, scope, mask); ; i = (i + 1) & mask) {
            DigestCounters at = slots[i];
            if (at == null) {
                return null;
            }
            if (keys[i] == shape && scopes[i] == scope) {
                return at;
            }
        }
    }

    private DigestCounters add(long shape, DigestScope scope, SqlDigest digest) {
        if ((size + 1) * 2 > slots.length) {
            grow();
        }
        DigestCounters made = new DigestCounters(shape, scope, digest, System.nanoTime());
        put(made);
        DigestCounters[] list = entries;
        if (size == list.length) {
            DigestCounters[] longer = new DigestCounters[list.length * 2];
            System.arraycopy(list, 0, longer, 0, list.length);
            list = longer;
            entries = longer;
        }
        list[size] = made;
        size = size + 1; // publishes the entry to readers
        return made;
    }

    private void put(DigestCounters entry) {
        int mask = slots.length - 1;
        int i = index(entry.shape(), entry.scope(), mask);
        while (slots[i] != null) {
            i = (i + 1) & mask;
        }
        keys[i] = entry.shape();
        scopes[i] = entry.scope();
        slots[i] = entry;
    }

    private void grow() {
        DigestCounters[] old = slots;
        keys = new long[old.length * 2];
        scopes = new DigestScope[old.length * 2];
        slots = new DigestCounters[old.length * 2];
        for (DigestCounters entry : old) {
            if (entry != null) {
                put(entry);
            }
        }
    }

    private DigestCounters other() {
        DigestCounters entry = other;
        if (entry == null) {
            entry = new DigestCounters(0, DigestStatistics.OTHER_SCOPE, null, System.nanoTime());
            other = entry;
            published = entry;
        }
        return entry;
    }

    private static int index(long shape, DigestScope scope, int mask) {
        long h = (shape ^ scope.hashCode()) * 0x9e3779b97f4a7c15L;
        return (int) (h >>> 40) & mask;
    }

    /** Forgets every entry; on the loop only. Statements in flight count in entries no reader sees any more. */
    void clear() {
        start();
    }

    /** The entries now, the {@code other} entry last (when there is one); from any thread. */
    List<DigestCounters> snapshot() {
        int n = size;
        DigestCounters[] list = entries;
        List<DigestCounters> all = new ArrayList<>(n + 1);
        for (int i = 0; i < Math.min(n, list.length); i++) {
            if (list[i] != null) {
                all.add(list[i]);
            }
        }
        DigestCounters rest = published;
        if (rest != null) {
            all.add(rest);
        }
        return all;
    }

    /** Entries in the table now. */
    int size() {
        return size;
    }

    /** Roughly what the table holds in memory, its entries included (their digests are counted once, shared). */
    long memoryBytes() {
        return (long) size * DigestCounters.BYTES + (long) slots.length * (8 + 4 + 4) + (long) entries.length * 4;
    }
}
