package io.sluice.readwrite;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.StringJoiner;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The classifier never throws, whatever the bytes, and reads bytes as it reads text. Properties over seeded random
 * inputs (decision 120): each seed below is one run of a property, its cases drawn from a {@link SplittableRandom}
 * of that seed, so a failure names the seed, the case and the input, and the same seed replays it.
 */
class StatementClassifierPropertyTest {

    private static final List<String> SQL_PIECES = List.of("SELECT", "select", "INSERT", "FOR", "UPDATE", "SHARE",
            "LOCK", "IN", "MODE", "INTO", "@a", "@@autocommit", "=", "0", "1", "(", ")", ";", ",", "'", "\"", "`",
            "/*", "*/", "/*!", "--", "#", "\n", " ", "sluice:", "primary", "replica", "GET_LOCK", "NEXT", "VALUE",
            "WITH", "SET", "STATEMENT", "START", "TRANSACTION", "READ", "ONLY", "COMMIT", "AND", "CHAIN", "SHOW",
            "WARNINGS", "LAST_INSERT_ID", "x", "t", ".", "ö", "\\");

    /** Bytes a lexer treats specially (quotes, comment openers, escapes, line ends), to reach its deeper states. */
    private static final byte[] LEXER_BYTES = "'\"`/*!-#\\\n\r\t ;()sSeElLcCtT0@M".getBytes(StandardCharsets.UTF_8);

    /** Ten seeds; with the cases per seed below, as many tries as the jqwik properties these replace ran. */
    static LongStream seeds() {
        return LongStream.rangeClosed(1, 10);
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void neverThrowsOnArbitraryBytes(long seed) {
        forEachCase(seed, 300, StatementClassifierPropertyTest::bytes, HexFormat.of()::formatHex, bytes -> {
            int statementClass = StatementClassifier.classify(bytes);
            assertThat(StatementClassifier.reason(statementClass)).isNotNull();
            assertThat(StatementClassifier.transaction(statementClass)).isNotNull();
            ByteBuf buf = Unpooled.wrappedBuffer(bytes);
            try {
                assertThat(StatementClassifier.classify(buf, 0, bytes.length)).isEqualTo(statementClass);
            } finally {
                buf.release();
            }
        });
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void neverThrowsOnSqlLikeText(long seed) {
        forEachSqlLike(seed, 300, sql -> {
            int statementClass = StatementClassifier.classify(sql);
            assertThat(StatementClassifier.classify(sql.getBytes(StandardCharsets.UTF_8))).isEqualTo(statementClass);
        });
    }

    /** Anything behind a primary hint goes to the primary; a write behind a replica hint still does. */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void aPrimaryHintAlwaysWins(long seed) {
        forEachSqlLike(seed, 100, sql -> {
            String hinted = "/* sluice: primary */ " + sql.replace("*/", "");
            assertThat(StatementClassifier.route(StatementClassifier.classify(hinted))).isEqualTo(Route.PRIMARY);
        });
    }

    /** Text that only differs in the case of its letters is classified alike (keywords have no case). */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void caseDoesNotMatter(long seed) {
        forEachSqlLike(seed, 100, sql -> assertThat(StatementClassifier.classify(sql.toUpperCase(Locale.ROOT)))
                .isEqualTo(StatementClassifier.classify(sql.toLowerCase(Locale.ROOT))));
    }

    private static void forEachSqlLike(long seed, int cases, Consumer<String> property) {
        forEachCase(seed, cases, StatementClassifierPropertyTest::sqlLike, StatementClassifierPropertyTest::quoted,
                property);
    }

    /**
     * Checks the property on {@code cases} inputs drawn from one random of {@code seed}. Any failure, an exception
     * included, is reported with the seed, the case number and the input.
     */
    private static <T> void forEachCase(long seed, int cases, Function<SplittableRandom, T> generator,
            Function<T, String> describe, Consumer<T> property) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = 0; i < cases; i++) {
            T input = generator.apply(random);
            try {
                property.accept(input);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError("seed " + seed + ", case " + i + ", input " + describe.apply(input)
                        + ": " + e.getMessage(), e);
            }
        }
    }

    /**
     * Any bytes, up to 255 of them (an eighth of them empty or nearly): half uniform, half mostly from the bytes the
     * lexer treats specially, with a byte of any value now and then.
     */
    private static byte[] bytes(SplittableRandom random) {
        byte[] bytes = new byte[random.nextInt(8) == 0 ? random.nextInt(3) : random.nextInt(256)];
        boolean lexerMix = random.nextBoolean();
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = lexerMix && random.nextInt(8) != 0
                    ? LEXER_BYTES[random.nextInt(LEXER_BYTES.length)]
                    : (byte) random.nextInt(256);
        }
        return bytes;
    }

    /** Up to 25 SQL-ish pieces (keywords, comment markers, quotes, hints, a non-ASCII letter) joined by spaces. */
    private static String sqlLike(SplittableRandom random) {
        int pieces = random.nextInt(26);
        StringJoiner sql = new StringJoiner(" ");
        for (int i = 0; i < pieces; i++) {
            sql.add(SQL_PIECES.get(random.nextInt(SQL_PIECES.size())));
        }
        return sql.toString();
    }

    private static String quoted(String sql) {
        return "\"" + sql.replace("\n", "\\n") + "\"";
    }
}
