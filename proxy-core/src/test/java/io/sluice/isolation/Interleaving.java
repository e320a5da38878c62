package io.sluice.isolation;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

/**
 * Random interleavings of steps, the same for the same seed: the sessions take turns at random to make state, look at
 * state (their own or another's: the probe is the same statement), end it, or reconnect. Probes and ends mostly
 * pick kinds made earlier in the interleaving, so that most of them look at something that is there.
 */
final class Interleaving {

    private Interleaving() {
    }

    /**
     * @param kinds the kinds to draw from, each with at least one way in {@code schema}
     */
    static List<Step> generate(long seed, int sessions, int length, IsolationSchema schema, List<StateKind> kinds) {
        Random random = new Random(seed);
        List<Step> steps = new ArrayList<>(length);
        Set<StateKind> made = EnumSet.noneOf(StateKind.class);
        for (int i = 0; i < length; i++) {
            int session = random.nextInt(sessions);
            int n = i + 1;
            int dice = random.nextInt(100);
            if (dice < 35 || made.isEmpty()) {
                StateKind kind = kinds.get(random.nextInt(kinds.size()));
                List<Way> ways = schema.isolatedWays(kind);
                steps.add(Step.make(session, kind, ways.get(random.nextInt(ways.size())), n));
                made.add(kind);
            } else if (dice < 82) {
                StateKind kind = pick(random, made, kinds);
                steps.add(new Step(session, Step.Action.PROBE, kind, null, random.nextInt(kind.probes().size()), n));
            } else if (dice < 97) {
                steps.add(new Step(session, Step.Action.END, pick(random, made, kinds), null, 0, n));
            } else {
                steps.add(new Step(session, Step.Action.RECONNECT, null, null, 0, n));
            }
        }
        return steps;
    }

    /**
     * The fixed scenario of one kind made one way: session 0 makes it; session 1 (the other proxy user) runs every
     * probe; session 0 runs every probe; session 0 ends its session (reconnects) without ending the state; then
     * session 1 and the new session 0 run every probe again. Isolated, session 1 never sees the state, session 0 sees
     * it until it reconnects, and nobody sees it after.
     */
    static List<Step> scenario(StateKind kind, Way way) {
        List<Step> steps = new ArrayList<>();
        steps.add(Step.make(0, kind, way, 1));
        return probedAroundReconnect(steps, kind);
    }

    /**
     * The same state made again by the same statement text, which a driver that caches server-side prepared
     * statements sends as an execute only: session 0 makes it, ends it and makes it again ({@code endedBetween}), or
     * makes it twice and ends it once (a named lock is then still held: MariaDB counts them); then every probe as in
     * {@link #scenario}. The two makes carry the same number, so that their texts are the same.
     */
    static List<Step> madeAgain(StateKind kind, Way way, boolean endedBetween) {
        List<Step> steps = new ArrayList<>();
        steps.add(Step.make(0, kind, way, 1));
        if (endedBetween) {
            steps.add(new Step(0, Step.Action.END, kind, null, 0, 2));
            steps.add(Step.make(0, kind, way, 1));
        } else {
            steps.add(Step.make(0, kind, way, 1));
            steps.add(new Step(0, Step.Action.END, kind, null, 0, 3));
        }
        return probedAroundReconnect(steps, kind);
    }

    /** Session 1, then 0, run every probe; session 0 reconnects; both run every probe again. */
    private static List<Step> probedAroundReconnect(List<Step> steps, StateKind kind) {
        probeAll(steps, 1, kind);
        probeAll(steps, 0, kind);
        steps.add(new Step(0, Step.Action.RECONNECT, null, null, 0, steps.size() + 1));
        probeAll(steps, 1, kind);
        probeAll(steps, 0, kind);
        return steps;
    }

    private static void probeAll(List<Step> steps, int session, StateKind kind) {
        for (int p = 0; p < kind.probes().size(); p++) {
            steps.add(new Step(session, Step.Action.PROBE, kind, null, p, steps.size() + 1));
        }
    }

    private static StateKind pick(Random random, Set<StateKind> made, List<StateKind> kinds) {
        if (random.nextInt(10) < 8) {
            List<StateKind> list = new ArrayList<>(made);
            return list.get(random.nextInt(list.size()));
        }
        return kinds.get(random.nextInt(kinds.size()));
    }
}
