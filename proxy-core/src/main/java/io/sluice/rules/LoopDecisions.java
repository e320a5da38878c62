package io.sluice.rules;

import io.netty.buffer.ByteBuf;
import io.sluice.statistics.StatementShape;
import java.util.HashMap;
import java.util.Map;

/**
 * One event loop's cache of rule decisions: an open-addressing table from a statement's shape and scope to the index
 * of the rule that acts on it (or none), written and read by the loop alone, so that a known statement costs a hash of
 * its bytes and a probe, with no lock and no allocation. Its entries are of one rule set's version; the first lookup
 * under a newer set empties it. At {@value #MAX_ENTRIES} entries it starts again rather than grow without bound.
 */
final class LoopDecisions {

    /** A shape and scope the table has no decision for. */
    static final int UNKNOWN = -2;
    static final int MAX_ENTRIES = 65_536;

    private final StatementShape shapes = new StatementShape();
    private final Map<DecisionScope, DecisionScope> scopes = new HashMap<>();
    private long[] keys;
    private DecisionScope[] owners;
    private int[] decisions;
    private int size;
    private int version = -1;

    LoopDecisions() {
        clear();
    }

    /** The shape of a statement's bytes (borrowed), with the loop's reused walker. */
    long shapeOf(ByteBuf buf, int from, int to) {
        return shapes.of(buf, from, to);
    }

    /** The one scope object of a value on this loop. */
    DecisionScope scope(DecisionScope wanted) {
        DecisionScope known = scopes.putIfAbsent(wanted, wanted);
        return known != null ? known : wanted;
    }

    /** The rule index cached for a shape and scope under {@code set}, -1 for none, or {@link #UNKNOWN}. */
    int decision(RuleSet set, long shape, DecisionScope scope) {
        if (version != set.version()) {
            clear();
            version = set.version();
            return UNKNOWN;
        }
        int mask = keys.length - 1;
        for (int i = index(shape, scope, mask); ; i = (i + 1) & mask) {
            DecisionScope at = owners[i];
            if (at == null) {
                return UNKNOWN;
            }
            if (keys[i] == shape && at == scope) {
                return decisions[i];
            }
        }
    }

    /** Caches the decision {@link RuleSet#match} made for a shape and scope. */
    void remember(RuleSet set, long shape, DecisionScope scope, int decision) {
        if (version != set.version()) {
            return; // a newer set came meanwhile: its lookups decide again
        }
        if (size >= MAX_ENTRIES) {
            clear();
            version = set.version();
        }
        if ((size + 1) * 2 > keys.length) {
            grow();
        }
        put(shape, scope, decision);
        size++;
    }

    private void put(long shape, DecisionScope scope, int decision) {
        int mask = keys.length - 1;
        int i = index(shape, scope, mask);
        while (owners[i] != null) {
            i = (i + 1) & mask;
        }
        keys[i] = shape;
        owners[i] = scope;
        decisions[i] = decision;
    }

    private void grow() {
        long[] oldKeys = keys;
        DecisionScope[] oldOwners = owners;
        int[] oldDecisions = decisions;
        keys = new long[oldKeys.length * 2];
        owners = new DecisionScope[oldKeys.length * 2];
        decisions = new int[oldKeys.length * 2];
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldOwners[i] != null) {
                put(oldKeys[i], oldOwners[i], oldDecisions[i]);
            }
        }
    }

    private void clear() {
        keys = new long[64];
        owners = new DecisionScope[64];
        decisions = new int[64];
        size = 0;
        scopes.clear();
    }

    private static int index(long shape, DecisionScope scope, int mask) {
        long h = (shape ^ System.identityHashCode(scope)) * 0x9e3779b97f4a7c15L;
        return (int) (h >>> 40) & mask;
    }

    /** Entries now; on the loop. */
    int size() {
        return size;
    }
}
