package io.sluice.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The one JSON codec: what it writes, what it reads back, and what it refuses. */
class JsonTest {

    @Test
    void writesCompactAndPrettyText() {
        Map<String, Object> value = new LinkedHashMap<>();
        value.put("state", "stopped");
        value.put("records", 12L);
        value.put("ratio", 0.5);
        value.put("compress", true);
        value.put("stopReason", null);
        value.put("files", List.of(1, 2));
        value.put("empty", Map.of());
        value.put("none", List.of());

        assertThat(Json.write(value)).isEqualTo("{\"state\":\"stopped\",\"records\":12,\"ratio\":0.5,\"compress\":true,"
                + "\"stopReason\":null,\"files\":[1,2],\"empty\":{},\"none\":[]}");
        assertThat(Json.writePretty(value)).isEqualTo("""
                {
                  "state": "stopped",
                  "records": 12,
                  "ratio": 0.5,
                  "compress": true,
                  "stopReason": null,
                  "files": [
                    1,
                    2
                  ],
                  "empty": {},
                  "none": []
                }
                """);
    }

    @Test
    void theStreamingWriterPlacesTheCommas() {
        Json.Writer json = Json.writer().beginObject().member("status", "serving").member("clients", 3)
                .member("draining", false).name("lastCheck").value((String) null).name("latencyMillis").value(1.25)
                .name("changes").beginArray().value("a").value("b").endArray()
                .name("pool").beginObject().member("open", 1).endObject()
                .name("byState").beginObject().endObject();

        assertThat(json.endObject()).hasToString("{\"status\":\"serving\",\"clients\":3,\"draining\":false,"
                + "\"lastCheck\":null,\"latencyMillis\":1.25,\"changes\":[\"a\",\"b\"],\"pool\":{\"open\":1},"
                + "\"byState\":{}}");
        assertThat(Json.writer().beginArray().beginObject().endObject().beginObject().endObject().endArray())
                .hasToString("[{},{}]");
    }

    @Test
    void escapesWhatAStringCannotHoldAsIs() {
        String s = "q\" b\\ / n\n r\r t\t b\b f\f nul\u0000 us\u001f ls\u2028 ps\u2029 é €";

        String written = Json.write(s);

        assertThat(written).isEqualTo("\"q\\\" b\\\\ / n\\n r\\r t\\t b\\u0008 f\\u000c nul\\u0000 us\\u001f"
                + " ls\\u2028 ps\\u2029 é €\"");
        assertThat(Json.parse(written)).isEqualTo(s);
        assertThat(Json.parse("\"\\/\\b\\f\\u00e9\\u20AC\"")).isEqualTo("/\b\fé€");
    }

    @Test
    void surrogatePairsPassAsIsAndLoneSurrogatesAreEscaped() {
        String emoji = "\uD83D\uDE00"; // U+1F600, one character in two chars

        assertThat(Json.write(emoji)).isEqualTo("\"" + emoji + "\"");
        assertThat(Json.parse("\"\\ud83d\\ude00\"")).isEqualTo(emoji);
        assertThat(Json.parse("\"" + emoji + "\"")).isEqualTo(emoji);
        // Unpaired, a surrogate has no UTF-8 form: written as an escape, it still reads back as the same char.
        String lone = "a\uD83Db\uDE00";
        assertThat(Json.write(lone)).isEqualTo("\"a\\ud83db\\ude00\"");
        assertThat(Json.parse(Json.write(lone))).isEqualTo(lone);
    }

    @Test
    void readsNumbersAsLongsOrDoubles() {
        assertThat(Json.parse("0")).isEqualTo(0L);
        assertThat(Json.parse("-0")).isEqualTo(0L);
        assertThat(Json.parse("42")).isEqualTo(42L);
        assertThat(Json.parse(String.valueOf(Long.MAX_VALUE))).isEqualTo(Long.MAX_VALUE);
        assertThat(Json.parse(String.valueOf(Long.MIN_VALUE))).isEqualTo(Long.MIN_VALUE);
        assertThat(Json.parse("1.5")).isEqualTo(1.5);
        assertThat(Json.parse("-0.25e2")).isEqualTo(-25.0);
        assertThat(Json.parse("1E+3")).isEqualTo(1000.0);
        assertThat(Json.parse("1e-3")).isEqualTo(0.001);
        assertThat(Json.parse("4.9e-324")).isEqualTo(Double.MIN_VALUE);
    }

    @Test
    void writesNumbersInTheirShortestExactForm() {
        assertThat(Json.write(List.of(1, -7L, 0.1, 1e21, 1.0e-7, -0.0, 2.5f, new BigDecimal("1.10"))))
                .isEqualTo("[1,-7,0.1,1.0E21,1.0E-7,-0.0,2.5,1.10]");
        assertThat(Json.write(Arrays.asList(Double.NaN, Double.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY)))
                .as("JSON has no NaN or infinity").isEqualTo("[null,null,null]");
        assertThat(Json.writer().beginArray().value(Double.NaN).value(Long.MIN_VALUE).endArray())
                .hasToString("[null,-9223372036854775808]");
        for (double d : new double[] {0.1, 1e21, 1.0e-7, -123.456, Double.MAX_VALUE, Double.MIN_VALUE}) {
            assertThat(Json.parse(Json.write(d))).isEqualTo(d);
        }
    }

    @Test
    void writesOtherValuesByTheirText() {
        assertThat(Json.write(Map.of(7, new StringBuilder("sb")))).isEqualTo("{\"7\":\"sb\"}");
        assertThat(Json.write(java.time.Duration.ofSeconds(90))).isEqualTo("\"PT1M30S\"");
    }

    @Test
    void nestingRoundTripsUpToItsLimit() {
        String deep = "[".repeat(256) + "]".repeat(256);
        Object value = Json.parse(deep);
        assertThat(Json.write(value)).isEqualTo(deep);

        assertThatThrownBy(() -> Json.parse("[".repeat(257) + "]".repeat(257)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("JSON at offset 256: nested deeper than 256 levels");
        assertThatThrownBy(() -> Json.parse("{\"a\":".repeat(300) + "1" + "}".repeat(300)))
                .hasMessageContaining("nested deeper than 256 levels");
    }

    @Test
    void keepsMembersInDocumentOrder() {
        Map<String, Object> map = Json.parseObject(" {\"z\":1, \"a\" : [true,false,null], \"m\":{\"k\":\"v\"}}\r\n\t");

        assertThat(map.keySet()).containsExactly("z", "a", "m");
        assertThat(map.get("a")).isEqualTo(Arrays.asList(true, false, null));
        assertThat(map.get("m")).isEqualTo(Map.of("k", "v"));
    }

    /** Every value the parser returns is written back to text that parses to the same value. */
    @Test
    void randomValuesRoundTrip() {
        Random random = new Random(20261126);
        for (int i = 0; i < 5_000; i++) {
            Object value = randomValue(random, 0);

            assertThat(Json.parse(Json.write(value))).as("compact, value %d", i).isEqualTo(value);
            assertThat(Json.parse(Json.writePretty(value))).as("pretty, value %d", i).isEqualTo(value);
        }
    }

    private static Object randomValue(Random random, int depth) {
        switch (random.nextInt(depth < 4 ? 8 : 6)) {
            case 0:
                return null;
            case 1:
                return random.nextBoolean();
            case 2:
                return random.nextLong() >> random.nextInt(64);
            case 3:
                return random.nextDouble() * Math.pow(10, random.nextInt(600) - 300) * (random.nextBoolean() ? 1 : -1);
            case 4:
            case 5:
                return randomString(random);
            case 6: {
                Map<String, Object> map = new LinkedHashMap<>();
                for (int n = random.nextInt(5); n > 0; n--) {
                    map.put(randomString(random), randomValue(random, depth + 1));
                }
                return map;
            }
            default: {
                List<Object> list = new ArrayList<>();
                for (int n = random.nextInt(5); n > 0; n--) {
                    list.add(randomValue(random, depth + 1));
                }
                return list;
            }
        }
    }

    /** Any chars at all: ASCII, controls, the escapes, the BMP, pairs and lone surrogates. */
    private static String randomString(Random random) {
        StringBuilder s = new StringBuilder();
        for (int n = random.nextInt(12); n > 0; n--) {
            switch (random.nextInt(4)) {
                case 0 -> s.append((char) (0x20 + random.nextInt(0x5f)));
                case 1 -> s.append("\"\\/\b\f\n\r\t\u0000\u001f\u007f\u2028\u2029".charAt(random.nextInt(13)));
                case 2 -> s.appendCodePoint(0x10000 + random.nextInt(0x100000));
                default -> s.append((char) random.nextInt(0x10000));
            }
        }
        return s.toString();
    }

    @ParameterizedTest(name = "[{index}] {1}")
    @CsvSource(delimiter = '|', quoteCharacter = '`', value = {
        "``                      | JSON at offset 0: unexpected end of input",
        "`   `                   | JSON at offset 3: unexpected end of input",
        "`{`                     | JSON at offset 1: expected a quoted key",
        "`{\"a\"}`               | JSON at offset 4: expected ':'",
        "`{\"a\":1,}`            | JSON at offset 7: expected a quoted key",
        "`{\"a\":1 \"b\":2}`     | JSON at offset 7: expected ',' or '}'",
        "`{\"a\":1,\"a\":2}`     | JSON at offset 7: duplicate key \"a\"",
        "`{a:1}`                 | JSON at offset 1: expected a quoted key",
        "`[1,]`                  | JSON at offset 3: unexpected character ']'",
        "`[1 2]`                 | JSON at offset 3: expected ',' or ']'",
        "`[1`                    | JSON at offset 2: unexpected end of input",
        "`\"abc`                 | JSON at offset 4: unexpected end of input",
        "`\"a\\x\"`              | JSON at offset 2: bad escape '\\x'",
        "`\"\\u12zz\"`           | JSON at offset 3: bad \\u escape (expected: four hex digits)",
        "`\"\\u+123\"`           | JSON at offset 3: bad \\u escape (expected: four hex digits)",
        "`\"\\u12`               | JSON at offset 3: truncated \\u escape",
        "`01`                    | JSON at offset 0: bad number 01 (a leading zero)",
        "`-`                     | JSON at offset 0: bad number - (no digits)",
        "`1.`                    | JSON at offset 0: bad number 1. (no digits after the decimal point)",
        "`1e`                    | JSON at offset 0: bad number 1e (no digits in the exponent)",
        "`1.5e+`                 | JSON at offset 0: bad number 1.5e+ (no digits in the exponent)",
        "`99999999999999999999`  | JSON at offset 0: bad number 99999999999999999999 (outside the 64-bit integer range)",
        "`1e400`                 | JSON at offset 0: bad number 1e400 (outside the range of a double)",
        "`.5`                    | JSON at offset 0: unexpected character '.'",
        "`+1`                    | JSON at offset 0: unexpected character '+'",
        "`NaN`                   | JSON at offset 0: unexpected character 'N'",
        "`tru`                   | JSON at offset 0: unexpected text (expected: true)",
        "`nul`                   | JSON at offset 0: unexpected text (expected: null)",
        "`{} {}`                 | JSON at offset 3: unexpected text after the value",
        "`'a'`                   | JSON at offset 0: unexpected character '''",
    })
    void refusesMalformedInputNamingWhereAndWhy(String text, String message) {
        assertThatThrownBy(() -> Json.parse(text)).isInstanceOf(IllegalArgumentException.class).hasMessage(message);
    }

    @Test
    void refusesWhatOnlyLaxReadersTake() {
        assertThatThrownBy(() -> Json.parse("\"a\tb\"")).hasMessage(
                "JSON at offset 2: control character U+0009 in a string (expected: escaped)");
        assertThatThrownBy(() -> Json.parse("\u00a01")).as("no-break space is not JSON white space")
                .hasMessage("JSON at offset 0: unexpected character '\u00a0'");
        assertThatThrownBy(() -> Json.parseObject("[1]")).hasMessage("JSON: expected an object");
    }
}
