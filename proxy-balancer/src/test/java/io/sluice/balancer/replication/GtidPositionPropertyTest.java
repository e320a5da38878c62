package io.sluice.balancer.replication;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.SplittableRandom;
import java.util.StringJoiner;
import java.util.function.Function;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * "At or past" is a partial order, the union is its least upper bound, and the text round-trips. Properties over
 * seeded random positions (decision 120): each seed is one run, its cases drawn from a {@link SplittableRandom} of
 * that seed, so a failure names the seed, the case and the three positions, and the same seed replays it.
 */
class GtidPositionPropertyTest {

    private static final List<String> UUIDS = List.of("3e11fa47-71ca-11e1-9e33-c80aa9429562",
            "5d2f1c3e-0000-11e1-9e33-c80aa9429562", "00000000-0000-0000-0000-000000000001");
    /** Cases per seed: ten seeds of 100, the 1,000 tries each jqwik property ran. */
    private static final int CASES = 100;

    static LongStream seeds() {
        return LongStream.rangeClosed(1, 10);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void mariaDbOrder(long seed) {
        forEachCase(seed, random -> MariaDbGtidPosition.parse(mariaDbText(random)));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void mySqlOrder(long seed) {
        forEachCase(seed, random -> MySqlGtidSet.parse(mySqlText(random)));
    }

    /** Draws three positions per case and checks the order on them, and that the first one's text round-trips. */
    private static void forEachCase(long seed, Function<SplittableRandom, GtidPosition> generator) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < CASES; i++) {
            GtidPosition a = generator.apply(random);
            GtidPosition b = generator.apply(random);
            GtidPosition c = generator.apply(random);
            try {
                checkOrder(a, b, c);
                assertThat(parseLike(a, a.toString())).isEqualTo(a);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("seed " + seed + ", case " + i + ", a=\"" + a + "\" b=\"" + b + "\" c=\""
                        + c + "\": " + e.getMessage(), e);
            }
        }
    }

    private static GtidPosition parseLike(GtidPosition position, String text) {
        return position instanceof MariaDbGtidPosition ? MariaDbGtidPosition.parse(text) : MySqlGtidSet.parse(text);
    }

    private static void checkOrder(GtidPosition a, GtidPosition b, GtidPosition c) {
        assertThat(a.isAtOrPast(a)).isTrue();
        GtidPosition union = a.union(b);
        assertThat(union.isAtOrPast(a)).isTrue();
        assertThat(union.isAtOrPast(b)).isTrue();
        assertThat(a.isAtOrPast(b)).isEqualTo(a.transactionsBehind(b) == 0);
        if (a.isAtOrPast(b) && b.isAtOrPast(c)) {
            assertThat(a.isAtOrPast(c)).isTrue();
        }
        if (c.isAtOrPast(a) && c.isAtOrPast(b)) {
            assertThat(c.isAtOrPast(union)).isTrue();
        }
        assertThat(a.isAtOrPast(a.union(b).union(c))).isEqualTo(a.isAtOrPast(b) && a.isAtOrPast(c));
    }

    /** Up to 4 GTIDs "domain-server-sequence", domains 0-3, servers 1-3, sequences 1-30 (few, so they collide). */
    private static String mariaDbText(SplittableRandom random) {
        StringJoiner text = new StringJoiner(",");
        for (int n = random.nextInt(5); n > 0; n--) {
            text.add(random.nextLong(0, 4) + "-" + random.nextLong(1, 4) + "-" + random.nextLong(1, 31));
        }
        return text.toString();
    }

    /** Up to 5 members "uuid:start" or "uuid:start-end" over three server UUIDs, starts 1-20, lengths 0-5. */
    private static String mySqlText(SplittableRandom random) {
        StringJoiner text = new StringJoiner(",");
        for (int n = random.nextInt(6); n > 0; n--) {
            long start = random.nextLong(1, 21);
            long length = random.nextLong(0, 6);
            String uuid = UUIDS.get(random.nextInt(UUIDS.size()));
            text.add(uuid + ":" + start + (length == 0 ? "" : "-" + (start + length)));
        }
        return text.toString();
    }
}
